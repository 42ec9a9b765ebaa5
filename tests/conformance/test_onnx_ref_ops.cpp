// SPDX-License-Identifier: Apache-2.0
// ONNX conformance of the reference ops on Debian's libonnx-testdata: the node tests of Conv,
// MaxPool, AveragePool, GlobalAveragePool, Relu, Sigmoid, Tanh, Softmax, Gemm and Add, and the
// pytorch-converted Conv1d/2d/3d, AvgPool and MaxPool cases. Each case maps the node's
// attributes onto the op's descriptor (ONNX dilation t is t - 1 here; auto_pad and ceil_mode
// become explicit pads), runs in a plain and a blocked layout, and is compared with the stored
// output under the op's tolerance (testing/tolerances.hpp). Every case is listed as run, skipped
// (with the reason: an attribute or type the ops do not support) or failed; zero may fail.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <optional>

#include <gtest/gtest.h>

#include "conformance/onnx_data.hpp"
#include "common/ref_util.hpp"

using namespace blockdnn;
using namespace ref_test;
using onnx_data::array_t;
using onnx_data::case_t;
using onnx_data::node_t;

namespace {

// One output of a run: which layouts, and the values in canonical order.
struct result_t {
    std::string layouts;
    std::vector<float> values;
};

// Fills `out` and returns "" when the case ran, or returns why it was skipped.
using runner_t = std::function<std::string(const case_t &, const node_t &, std::vector<result_t> &out)>;

dims_t to_dims(const std::vector<std::int64_t> &v) { return dims_t(v.begin(), v.end()); }

// The input of `node` at position k, seen through the shape-only nodes (Unsqueeze) that
// pytorch-converted graphs put around 1-D pooling: the data is the same, the dims change.
std::optional<array_t> input_of(const case_t &c, const node_t &node, std::size_t k) {
    if (k >= node.inputs.size() || node.inputs[k].empty()) return std::nullopt;
    const std::string &name = node.inputs[k];
    if (c.has_value(name)) return c.value(name);
    for (const node_t &u : c.nodes)
        if (u.op_type == "Unsqueeze" && !u.outputs.empty() && u.outputs[0] == name) {
            array_t a = c.value(u.inputs.at(0));
            std::vector<std::int64_t> axes = u.get_ints("axes");
            std::sort(axes.begin(), axes.end());
            for (std::int64_t ax : axes) a.dims.insert(a.dims.begin() + ax, 1);
            return a;
        }
    throw std::runtime_error("no value for input '" + name + "' of " + node.op_type);
}

// The one node of `ops` in the graph, if every other node only reshapes (Unsqueeze/Squeeze).
const node_t *single_op(const case_t &c, const std::vector<std::string> &ops) {
    const node_t *main = nullptr;
    for (const node_t &n : c.nodes) {
        if (std::find(ops.begin(), ops.end(), n.op_type) != ops.end()) {
            if (main) return nullptr;
            main = &n;
        } else if (n.op_type != "Unsqueeze" && n.op_type != "Squeeze") {
            return nullptr;
        }
    }
    return main;
}

format_tag plain_tag(std::size_t rank) {
    using ft = format_tag;
    switch (rank) {
    case 1: return ft::x;
    case 2: return ft::nc;
    case 3: return ft::ncw;
    case 4: return ft::nchw;
    case 5: return ft::ncdhw;
    default: return ft::undef;
    }
}

// ---- windows: kernel_shape, strides, dilations, pads, auto_pad, ceil_mode ----------------------
struct window_t {
    int nsp = 0;
    dim_t k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, dl[3] = {0, 0, 0}, p[3] = {0, 0, 0}, pr[3] = {0, 0, 0}, o[3] = {1, 1, 1};
    bool past_declared_pads = false; // ceil_mode made an end pad larger than the attribute's
};

// Fills w for spatial input sizes `in` (nsp of them). Returns a skip reason or "".
std::string make_window(
        const node_t &n, const std::vector<std::int64_t> &in, std::vector<std::int64_t> kernel, window_t &w) {
    const std::size_t nsp = in.size();
    w.nsp = static_cast<int>(nsp);
    const auto strides = n.get_ints("strides", std::vector<std::int64_t>(nsp, 1));
    const auto dil = n.get_ints("dilations", std::vector<std::int64_t>(nsp, 1));
    auto pads = n.get_ints("pads", std::vector<std::int64_t>(2 * nsp, 0));
    const std::string auto_pad = n.get_s("auto_pad", "NOTSET");
    const bool ceil = n.get_i("ceil_mode", 0) != 0;
    if (kernel.size() != nsp || strides.size() != nsp || dil.size() != nsp || pads.size() != 2 * nsp)
        return "kernel_shape/strides/dilations/pads do not match the input rank";
    for (std::size_t x = 0; x < nsp; ++x) {
        const std::size_t t = 3 - nsp + x; // into the (d, h, w) slots
        w.k[t] = kernel[x];
        w.s[t] = strides[x];
        w.dl[t] = dilation_from_torch(dil[x]);
        const dim_t ext = (w.k[t] - 1) * (w.dl[t] + 1) + 1, i = in[x];
        if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
            // ONNX: o = ceil(i / s); the total pad is split, the odd one at the end (UPPER) or begin.
            w.o[t] = (i + w.s[t] - 1) / w.s[t];
            const dim_t total = std::max<dim_t>(0, (w.o[t] - 1) * w.s[t] + ext - i);
            w.p[t] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
            w.pr[t] = total - w.p[t];
            continue;
        }
        if (auto_pad == "VALID") pads[x] = pads[x + nsp] = 0;
        else if (auto_pad != "NOTSET") return "auto_pad = " + auto_pad;
        w.p[t] = pads[x];
        const dim_t span = i + pads[x] + pads[x + nsp] - ext;
        if (span < 0) return "kernel larger than the padded input";
        w.o[t] = (ceil ? (span + w.s[t] - 1) / w.s[t] : span / w.s[t]) + 1;
        // The smallest end pad giving o (more than declared in ceil mode, maybe less in floor mode).
        w.pr[t] = (w.o[t] - 1) * w.s[t] + ext - i - w.p[t];
        if (w.pr[t] > pads[x + nsp]) w.past_declared_pads = true;
    }
    return "";
}

