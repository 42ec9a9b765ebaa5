// SPDX-License-Identifier: Apache-2.0
// eltwise_fwd as an op: every layout (padding stays zero), tails of every length, in place,
// the streaming-store path, dispatch by max ISA, the errors, and the descriptor parser.
#include <cmath>
#include <cstring>
#include <limits>

#include <gtest/gtest.h>

#include "blockdnn/blockdnn.hpp"
#include "core/eltwise_ref_f64.hpp"
#include "testing/tolerances.hpp"
#include "core/prb_parse.hpp"
#include "ops/eltwise/eltwise_impl.hpp"
#include "ops/eltwise/jit_eltwise_fwd_kernel.hpp"
#include "common/isa_param.hpp"
#include "common/test_util.hpp"
#include "testing/fill.hpp"

using namespace blockdnn;
using ft = format_tag;

namespace {

constexpr float poison_value = 12345.f;

void poison(const tensor &t) {
    for (dim_t i = 0; i < t.desc().nelems_padded(); ++i) t.f32()[i] = poison_value;
}

// Fills the logical elements with values in [-4, 4), the padding with zeros.
void fill(const tensor &t, unsigned seed) {
    std::memset(t.data(), 0, t.desc().size_bytes());
    bdtest::fill_seeded(t, seed, -4.f, 4.f);
}

float alpha_for(eltwise_alg a) { return a == eltwise_alg::clip ? -0.5f : a == eltwise_alg::linear ? 1.5f : 0.25f; }
float beta_for(eltwise_alg a) { return a == eltwise_alg::clip ? 1.5f : 0.75f; }

// Every logical element of dst within 2e-5 relative of the exact value (the loosest
// accuracy bound in this range), every padding element zero.
void expect_eltwise(eltwise_alg alg, const tensor &src_copy, const tensor &dst, const std::string &what) {
    const tensor_desc &d = dst.desc();
    std::vector<char> logical(d.nelems_padded(), 0);
    int bad = 0;
    for_each_index(d, [&](const dim_t *idx) {
        const dim_t o = d.offset(idx);
        logical[o] = 1;
        const double e = impl::eltwise_ref_f64(alg, src_copy.f32()[o], alpha_for(alg), beta_for(alg));
        const double y = dst.f32()[o];
        const bool ok = std::isnan(e) ? std::isnan(y)
                : std::isinf(e)       ? y == e
                                      : std::fabs(y - e) <= tol::eltwise_jit * std::fabs(e) + 1e-30;
        if (!ok && bad++ < 3) ADD_FAILURE() << what << ": at offset " << o << " got " << y << ", want " << e;
    });
    for (dim_t o = 0; o < d.nelems_padded(); ++o)
        if (!logical[o] && dst.f32()[o] != 0.f && bad++ < 3)
            ADD_FAILURE() << what << ": padding at offset " << o << " holds " << dst.f32()[o];
}

struct layout_case_t {
    dims_t dims;
    ft tag;
};

const std::vector<layout_case_t> layouts = {
        {{37}, ft::x},
        {{2, 3, 5, 7}, ft::nchw},
        {{2, 19, 3, 5}, ft::nhwc},
        {{2, 17, 3, 5}, ft::nChw16c}, // 15 padded channels per pixel
        {{3, 9, 4, 3}, ft::nChw8c},
        {{1, 20, 2, 3, 4}, ft::nCdhw16c},
        {{2, 5, 11}, ft::nCw8c},
        {{17, 18, 3, 3}, ft::OIhw16i16o}, // two inner blocks, both padded
        {{5, 1, 1, 3, 3}, ft::Goihw8g},
};

std::string layout_name(const layout_case_t &l) {
    return std::string(to_string(l.tag)) + "_" + bdtest::dims_name(l.dims);
}

const auto every_isa = {isa::scalar, isa::avx2, isa::avx512_core};

class EltwiseOpLayout : public bdtest::isa_test<bdtest::isa_case_t<layout_case_t>> {};
class EltwiseOpIsa : public bdtest::isa_test<isa> {};
class EltwiseOpJit : public bdtest::isa_test<isa> {};

} // namespace

