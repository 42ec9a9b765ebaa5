// SPDX-License-Identifier: Apache-2.0
// Batch normalization through the public API: the JIT implementations ("jit:avx512_core",
// "jit:avx2") against the library's reference ("ref", BLOCKDNN_MAX_ISA=scalar) on every layout,
// flag combination and direction, and on oneDNN benchdnn's problem lists shapes_resnet_50,
// shapes_regressions and shapes_ci (batch files in tests/data/bnorm; mb capped at 2, as
// benchdnn's --mb=2), plus dispatch and the backward op's validation.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "common/isa_param.hpp"
#include "bnorm_test_util.hpp"
#include "core/utils.hpp"
#include "common/descriptor_lists.hpp"
#include "testing/batch.hpp"

using namespace blockdnn;
using namespace blockdnn::impl;
using namespace bnorm_test;

namespace {

constexpr bnorm_flags CH = bnorm_flags::use_scale | bnorm_flags::use_shift;

std::string impl_for(isa level) { return level == isa::scalar ? "ref" : cat("jit:", to_string(level)); }

tensor stat_tensor(const std::vector<float> &v) {
    tensor t(tensor_desc({static_cast<dim_t>(v.size())}, format_tag::x));
    std::copy(v.begin(), v.end(), t.f32());
    return t;
}
std::vector<float> stat_vec(const tensor &t) { return {t.f32(), t.f32() + t.desc().nelems()}; }

struct inputs_t {
    tensor src, ddst, scale, shift, mean, var;
};

inputs_t make_inputs(const tensor_desc &d, unsigned seed) {
    const dim_t C = d.dim(1);
    inputs_t in {tensor(d), tensor(d), stat_tensor(random_vec(C, seed + 1, 0.5f, 1.5f)),
            stat_tensor(random_vec(C, seed + 2, -1.f, 1.f)), stat_tensor(random_vec(C, seed + 3, -0.5f, 0.5f)),
            stat_tensor(random_vec(C, seed + 4, 0.1f, 1.5f))};
    fill_random(in.src, seed);
    fill_random(in.ddst, seed + 5);
    return in;
}

struct fwd_out_t {
    tensor dst, mean, var;
};

// Forward at ISA cap `level`; expects the implementation that level should pick.
fwd_out_t run_fwd(isa level, const bnorm_desc &d, const inputs_t &in) {
    set_max_isa(level);
    const bnorm_fwd op(d);
    EXPECT_EQ(op.impl_name(), impl_for(level)) << d.src.str();
    fwd_out_t o {tensor(d.src), tensor(op.stat_desc()), tensor(op.stat_desc())};
    std::fill(o.dst.f32(), o.dst.f32() + d.src.nelems_padded(), 7.f);
    const bool training = d.mode == bnorm_mode::training;
    if (!training) o.mean = in.mean, o.var = in.var;
    op.execute({in.src, o.dst, o.mean, o.var, in.scale, in.shift});
    return o;
}

struct bwd_out_t {
    tensor dsrc, dscale, dshift;
};

bwd_out_t run_bwd(isa level, const bnorm_bwd_desc &d, const inputs_t &in, const tensor &mean, const tensor &var,
        const tensor &dst) {
    set_max_isa(level);
    const bnorm_bwd op(d);
    EXPECT_EQ(op.impl_name(), impl_for(level)) << d.src.str();
    const tensor_desc cd({d.src.dim(1)}, format_tag::x);
    bwd_out_t o {tensor(d.src), tensor(cd), tensor(cd)};
    std::fill(o.dsrc.f32(), o.dsrc.f32() + d.src.nelems_padded(), 7.f);
    op.execute({in.src, in.ddst, o.dsrc, mean, var, in.scale, dst, o.dscale, o.dshift});
    return o;
}

// Forward and backward of one problem at a JIT level, against "ref".
void check_problem(isa level, const tensor_desc &d, float eps, bool relu, unsigned seed) {
    isa_guard g;
    const inputs_t in = make_inputs(d, seed);
    const bnorm_flags fl = relu ? CH | bnorm_flags::fuse_relu : CH;
    const double n = static_cast<double>(d.nelems() / d.dim(1));
    for (bnorm_mode mode : {bnorm_mode::inference, bnorm_mode::training}) {
        const bnorm_desc fd {mode, d, {}, eps, fl};
        const fwd_out_t want = run_fwd(isa::scalar, fd, in);
        {
            SCOPED_TRACE(cat(to_string(level), " ", to_string(mode), " ", d.str(), relu ? " relu" : ""));
            const fwd_out_t got = run_fwd(level, fd, in);
            expect_near(d, got.dst.f32(), want.dst.f32(), 1e-5, 1e-5, "dst");
            expect_zero_padding(got.dst, "dst");
            if (mode == bnorm_mode::training) {
                expect_near(stat_vec(got.mean), stat_vec(want.mean), 1e-6, 1e-6, "mean");
                expect_near(stat_vec(got.var), stat_vec(want.var), 1e-7, 1e-5, "variance");
            }
        }
        // Backward of this forward: the training form through its batch statistics, the
        // global-stats form through the given ones.
        const bool global = mode == bnorm_mode::inference;
        const bnorm_bwd_desc bd {d, {}, {}, eps, fl, global};
        const bwd_out_t bwant = run_bwd(isa::scalar, bd, in, want.mean, want.var, want.dst);
        {
            SCOPED_TRACE(cat(to_string(level), " bwd ", global ? "global " : "", d.str(), relu ? " relu" : ""));
            const bwd_out_t got = run_bwd(level, bd, in, want.mean, want.var, want.dst);
            expect_near(d, got.dsrc.f32(), bwant.dsrc.f32(), 1e-4, 1e-4, "diff_src");
            expect_zero_padding(got.dsrc, "diff_src");
            expect_near(stat_vec(got.dscale), stat_vec(bwant.dscale), 1e-6 * n, 1e-5, "diff_scale");
            expect_near(stat_vec(got.dshift), stat_vec(bwant.dshift), 1e-6 * n, 1e-5, "diff_shift");
        }
    }
}

// Every layout of 0 to 3 spatial dims, on a shape with channel tails; its place in the list
// seeds its data (two seeds: without and with relu).
struct layout_case_t {
    tensor_desc d;
    unsigned index = 0;
};

std::vector<layout_case_t> every_layout() {
    std::vector<layout_case_t> v;
    for (int nd = 2; nd <= 5; ++nd)
        for (format_tag t : layouts_for(nd)) {
            dims_t dims = {3, 37, 5, 3, 4};
            dims.resize(nd);
            v.push_back({tensor_desc(dims, t), static_cast<unsigned>(v.size())});
        }
    return v;
}

std::string layout_name(const layout_case_t &c) { return dims_str(c.d.dims()) + "_" + to_string(c.d.tag()); }

class BnormJitApiLayout : public bdtest::isa_test<bdtest::isa_case_t<layout_case_t>> {};
class BnormJitApiIsa : public bdtest::capped_isa_test<isa> {};
class BnormJitApiThreads : public bdtest::isa_test<isa> {};

} // namespace