template <typename desc_t>
void set_window(desc_t &d, const window_t &w, const std::vector<std::int64_t> &in) {
    dim_t i[3] = {1, 1, 1};
    for (int x = 0; x < w.nsp; ++x) i[3 - w.nsp + x] = in[static_cast<std::size_t>(x)];
    d.id = i[0], d.ih = i[1], d.iw = i[2];
    d.kd = w.k[0], d.kh = w.k[1], d.kw = w.k[2];
    d.sd = w.s[0], d.sh = w.s[1], d.sw = w.s[2];
    d.dd = w.dl[0], d.dh = w.dl[1], d.dw = w.dl[2];
    d.pd = w.p[0], d.ph = w.p[1], d.pw = w.p[2];
    d.pd_r = w.pr[0], d.ph_r = w.pr[1], d.pw_r = w.pr[2];
    d.od = w.o[0], d.oh = w.o[1], d.ow = w.o[2];
}

format_tag blocked16(int ndims) { return act_tags(ndims)[3]; }

// ---- the runners ----------------------------------------------------------------------------------
std::string run_conv(const case_t &c, const node_t &n, std::vector<result_t> &out) {
    const auto x = input_of(c, n, 0), wt = input_of(c, n, 1), b = input_of(c, n, 2);
    const std::size_t rank = x->dims.size();
    if (rank < 3 || rank > 5) return "input rank " + std::to_string(rank);
    const std::vector<std::int64_t> in(x->dims.begin() + 2, x->dims.end());
    window_t w;
    const std::string why = make_window(n, in, n.get_ints("kernel_shape", {wt->dims.begin() + 2, wt->dims.end()}), w);
    if (!why.empty()) return why;
    conv_desc d;
    d.ndims = static_cast<int>(rank);
    d.mb = x->dims[0];
    d.ic = x->dims[1];
    d.oc = wt->dims[0];
    d.g = n.get_i("group", 1);
    d.with_bias = b.has_value();
    set_window(d, w, in);
    const int nd = d.ndims;
    for (const auto &[st, wtag, label] : {std::tuple {plain_act(nd), plain_wei(nd, true), "plain"},
                 std::tuple {blocked16(nd), wei_tags(nd, true)[2], "blocked 16c/16i16o"}}) {
        const conv_fwd op(d, st, wtag, st);
        const tensor src = make_tensor(op.src_desc().dims(), st, x->data);
        const tensor wei = make_tensor(op.wei_desc().dims(), wtag, wt->data);
        const tensor bia = b ? make_tensor(op.bia_desc().dims(), format_tag::x, b->data) : tensor();
        const tensor dst(op.dst_desc());
        op.execute(src, wei, bia, dst);
        out.push_back({std::string(label) + " " + d.str(), logical(dst)});
    }
    return "";
}