TEST_P(EltwiseOpLayout, EveryAlgKeepsPaddingZero) {
    isa_guard g;
    const isa level = this->level();
    set_max_isa(level);
    const layout_case_t &l = GetParam().desc;
    const tensor_desc d(l.dims, l.tag);
    const tensor src(d), src_copy(d), dst(d);
    fill(src, 7);
    fill(src_copy, 7);
    for (int a = 0; a <= static_cast<int>(eltwise_alg::linear); ++a) {
        const auto alg = static_cast<eltwise_alg>(a);
        const eltwise_fwd op(alg, alpha_for(alg), beta_for(alg), d);
        const std::string what =
                std::string(to_string(level)) + " " + op.impl_name() + " " + to_string(alg) + " " + d.str();
        poison(dst);
        op.execute(src, dst);
        expect_eltwise(alg, src_copy, dst, what);
        // In place, on a copy of src.
        const tensor inplace(d);
        std::memcpy(inplace.data(), src_copy.data(), d.size_bytes());
        op.execute(inplace, inplace);
        expect_eltwise(alg, src_copy, inplace, what + " in place");
    }
}

INSTANTIATE_TEST_SUITE_P(EveryLayout, EltwiseOpLayout,
        ::testing::ValuesIn(bdtest::isa_cases(every_isa, layouts, layout_name)), bdtest::case_name());

TEST_P(EltwiseOpIsa, TailsOfEveryLengthWriteNothingPastTheEnd) {
    isa_guard g;
    constexpr dim_t max_n = 2 * 8 * 16 + 17; // past two full unrolled iterations at any ur
    constexpr int guard = 64;
    set_max_isa(level());
    for (eltwise_alg alg : {eltwise_alg::relu, eltwise_alg::gelu_erf, eltwise_alg::log}) {
        for (dim_t n = 1; n <= max_n; n += (n < 40 ? 1 : 13)) {
            std::vector<float> src(n + guard), dst(n + guard, poison_value);
            for (dim_t i = 0; i < n + guard; ++i) src[i] = 0.01f * static_cast<float>(i % 97) + 0.005f;
            const tensor_desc d({n}, ft::x);
            const eltwise_fwd op(alg, 0.f, 0.f, d);
            op.execute(tensor(d, src.data()), tensor(d, dst.data()));
            for (dim_t i = 0; i < n; ++i)
                ASSERT_NEAR(dst[i], eltwise_ref(alg, src[i]), 1e-6 * std::fabs(eltwise_ref(alg, src[i])) + 1e-30)
                        << op.impl_name() << " " << to_string(alg) << " n=" << n << " i=" << i;
            for (dim_t i = n; i < n + guard; ++i)
                ASSERT_EQ(dst[i], poison_value) << op.impl_name() << " wrote past the end: n=" << n << " i=" << i;
        }
    }
}

TEST(EltwiseOp, LargeTensorsUseStreamingStoresOutOfPlace) {
    // Twice the last-level cache: the op holds a second, streaming-store kernel.
    const std::size_t llc = cpu().l3_bytes > 0 ? cpu().l3_bytes : (8u << 20);
    const tensor_desc big({static_cast<dim_t>(llc / 4 + 1000)}, ft::x), small({4096}, ft::x);
    for (isa level : {isa::avx512_core, isa::avx2}) {
        impl::eltwise_prb_t p {eltwise_alg::relu, 0.f, 0.f, big};
        std::vector<impl::kernel_ptr> ks;
        std::string why;
        ASSERT_EQ(impl::eltwise_jit_kernels(p, level, ks, why), status::success) << why;
        ASSERT_EQ(ks.size(), 2u);
        EXPECT_EQ(ks[1]->name(), "jit_eltwise_fwd_relu_nt");
        p.desc = small;
        ASSERT_EQ(impl::eltwise_jit_kernels(p, level, ks, why), status::success) << why;
        EXPECT_EQ(ks.size(), 1u);
    }
    // One out-of-place run through the driver at the best ISA, checked exactly.
    const tensor src(big), dst(big);
    for (dim_t i = 0; i < big.nelems(); ++i) src.f32()[i] = static_cast<float>(i % 2001) - 1000.f;
    const eltwise_fwd op(eltwise_alg::relu, 0.f, 0.f, big);
    op.execute(src, dst);
    dim_t bad = 0;
    for (dim_t i = 0; i < big.nelems(); ++i) bad += dst.f32()[i] != std::max(src.f32()[i], 0.f);
    EXPECT_EQ(bad, 0) << op.impl_name();
}