TEST_P(BnormJitApiLayout, VsRef) {
    const layout_case_t &c = GetParam().desc;
    for (bool relu : {false, true}) check_problem(level(), c.d, 1e-5f, relu, 1 + 2 * c.index + (relu ? 1 : 0));
}

INSTANTIATE_TEST_SUITE_P(EveryLayout, BnormJitApiLayout,
        ::testing::ValuesIn(bdtest::isa_cases({isa::avx2, isa::avx512_core}, every_layout(), layout_name)),
        bdtest::case_name());

TEST_P(BnormJitApiIsa, Dispatch) {
    const isa level = this->level();
    const tensor_desc d({2, 20, 3, 3}, format_tag::nChw16c);
    EXPECT_EQ(bnorm_fwd({bnorm_mode::training, d, {}, 1e-5f, CH}).impl_name(), impl_for(level));
    EXPECT_EQ(bnorm_bwd({d, {}, {}, 1e-5f, CH, false}).impl_name(), impl_for(level));
    // Different layouts for src and dst: only the reference walks two layouts.
    const tensor_desc plain({2, 20, 3, 3}, format_tag::nchw);
    EXPECT_STREQ(bnorm_fwd({bnorm_mode::training, d, plain, 1e-5f, CH}).impl_name(), "ref");
    EXPECT_STREQ(bnorm_bwd({d, plain, {}, 1e-5f, CH, false}).impl_name(), "ref");
}