std::string run_pool(const case_t &c, const node_t &n, std::vector<result_t> &out) {
    if (n.outputs.size() > 1) return "second output Indices (argmax) is not supported";
    const auto x = input_of(c, n, 0);
    const std::size_t rank = x->dims.size();
    if (rank < 3 || rank > 5) return "input rank " + std::to_string(rank);
    const std::vector<std::int64_t> in(x->dims.begin() + 2, x->dims.end());
    window_t w;
    const std::string why = make_window(n, in, n.get_ints("kernel_shape"), w);
    if (!why.empty()) return why;
    pool_desc d;
    const bool include_pad = n.get_i("count_include_pad", 0) != 0;
    d.alg = n.op_type == "MaxPool" ? pool_alg::max
            : include_pad          ? pool_alg::avg_include_pad
                                   : pool_alg::avg_exclude_pad;
    // oneDNN's include-pad divisor is always kd*kh*kw; ONNX leaves out window cells past the
    // declared pads, which only ceil_mode creates.
    if (include_pad && w.past_declared_pads)
        return "count_include_pad with ceil_mode windows past the declared pads (divisor rule differs)";
    d.ndims = static_cast<int>(rank);
    d.mb = x->dims[0];
    d.ic = x->dims[1];
    set_window(d, w, in);
    for (const format_tag t : {plain_act(d.ndims), blocked16(d.ndims)}) {
        const pool_fwd op(d, t, t);
        const tensor src = make_tensor(op.src_desc().dims(), t, x->data), dst(op.dst_desc());
        op.execute(src, dst);
        out.push_back({std::string(to_string(t)) + " " + to_string(d.alg) + " " + d.str(), logical(dst)});
    }
    return "";
}

std::string run_global_pool(const case_t &c, const node_t &n, std::vector<result_t> &out) {
    const auto x = input_of(c, n, 0);
    if (x->dims.size() < 3 || x->dims.size() > 5) return "input rank " + std::to_string(x->dims.size());
    const pool_desc d = pool_desc::global(pool_alg::avg_exclude_pad, to_dims(x->dims));
    for (const format_tag t : {plain_act(d.ndims), blocked16(d.ndims)}) {
        const pool_fwd op(d, t, t);
        const tensor src = make_tensor(op.src_desc().dims(), t, x->data), dst(op.dst_desc());
        op.execute(src, dst);
        out.push_back({std::string(to_string(t)) + " " + d.str(), logical(dst)});
    }
    return "";
}

// Relu, Sigmoid, Tanh are checked on eltwise_ref, the function the eltwise op and every
// post-op chain compute.
std::string run_eltwise(const case_t &c, const node_t &n, std::vector<result_t> &out) {
    const auto x = input_of(c, n, 0);
    const eltwise_alg alg = n.op_type == "Relu" ? eltwise_alg::relu
            : n.op_type == "Sigmoid"            ? eltwise_alg::sigmoid
                                                : eltwise_alg::tanh;
    std::vector<float> y;
    for (float v : x->data) y.push_back(eltwise_ref(alg, v));
    out.push_back({std::string("eltwise_ref ") + to_string(alg), y});
    return "";
}

std::string run_softmax(const case_t &c, const node_t &n, std::vector<result_t> &out) {
    const auto x = input_of(c, n, 0);
    const std::size_t rank = x->dims.size();
    const format_tag t = plain_tag(rank);
    if (t == format_tag::undef) return "input rank " + std::to_string(rank);
    std::int64_t axis = n.get_i("axis", -1); // opset 13: one axis, default the last
    if (axis < 0) axis += static_cast<std::int64_t>(rank);
    std::vector<format_tag> tags = {t};
    if (rank >= 3) tags.push_back(act_tags(static_cast<int>(rank))[1]); // channels-last too
    for (const format_tag tag : tags) {
        const tensor_desc desc(to_dims(x->dims), tag);
        const softmax_fwd op(desc, desc, static_cast<int>(axis));
        const tensor src = make_tensor(desc.dims(), tag, x->data), dst(desc);
        op.execute(src, dst);
        out.push_back({std::string(to_string(tag)) + " axis " + std::to_string(axis), logical(dst)});
    }
    return "";
}