TEST_P(EltwiseOpJit, StreamingStoreKernelMatchesRef) {
    const isa level = this->level();
    for (eltwise_alg alg : {eltwise_alg::relu, eltwise_alg::tanh}) {
        impl::eltwise_conf_t c;
        std::string why;
        ASSERT_EQ(impl::init_conf_eltwise_fwd(c, level, alg, 0.f, 0.f, true, why), status::success) << why;
        std::unique_ptr<impl::jit_generator_t> k;
        if (level == isa::avx512_core) k = std::make_unique<impl::jit_eltwise_fwd_kernel_t<isa::avx512_core>>(c);
        else k = std::make_unique<impl::jit_eltwise_fwd_kernel_t<isa::avx2>>(c);
        ASSERT_EQ(k->create(why), status::success) << why;
        const tensor src(tensor_desc({1000}, ft::x)), dst(tensor_desc({1000}, ft::x)); // 64-byte aligned
        fill(src, 3);
        const impl::eltwise_call_args_t args {src.f32(), dst.f32(), 997};
        k->entry<impl::eltwise_kernel_fn_t>()(&args);
        for (int i = 0; i < 997; ++i)
            ASSERT_NEAR(dst.f32()[i], eltwise_ref(alg, src.f32()[i]), 1e-6) << to_string(level) << " i=" << i;
        EXPECT_EQ(dst.f32()[997], 0.f);
    }
}

TEST(EltwiseOp, DispatchFollowsTheMaxIsa) {
    isa_guard g;
    const tensor_desc d({2, 16, 4, 4}, ft::nChw16c);
    const std::pair<isa, const char *> expect[] = {
            {isa::scalar, "ref"}, {isa::avx2, "jit:avx2"}, {isa::avx512_core, "jit:avx512_core"}};
    for (const auto &[cap, name] : expect) {
        if (cap > detected_isa()) continue;
        set_max_isa(cap);
        EXPECT_STREQ(eltwise_fwd(eltwise_alg::gelu_erf, 0.f, 0.f, d).impl_name(), name) << "cap " << to_string(cap);
    }
    // The environment cap works too, and an op keeps the implementation it was created with.
    reset_max_isa();
    env_guard e("BLOCKDNN_MAX_ISA", "avx2");
    const eltwise_fwd op(eltwise_alg::tanh, 0.f, 0.f, d);
    EXPECT_STREQ(op.impl_name(), detected_isa() >= isa::avx2 ? "jit:avx2" : "ref");
    setenv("BLOCKDNN_MAX_ISA", "scalar", 1);
    EXPECT_STREQ(op.impl_name(), detected_isa() >= isa::avx2 ? "jit:avx2" : "ref");
    EXPECT_STREQ(eltwise_fwd(eltwise_alg::tanh, 0.f, 0.f, d).impl_name(), "ref");
    setenv("BLOCKDNN_MAX_ISA", "avx9000", 1);
    expect_error(status::invalid_arguments, {"BLOCKDNN_MAX_ISA", "avx9000"},
            [&] { eltwise_fwd(eltwise_alg::tanh, 0.f, 0.f, d); });
}

TEST(EltwiseOp, BadProblemsAreErrorsNamingTheField) {
    const tensor_desc d({2, 3}, ft::nc);
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    expect_error(status::invalid_arguments, {"eltwise_fwd", "alg = 42"},
            [&] { eltwise_fwd(static_cast<eltwise_alg>(42), 0.f, 0.f, d); });
    expect_error(status::invalid_arguments, {"eltwise_fwd", "alpha = nan"},
            [&] { eltwise_fwd(eltwise_alg::relu, nan, 0.f, d); });
    expect_error(status::invalid_arguments, {"eltwise_fwd", "beta = inf"},
            [&] { eltwise_fwd(eltwise_alg::clip, 0.f, inf, d); });
    // The JIT kernels and the reference order min and max differently: an empty range would
    // give different answers, so it is refused, as post_ops refuses it.
    expect_error(status::invalid_arguments, {"eltwise_fwd: clip lower bound alpha = 1 exceeds upper bound beta = 0"},
            [&] { eltwise_fwd(eltwise_alg::clip, 1.f, 0.f, d); });
    expect_error(status::invalid_arguments, {"eltwise_fwd", "desc is empty"},
            [&] { eltwise_fwd(eltwise_alg::relu, 0.f, 0.f, tensor_desc()); });
}

