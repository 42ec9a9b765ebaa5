// SPDX-License-Identifier: Apache-2.0
// PyTorch as oracle for the reference ops: the cases tests/torch/gen_conv_pool.py writes at
// build time (conv with groups, dilation, stride 2 with asymmetric padding, Conv3d, Conv1d,
// depthwise with a multiplier, a fused residual add + relu; max/avg/global pooling in 1-D, 2-D
// and 3-D with padding and ceil_mode; linear; softmax). Each runs in a plain and a blocked
// layout and is compared with PyTorch's float64 result and its float32 result, under the op's
// tolerance (testing/tolerances.hpp).
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "core/prb_parse.hpp"
#include "common/ref_util.hpp"
#include "torch/torch_data.hpp"

using namespace blockdnn;
using namespace ref_test;

namespace {

dims_t to_dims(const std::vector<std::int64_t> &v) { return dims_t(v.begin(), v.end()); }

// desc.txt: "<op> <word> <descriptor>".
std::vector<std::string> read_desc(const std::string &c) {
    std::ifstream f(torch_data::cases_dir() + "/" + c + "/desc.txt");
    if (!f) throw std::runtime_error("torch case " + c + " has no desc.txt");
    std::vector<std::string> words;
    for (std::string w; f >> w;) words.push_back(w);
    if (words.size() != 3) throw std::runtime_error("torch case " + c + ": desc.txt needs 3 words");
    return words;
}

// Checks one of our results against PyTorch's y64 and y32.
void expect_close(const std::string &c, const std::string &what, const std::vector<float> &got, double tolerance) {
    const auto y64 = torch_data::load(c, "y64"), y32 = torch_data::load(c, "y32");
    EXPECT_LE(rel_err(got, y64.data), tolerance) << c << " " << what << " vs PyTorch float64";
    EXPECT_LE(rel_err(got, y32.data), tolerance) << c << " " << what << " vs PyTorch float32";
}

void run_conv_case(const std::string &c, const std::vector<std::string> &w) {
    conv_desc d = blockdnn::parse_conv_desc(w[2]);
    d.with_bias = w[1] == "bias";
    const bool residual = w[0] == "conv_residual_relu";
    const auto x = torch_data::load(c, "x"), wt = torch_data::load(c, "w");
    post_ops po;
    std::vector<float> dst0;
    if (residual) {
        po.append_sum(1.f).append_eltwise(eltwise_alg::relu);
        dst0 = torch_data::load(c, "r").data;
    }
    const int nd = d.ndims;
    for (const auto &[st, wtag] : {std::pair {plain_act(nd), plain_wei(nd, true)},
                 {act_tags(nd)[2], wei_tags(nd, true)[1]}, {act_tags(nd)[1], wei_tags(nd, true).back()}}) {
        const conv_fwd op(d, st, wtag, st, po);
        ASSERT_EQ(op.src_desc().dims(), to_dims(x.dims)) << c;
        const tensor src = make_tensor(op.src_desc().dims(), st, x.data);
        const tensor wei = make_tensor(op.wei_desc().dims(), wtag, wt.data);
        const tensor bia = d.with_bias ? make_tensor({d.oc}, format_tag::x, torch_data::load(c, "b").data) : tensor();
        const tensor dst = residual ? make_tensor(op.dst_desc().dims(), st, dst0) : tensor(op.dst_desc());
        op.execute(src, wei, bia, dst);
        expect_close(c, op.str(), logical(dst), tol::conv);
    }
}

void run_pool_case(const std::string &c, const std::vector<std::string> &w) {
    const pool_alg alg = w[1] == "max"  ? pool_alg::max
            : w[1] == "avg_include_pad" ? pool_alg::avg_include_pad
                                        : pool_alg::avg_exclude_pad;
    const auto x = torch_data::load(c, "x");
    const pool_desc d =
            w[0] == "global_pool" ? pool_desc::global(alg, to_dims(x.dims)) : blockdnn::parse_pool_desc(w[2], alg);
    for (const format_tag t : act_tags(d.ndims)) {
        const pool_fwd op(d, t, t);
        ASSERT_EQ(op.src_desc().dims(), to_dims(x.dims)) << c;
        const tensor src = make_tensor(op.src_desc().dims(), t, x.data), dst(op.dst_desc());
        op.execute(src, dst);
        expect_close(c, op.str(), logical(dst), tol::pool);
    }
}

void run_linear_case(const std::string &c, const std::vector<std::string> &w) {
    inner_product_desc d = blockdnn::parse_ip_desc(w[2]);
    d.with_bias = w[1] == "bias";
    const auto x = torch_data::load(c, "x"), wt = torch_data::load(c, "w"), b = torch_data::load(c, "b");
    const inner_product_fwd op(d, format_tag::nc, format_tag::oi);
    const tensor src = make_tensor(op.src_desc().dims(), format_tag::nc, x.data);
    const tensor wei = make_tensor(op.wei_desc().dims(), format_tag::oi, wt.data);
    const tensor bia = make_tensor({d.oc}, format_tag::x, b.data), dst(op.dst_desc());
    op.execute(src, wei, bia, dst);
    expect_close(c, op.str(), logical(dst), tol::inner_product);
}

void run_softmax_case(const std::string &c, const std::vector<std::string> &) {
    const auto x = torch_data::load(c, "x");
    const tensor_desc desc(to_dims(x.dims), format_tag::nc);
    const softmax_fwd op(desc, desc, 1);
    const tensor src = make_tensor(desc.dims(), format_tag::nc, x.data), dst(desc);
    op.execute(src, dst);
    expect_close(c, op.str(), logical(dst), tol::softmax);
}

class TorchRef : public ::testing::TestWithParam<const char *> {};

} // namespace

TEST_P(TorchRef, MatchesPyTorch) {
    if (torch_data::cases_dir().empty()) GTEST_SKIP() << "PyTorch cases not generated (no python3-torch)";
    const std::string c = GetParam();
    const std::vector<std::string> w = read_desc(c);
    if (w[0] == "conv" || w[0] == "conv_residual_relu") run_conv_case(c, w);
    else if (w[0] == "pool" || w[0] == "global_pool") run_pool_case(c, w);
    else if (w[0] == "linear") run_linear_case(c, w);
    else if (w[0] == "softmax") run_softmax_case(c, w);
    else FAIL() << c << ": unknown op '" << w[0] << "' in desc.txt";
}

INSTANTIATE_TEST_SUITE_P(Cases, TorchRef,
        ::testing::Values("conv2d_groups", "conv2d_dilated", "conv2d_s2_asym_pad", "conv3d", "conv1d_dilated_strided",
                "conv2d_depthwise_x2", "conv2d_residual_relu", "maxpool2d_k3s2p1", "maxpool2d_ceil",
                "maxpool1d_dilated", "maxpool3d", "avgpool2d_include_pad", "avgpool2d_exclude_pad",
                "avgpool2d_exclude_pad_ceil", "avgpool3d_exclude_pad", "global_avgpool", "linear", "softmax"),
        [](const ::testing::TestParamInfo<const char *> &i) { return std::string(i.param); });