// Gemm: Y = alpha * A * op(B) + beta * C, as an inner product (src A, weights B in oi for
// transB = 1 or io for transB = 0). C is the bias when it is a vector of N with alpha = beta = 1;
// otherwise dst starts as C broadcast to (M, N) and the post-ops are linear(alpha) then
// sum(beta).
std::string run_gemm(const case_t &c, const node_t &n, std::vector<result_t> &out) {
    if (n.get_i("transA", 0) != 0) return "transA = 1: inner product takes src as (mb, ic); no transposed src layout";
    const auto a = input_of(c, n, 0), b = input_of(c, n, 1), cc = input_of(c, n, 2);
    const bool trans_b = n.get_i("transB", 0) != 0;
    const float alpha = n.get_f("alpha", 1.f), beta = n.get_f("beta", 1.f);
    inner_product_desc d;
    d.mb = a->dims[0];
    d.ic = a->dims[1];
    d.oc = trans_b ? b->dims[0] : b->dims[1];
    const bool c_is_vector = cc && cc->numel() == d.oc && (cc->dims.size() == 1 || cc->dims[0] == 1);
    d.with_bias = c_is_vector && alpha == 1.f && beta == 1.f;
    post_ops po;
    std::vector<float> dst0(static_cast<std::size_t>(d.mb * d.oc), 0.f);
    if (!d.with_bias) {
        if (alpha != 1.f) po.append_eltwise(eltwise_alg::linear, alpha, 0.f);
        if (cc) {
            po.append_sum(beta);
            // numpy broadcast of C (rank <= 2) to (M, N)
            const std::size_t r = cc->dims.size();
            const std::int64_t cm = r == 2 ? cc->dims[0] : 1, cn = r >= 1 ? cc->dims[r - 1] : 1;
            for (dim_t m = 0; m < d.mb; ++m)
                for (dim_t k = 0; k < d.oc; ++k)
                    dst0[m * d.oc + k] = cc->data[(cm == 1 ? 0 : m) * cn + (cn == 1 ? 0 : k)];
        }
    }
    const format_tag wt = trans_b ? format_tag::oi : format_tag::io;
    const inner_product_fwd op(d, format_tag::nc, wt, format_tag::nc, po);
    const tensor src = make_tensor(op.src_desc().dims(), format_tag::nc, a->data);
    // B's memory already is (K, N) row-major = io, or (N, K) = oi: wrap it as it is.
    std::vector<float> b_mem = b->data;
    const tensor wei(op.wei_desc(), b_mem.data());
    const tensor bia = d.with_bias ? make_tensor({d.oc}, format_tag::x, cc->data) : tensor();
    const tensor dst = make_tensor(op.dst_desc().dims(), format_tag::nc, dst0);
    op.execute(src, wei, bia, dst);
    out.push_back({std::string("nc/") + to_string(wt) + (d.with_bias ? " bias" : "")
                    + (po.empty() ? "" : " post_ops:" + po.str()),
            logical(dst)});
    return "";
}

// Add with numpy broadcasting: the lower rank gets leading 1s; the operand that broadcasts
// goes second (a + b == b + a exactly).
std::string run_add(const case_t &c, const node_t &n, std::vector<result_t> &out) {
    auto a = *input_of(c, n, 0), b = *input_of(c, n, 1);
    const std::size_t rank = std::max(a.dims.size(), b.dims.size());
    while (a.dims.size() < rank) a.dims.insert(a.dims.begin(), 1);
    while (b.dims.size() < rank) b.dims.insert(b.dims.begin(), 1);
    auto covers = [](const array_t &big, const array_t &small) {
        for (std::size_t k = 0; k < big.dims.size(); ++k)
            if (small.dims[k] != 1 && small.dims[k] != big.dims[k]) return false;
        return true;
    };
    if (!covers(a, b)) {
        if (!covers(b, a)) return "both inputs broadcast";
        std::swap(a, b);
    }
    const format_tag t = plain_tag(rank);
    if (t == format_tag::undef) return "input rank " + std::to_string(rank);
    std::vector<format_tag> tags = {t};
    if (rank >= 3) tags.push_back(act_tags(static_cast<int>(rank))[2]); // nC*8c
    for (const format_tag tag : tags) {
        const tensor_desc d0(to_dims(a.dims), tag), d1(to_dims(b.dims), tag);
        const binary_fwd op(binary_alg::add, d0, d1, d0);
        const tensor s0 = make_tensor(d0.dims(), tag, a.data), s1 = make_tensor(d1.dims(), tag, b.data), dst(d0);
        op.execute(s0, s1, dst);
        out.push_back({std::string(to_string(tag)), logical(dst)});
    }
    return "";
}