// Statistics are combined chunk by chunk in a fixed order, so 1 and 2 threads give the same
// bits; shapes with 1, 3 and many channel units take both threading modes of the driver.
TEST_P(BnormJitApiThreads, OneAndTwoBitIdentical) {
    const isa level = this->level();
    isa_guard g;
    struct reset_t {
        ~reset_t() { reset_num_threads(); }
    } reset;
    for (const dims_t &dims : {dims_t {4, 16, 17, 9}, dims_t {3, 40, 11, 13}, dims_t {2, 200, 5, 7}})
        for (format_tag t : {format_tag::nChw16c, format_tag::nhwc, format_tag::nchw}) {
            const tensor_desc d(dims, t);
            const inputs_t in = make_inputs(d, 9);
            fwd_out_t f[2];
            bwd_out_t b[2];
            for (int nthr : {1, 2}) {
                set_num_threads(nthr);
                f[nthr - 1] = run_fwd(level, {bnorm_mode::training, d, {}, 1e-5f, CH}, in);
                b[nthr - 1] = run_bwd(level, {d, {}, {}, 1e-5f, CH, false}, in, f[0].mean, f[0].var, f[0].dst);
            }
            SCOPED_TRACE(cat(to_string(level), " ", d.str()));
            EXPECT_EQ(0, std::memcmp(f[0].dst.data(), f[1].dst.data(), d.size_bytes()));
            EXPECT_EQ(stat_vec(f[0].mean), stat_vec(f[1].mean));
            EXPECT_EQ(stat_vec(f[0].var), stat_vec(f[1].var));
            EXPECT_EQ(0, std::memcmp(b[0].dsrc.data(), b[1].dsrc.data(), d.size_bytes()));
            EXPECT_EQ(stat_vec(b[0].dscale), stat_vec(b[1].dscale));
            EXPECT_EQ(stat_vec(b[0].dshift), stat_vec(b[1].dshift));
        }
}

INSTANTIATE_TEST_SUITE_P(
        Isa, BnormJitApiIsa, ::testing::Values(isa::scalar, isa::avx2, isa::avx512_core), bdtest::case_name());
INSTANTIATE_TEST_SUITE_P(Isa, BnormJitApiThreads, ::testing::Values(isa::avx2, isa::avx512_core), bdtest::case_name());

TEST(BnormJitApi, BwdErrorsNameTheFieldAndWriteNothing) {
    const tensor_desc d({2, 3, 4, 4}, format_tag::nchw), cd({3}, format_tag::x);
    const status bad = status::invalid_arguments;
    expect_error(bad, {"bnorm_bwd", "src", "oihw"}, [&] { bnorm_bwd({tensor_desc({2, 3, 4, 4}, format_tag::oihw)}); });
    expect_error(bad, {"bnorm_bwd", "diff_dst", "differ"}, [&] {
        bnorm_bwd({d, tensor_desc({2, 4, 4, 4}, format_tag::nchw), {}, 1e-5f});
    });
    expect_error(bad, {"bnorm_bwd", "epsilon", "-1"}, [&] { bnorm_bwd({d, {}, {}, -1.f}); });
    expect_error(bad, {"bnorm_bwd", "flags", "0x8"}, [&] {
        bnorm_bwd({d, {}, {}, 1e-5f, static_cast<bnorm_flags>(8)});
    });

    const inputs_t in = make_inputs(d, 3);
    const tensor dsrc(d), dscale(cd), dshift(cd);
    std::fill(dsrc.f32(), dsrc.f32() + d.nelems(), 42.f);
    const bnorm_bwd op({d, {}, {}, 1e-5f, CH | bnorm_flags::fuse_relu, false});
    auto untouched = [&] {
        for (dim_t k = 0; k < d.nelems(); ++k) ASSERT_EQ(dsrc.f32()[k], 42.f);
    };
    const bnorm_bwd_args ok {in.src, in.ddst, dsrc, in.mean, in.var, in.scale, in.src, dscale, dshift};
    bnorm_bwd_args a = ok;
    a.mean = tensor();
    expect_error(bad, {"bnorm_bwd", "mean", "required"}, [&] { op.execute(a); });
    a = ok, a.variance = stat_tensor({1, 2});
    expect_error(bad, {"bnorm_bwd", "variance", "x:2"}, [&] { op.execute(a); });
    a = ok, a.scale = tensor();
    expect_error(bad, {"bnorm_bwd", "scale", "use_scale"}, [&] { op.execute(a); });
    a = ok, a.diff_shift = tensor();
    expect_error(bad, {"bnorm_bwd", "diff_shift", "use_shift"}, [&] { op.execute(a); });
    a = ok, a.dst = tensor();
    expect_error(bad, {"bnorm_bwd", "dst", "fuse_relu"}, [&] { op.execute(a); });
    a = ok, a.diff_src = in.src;
    expect_error(bad, {"bnorm_bwd", "diff_src", "src's memory"}, [&] { op.execute(a); });
    a = ok, a.diff_dst = tensor(tensor_desc({2, 3, 4, 4}, format_tag::nhwc));
    expect_error(bad, {"bnorm_bwd", "diff_dst", "nhwc"}, [&] { op.execute(a); });
    untouched();
    // In place on diff_dst is allowed (one layout).
    const tensor ddst_copy(d);
    std::copy(in.ddst.f32(), in.ddst.f32() + d.nelems(), ddst_copy.f32());
    a = ok, a.diff_dst = ddst_copy, a.diff_src = ddst_copy;
    op.execute(a);
    op.execute(ok);
    for (dim_t k = 0; k < d.nelems(); ++k) ASSERT_EQ(ddst_copy.f32()[k], dsrc.f32()[k]);
}