TEST(EltwiseOp, BadTensorsAreErrorsAndLeaveDstAlone) {
    const tensor_desc d({2, 17, 3, 3}, ft::nChw16c);
    const eltwise_fwd op(eltwise_alg::sigmoid, 0.f, 0.f, d);
    const tensor src(d), dst(d), other(tensor_desc({2, 17, 3, 3}, ft::nchw));
    fill(src, 1);
    poison(dst);
    auto untouched = [&] {
        for (dim_t i = 0; i < d.nelems_padded(); ++i)
            if (dst.f32()[i] != poison_value) return false;
        return true;
    };
    expect_error(status::invalid_arguments, {"eltwise_fwd", "src", "no memory"}, [&] { op.execute(tensor(), dst); });
    expect_error(status::invalid_arguments, {"eltwise_fwd", "dst", "no memory"}, [&] { op.execute(src, tensor()); });
    expect_error(status::invalid_arguments, {"eltwise_fwd", "src nchw:2x17x3x3", "nChw16c:2x17x3x3"},
            [&] { op.execute(other, dst); });
    expect_error(status::invalid_arguments, {"eltwise_fwd", "dst nchw:2x17x3x3"}, [&] { op.execute(src, other); });
    // Overlapping but not the same memory.
    std::vector<float> buf(2 * d.nelems_padded() + 16);
    expect_error(status::invalid_arguments, {"eltwise_fwd", "overlap"},
            [&] { op.execute(tensor(d, buf.data()), tensor(d, buf.data() + 16)); });
    EXPECT_TRUE(untouched());
}

TEST(EltwiseOp, DescriptorParser) {
    using impl::parse_eltwise_prb;
    impl::eltwise_prb_t p = parse_eltwise_prb("--alg=gelu_tanh 8x16x56x56");
    EXPECT_EQ(p.alg, eltwise_alg::gelu_tanh);
    EXPECT_EQ(p.desc, tensor_desc({8, 16, 56, 56}, ft::nchw));
    p = parse_eltwise_prb("--alg=clip --alpha=-1.5 --beta=6 --tag=aBx16b 2x17x5x5_n\"resnet:relu1\"");
    EXPECT_EQ(p.alg, eltwise_alg::clip);
    EXPECT_EQ(p.alpha, -1.5f);
    EXPECT_EQ(p.beta, 6.f);
    EXPECT_EQ(p.desc, tensor_desc({2, 17, 5, 5}, ft::nChw16c));
    EXPECT_EQ(parse_eltwise_prb("--alg=logistic --tag=axb 2x3x4").alg, eltwise_alg::sigmoid);
    EXPECT_EQ(parse_eltwise_prb("--tag=axb 2x3x4").desc.tag(), ft::nwc);
    EXPECT_EQ(parse_eltwise_prb("--tag=nChw8c 1x9x2x2").desc.tag(), ft::nChw8c);
    EXPECT_EQ(parse_eltwise_prb("100").desc, tensor_desc({100}, ft::x));
    EXPECT_EQ(eltwise_alg_from_string("eltwise_gelu"), eltwise_alg::gelu_tanh);
    expect_error(status::invalid_arguments, {"softplus"}, [] { parse_eltwise_prb("--alg=softplus 8x8"); });
    expect_error(status::invalid_arguments, {"--alpha", "'x1'"}, [] { parse_eltwise_prb("--alpha=x1 8x8"); });
    expect_error(status::invalid_arguments, {"--dir=FWD_D"}, [] { parse_eltwise_prb("--dir=FWD_D 8x8"); });
    expect_error(status::invalid_arguments, {"no dims"}, [] { parse_eltwise_prb("--alg=relu"); });
    expect_error(status::invalid_arguments, {"8x0", "dims[1] = 0"}, [] { parse_eltwise_prb("8x0"); });
    expect_error(status::invalid_arguments, {"8y8", "'y'"}, [] { parse_eltwise_prb("8y8"); });
    expect_error(status::invalid_arguments, {"aBx16b", "2 dims"}, [] { parse_eltwise_prb("--tag=aBx16b 8x8"); });
    expect_error(status::invalid_arguments, {"nchwx"}, [] { parse_eltwise_prb("--tag=nchwx 8x8x8x8"); });
    expect_error(status::invalid_arguments, {"7 dims"}, [] { impl::parse_dims("1x1x1x1x1x1x1"); });
}

INSTANTIATE_TEST_SUITE_P(Isa, EltwiseOpIsa, ::testing::ValuesIn(std::vector<isa>(every_isa)), bdtest::case_name());
INSTANTIATE_TEST_SUITE_P(Isa, EltwiseOpJit, ::testing::Values(isa::avx2, isa::avx512_core), bdtest::case_name());