// ---- the driver -----------------------------------------------------------------------------------
std::string fmt(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return buf;
}

void conformance(const std::string &title, const std::string &suite, const std::vector<std::string> &ops,
        const std::function<bool(const std::string &)> &wanted, double tolerance, const runner_t &run) {
    onnx_data::report_t rep(title);
    int other_tests = 0;
    for (const std::string &name : onnx_data::find_cases(suite, ops)) {
        if (!wanted(name)) continue;
        case_t c;
        try {
            c = onnx_data::load_case(onnx_data::data_root() + "/" + suite + "/" + name);
        } catch (const std::runtime_error &e) {
            // The loader reads float data; uint8 cases (uint8 arithmetic wraps) are not ours to run.
            rep.skipped(name, std::string("element type the f32 ops do not take: ") + e.what());
            continue;
        }
        const node_t *node = single_op(c, ops);
        if (!node) { // a larger graph that merely contains the op: another op's test
            ++other_tests;
            continue;
        }
        std::vector<result_t> results;
        std::string why;
        try {
            why = run(c, *node, results);
        } catch (const std::exception &e) {
            rep.failed(name, std::string("threw: ") + e.what());
            continue;
        }
        if (!why.empty()) {
            rep.skipped(name, why);
            continue;
        }
        std::string bad, detail;
        const std::vector<float> &want = c.expected.at(0).data;
        double worst = 0;
        for (const result_t &r : results) {
            const double err = rel_err(r.values, want);
            if (!(err <= tolerance)) bad += " [" + r.layouts + ": err " + fmt(err) + "]";
            worst = std::max(worst, err);
            detail += (detail.empty() ? "" : "; ") + r.layouts;
        }
        if (bad.empty()) rep.ran(name + " (" + detail + "; max err " + fmt(worst) + ")");
        else rep.failed(name, "error above " + fmt(tolerance) + ":" + bad);
    }
    rep.print();
    if (other_tests)
        std::printf("(%d larger graphs that merely contain %s are other ops' tests, not listed)\n", other_tests,
                ops.front().c_str());
    EXPECT_EQ(rep.n_failed(), 0) << title;
    EXPECT_GT(rep.run(), 0) << title << ": no case ran (is libonnx-testdata installed?)";
}

bool any_name(const std::string &) { return true; }

std::function<bool(const std::string &)> prefixed(std::vector<std::string> prefixes) {
    return [prefixes](const std::string &n) {
        for (const std::string &p : prefixes)
            if (n.rfind(p, 0) == 0) return true;
        return false;
    };
}

} // namespace

TEST(OnnxConformance, Conv) { conformance("onnx node Conv", "node", {"Conv"}, any_name, tol::conv, run_conv); }

TEST(OnnxConformance, MaxPool) { conformance("onnx node MaxPool", "node", {"MaxPool"}, any_name, tol::pool, run_pool); }

TEST(OnnxConformance, AveragePool) {
    conformance("onnx node AveragePool", "node", {"AveragePool"}, any_name, tol::pool, run_pool);
}

TEST(OnnxConformance, GlobalAveragePool) {
    conformance("onnx node GlobalAveragePool", "node", {"GlobalAveragePool"}, any_name, tol::pool, run_global_pool);
}

TEST(OnnxConformance, ReluSigmoidTanh) {
    for (const char *op : {"Relu", "Sigmoid", "Tanh"})
        conformance(std::string("onnx node ") + op, "node", {op}, any_name, tol::eltwise, run_eltwise);
}

TEST(OnnxConformance, Softmax) {
    conformance("onnx node Softmax", "node", {"Softmax"}, any_name, tol::softmax, run_softmax);
}

TEST(OnnxConformance, Gemm) { conformance("onnx node Gemm", "node", {"Gemm"}, any_name, tol::inner_product, run_gemm); }

TEST(OnnxConformance, Add) { conformance("onnx node Add", "node", {"Add"}, any_name, tol::binary, run_add); }

TEST(OnnxConformance, PytorchConvertedConv) {
    conformance("onnx pytorch-converted Conv1d/2d/3d", "pytorch-converted", {"Conv"},
            prefixed({"test_Conv1d", "test_Conv2d", "test_Conv3d"}), tol::conv, run_conv);
}

TEST(OnnxConformance, PytorchConvertedPool) {
    conformance("onnx pytorch-converted AvgPool/MaxPool", "pytorch-converted", {"AveragePool", "MaxPool"},
            prefixed({"test_AvgPool", "test_MaxPool"}), tol::pool, run_pool);
}