// oneDNN benchdnn's lists (tests/benchdnn/inputs/bnorm), batch files in benchdnn syntax,
// $BLOCKDNN_TEST_DATA/bnorm/<list> (set by tests/meson.build), read by the library's batch
// reader (testing/batch.hpp) as blockdnn-bench reads them.
namespace {

const char *const benchdnn_lists[] = {"shapes_resnet_50", "shapes_regressions", "shapes_ci"};

// One descriptor of the lists, its place in them (it seeds the data and picks the layout) and
// its gtest name; or a list that could not be read (`error`).
struct listed_shape_t {
    std::string text;
    std::size_t pos = 0;
    std::string name;
    std::string error;
};

listed_shape_t error_shape(const std::string &name, const std::string &error) {
    listed_shape_t s;
    s.name = name;
    s.error = error;
    return s;
}

// "resnet_50_bn2a_branch2a_6_mb50ic64ih56": benchdnn's name of the problem, then its desc.
std::string shape_name(const std::string &text) {
    std::string name;
    const std::string desc = parse_bnorm_desc(text, &name).str();
    return name.empty() ? desc : name + "_" + desc;
}

// Every descriptor of the lists, in order.
std::vector<listed_shape_t> benchdnn_shapes() {
    const char *root = bdtest::test_data_root();
    if (!root) return {error_shape("BLOCKDNN_TEST_DATA_unset", bdtest::test_data_unset)};
    std::vector<listed_shape_t> v;
    std::size_t pos = 0;
    for (const char *list : benchdnn_lists) {
        std::vector<bdrv::problem_t> problems;
        try {
            problems = bdtest::read_descriptor_list(root, "bnorm", list);
        } catch (const std::exception &e) {
            v.push_back(error_shape(cat(list, "_unreadable"), e.what()));
            continue;
        }
        for (const bdrv::problem_t &prob : problems) {
            listed_shape_t s;
            s.text = prob.desc;
            s.pos = pos++;
            try {
                s.name = shape_name(prob.desc);
            } catch (const std::exception &e) {
                s = error_shape(cat(list, "_unparsable", s.pos), cat(prob.where, ": ", e.what()));
            }
            v.push_back(s);
        }
    }
    return v;
}

std::string listed_name(const listed_shape_t &s) { return s.name; }

class BnormBenchdnn : public bdtest::isa_test<bdtest::isa_case_t<listed_shape_t>> {
protected:
    // A list that could not be read fails on every machine, before the ISA check skips.
    void SetUp() override {
        if (!GetParam().desc.error.empty()) FAIL() << GetParam().desc.error;
        isa_test::SetUp();
    }
};

} // namespace

// Each shape, forward (training and inference, with relu) and backward (both forms), against
// "ref", with benchdnn's eps. To keep the suite fast, mb is capped at 2 (benchdnn's --mb=2),
// spatial dims are halved while a problem exceeds 1M elements (mb2ic64ih224 runs as 2x64x112x112),
// and each shape runs in one layout, picked by its position in the lists so that plain,
// channels-last, 8c and 16c all get shapes.
TEST_P(BnormBenchdnn, JitVsRef) {
    const listed_shape_t &shape = GetParam().desc;
    const bnorm_desc s = parse_bnorm_desc(shape.text);
    const int ndims = s.src.ndims();
    dims_t dims = s.src.dims();
    dims[0] = std::min<dim_t>(dims[0], 2);
    auto nelems = [&] {
        dim_t n = 1;
        for (dim_t x : dims) n *= x;
        return n;
    };
    for (int k = 2; nelems() > (1 << 20) && k < ndims; k = k + 1 < ndims ? k + 1 : 2) dims[k] = (dims[k] + 1) / 2;
    const std::vector<format_tag> tags = layouts_for(ndims);
    const std::size_t pos = shape.pos;
    check_problem(level(), tensor_desc(dims, tags[pos % tags.size()]), s.epsilon, true, static_cast<unsigned>(pos));
}

INSTANTIATE_TEST_SUITE_P(Benchdnn, BnormBenchdnn,
        ::testing::ValuesIn(bdtest::isa_cases({isa::avx2, isa::avx512_core}, benchdnn_shapes(), listed_name)),
        bdtest::case_name());

TEST(BnormParse, ParsesBenchdnnSyntax) {
    std::string name;
    const bnorm_desc a = parse_bnorm_desc("mb50_ic64_ih112iw112_n\"resnet_50:bn_conv1\"", &name);
    EXPECT_EQ(a.src.dims(), (dims_t {50, 64, 112, 112}));
    EXPECT_EQ(a.src.tag(), format_tag::nchw);
    EXPECT_EQ(name, "resnet_50:bn_conv1");
    EXPECT_EQ(parse_bnorm_desc("ic16id12").src.dims(), (dims_t {2, 16, 12, 12, 12}));
    EXPECT_EQ(parse_bnorm_desc("ic32iw32").src.dims(), (dims_t {2, 32, 32}));
    EXPECT_EQ(parse_bnorm_desc("ic23").src.dims(), (dims_t {2, 23}));
    EXPECT_EQ(parse_bnorm_desc("mb4ic200ih17iw16").src.dims(), (dims_t {4, 200, 17, 16}));
    EXPECT_EQ(parse_bnorm_desc("mb16ic64ih56").str(), "mb16ic64ih56");
    EXPECT_EQ(parse_bnorm_desc("mb1ic19id4ih6iw6eps0.5").str(), "mb1ic19id4ih6iw6eps0.5");
    EXPECT_EQ(parse_bnorm_desc("ic23").str(), "mb2ic23");
    expect_error(status::invalid_arguments,
            {"bnorm descriptor 'mb2ic16eps-1':", "epsilon = -1 must be finite and >= 0"},
            [] { parse_bnorm_desc("mb2ic16eps-1"); });
    expect_error(status::invalid_arguments, {"bnorm descriptor 'mb2ic16epsx': eps needs a number"},
            [] { parse_bnorm_desc("mb2ic16epsx"); });
    EXPECT_EQ(parse_bnorm_desc("mb2ic16eps0").epsilon, 0.f); // validate allows eps = 0
    EXPECT_FLOAT_EQ(parse_bnorm_desc("ic3ih2eps0.5").epsilon, 0.5f);
    EXPECT_FLOAT_EQ(parse_bnorm_desc("ic3ih2").epsilon, 0.0625f);
    expect_error(status::invalid_arguments, {"bnorm descriptor", "ic is required"}, [] { parse_bnorm_desc("mb2ih3"); });
    expect_error(
            status::invalid_arguments, {"bnorm descriptor", "unknown key 'kh'"}, [] { parse_bnorm_desc("ic2kh3"); });
    expect_error(status::invalid_arguments, {"bnorm descriptor", "ih", "positive"}, [] { parse_bnorm_desc("ic2ih0"); });
}

TEST(BnormDesc, ValidateAndImplInfo) {
    bnorm_desc d = parse_bnorm_desc("mb2ic20ih5eps0.001");
    d.validate();
    d.dst = tensor_desc({2, 21, 5, 5}, format_tag::nchw);
    expect_error(status::invalid_arguments, {"bnorm_fwd", "dst dims"}, [&] { d.validate(); });
    bnorm_bwd_desc b {d.src, {}, {}, -1.f};
    expect_error(status::invalid_arguments, {"bnorm_bwd", "epsilon = -1"}, [&] { b.validate(); });
    b.epsilon = 0.001f;
    EXPECT_EQ(b.str(), "mb2ic20ih5eps0.001");
    const bnorm_fwd op(bnorm_desc {bnorm_mode::training, d.src, {}, 0.001f});
    const std::string info = op.impl_info();
    EXPECT_EQ(info.rfind(op.impl_name(), 0), 0u) << info;
    EXPECT_EQ(info.find('\n') != std::string::npos, std::string(op.impl_name()) != "ref") << info;
    EXPECT_EQ(bnorm_bwd(b).impl_info().rfind(bnorm_bwd(b).impl_name(), 0), 0u);
}
