// SPDX-License-Identifier: Apache-2.0
// JIT batch normalization on numerically hard inputs, on every layout and JIT ISA: constant
// channels (variance 0, so dst = shift), a channel of 1e4 + small noise (where
// E[x^2] - E[x]^2 in float is all rounding), values near the float limits, NaN, which must
// stay in its own channel, and infinities, which must reach the mean. Each runs on this
// machine and on one where training takes the fused path (fused_machine: one-pass
// statistics in double while normalizing the previous unit), with channels enough for two
// units.
#include <algorithm>
#include <cmath>
#include <limits>

#include "bnorm_jit_test_util.hpp"
#include "common/isa_param.hpp"

using namespace blockdnn;
using namespace bnorm_test;

namespace {

// One descriptor per layout of 2 to 5 dims: (mb, c), (mb, c, h w), (mb, c, h, w), (mb, c, 2, h, w / 2)
// (depth 1 if w is 1).
std::vector<tensor_desc> descs_every_layout(const dims_t &dims4) {
    const dims_t by_nd[] = {{dims4[0], dims4[1]}, {dims4[0], dims4[1], dims4[2] * dims4[3]}, dims4,
            {dims4[0], dims4[1], dims4[3] > 1 ? 2 : 1, dims4[2], std::max<dim_t>(1, dims4[3] / 2)}};
    std::vector<tensor_desc> v;
    for (const dims_t &dims : by_nd)
        for (format_tag t : layouts_for(static_cast<int>(dims.size()))) v.emplace_back(dims, t);
    return v;
}

// Sets src's logical elements to f(channel, k-th element of that channel in iteration order).
template <typename F>
void fill_by_channel(const tensor &t, F &&f) {
    std::vector<dim_t> count(t.desc().dim(1), 0);
    for_each_index(t.desc(), [&](const dim_t *idx) { t.f32()[t.desc().offset(idx)] = f(idx[1], count[idx[1]]++); });
}

// Calls fn(em, d) for each edge machine em, with its thread count, and each layout d of dims4.
template <typename F>
void for_each_machine_layout(const dims_t &dims4, F &&fn) {
    for (const edge_machine_t &em : edge_machines())
        for (const tensor_desc &d : descs_every_layout(dims4)) {
            const threads_guard_t threads(em.threads);
            fn(em, d);
        }
}

// Each edge case at one JIT level.
class BnormJitEdge : public bdtest::isa_test<isa> {};

} // namespace

// mb 1 and spatial 1: each channel has one value, variance 0: dst is exactly shift (relu'd),
// with eps > 0 and with eps = 0 (1/sqrt(0) is taken as 0), never NaN.
TEST_P(BnormJitEdge, SingleValueChannels) {
    const isa i = level();
    for_each_machine_layout({1, 21, 1, 1}, [&](const edge_machine_t &em, const tensor_desc &d) {
        for (float eps : {1e-5f, 0.f}) {
            const tensor src(d);
            fill_random(src, 11);
            const std::vector<float> scale = random_vec(21, 1, 0.5f, 1.5f);
            const std::vector<float> shift = random_vec(21, 2, -1.f, 1.f);
            run_t r;
            r.dir = bnorm_dir_t::fwd_training;
            r.scale = r.shift = true;
            r.eps = eps;
            const tensor dst = fwd_case(src, r, i, scale, shift, std::vector<float>(21), std::vector<float>(21), em.m);
            for_each_index(d, [&](const dim_t *idx) { ASSERT_EQ(dst.f32()[d.offset(idx)], shift[idx[1]]); });
            const tensor ddst(d);
            fill_random(ddst, 12);
            r.dir = bnorm_dir_t::bwd;
            const tensor dsrc = bwd_case(src, ddst, r, i, scale, shift, {}, {}, em.m);
            for_each_index(d, [&](const dim_t *idx) { ASSERT_TRUE(std::isfinite(dsrc.f32()[d.offset(idx)])); });
        }
    });
}

// Constant channels over many points, so over several chunks whose means the driver combines:
// the mean must come out exact (a combination off by an ulp becomes an O(1) error in dst
// when eps = 0 makes 1/sqrt(var + eps) huge), so dst is exactly shift.
TEST_P(BnormJitEdge, ConstantChannelsManyChunks) {
    const isa i = level();
    for_each_machine_layout({4, 19, 40, 40}, [&](const edge_machine_t &em, const tensor_desc &d) {
        const tensor src(d);
        fill_by_channel(src, [](dim_t c, dim_t) { return 3.5f + 0.3f * static_cast<float>(c); });
        const std::vector<float> shift = random_vec(19, 2, -1.f, 1.f);
        run_t r;
        r.shift = true;
        r.eps = 0.f;
        const tensor dst = fwd_case(
                src, r, i, std::vector<float>(19, 1.f), shift, std::vector<float>(19), std::vector<float>(19), em.m);
        for_each_index(d, [&](const dim_t *idx) { ASSERT_EQ(dst.f32()[d.offset(idx)], shift[idx[1]]); });
    });
}

// Channels of 1e4 + noise of 1e-2: the variance (1e-4) is 1e-12 of E[x^2], far below float
// precision. Several chunks per channel exercise the chunk combination.
TEST_P(BnormJitEdge, LargeMeanSmallNoise) {
    const isa i = level();
    for_each_machine_layout({4, 19, 40, 40}, [&](const edge_machine_t &em, const tensor_desc &d) {
        const tensor src(d);
        std::mt19937 gen(5);
        std::normal_distribution<float> noise(0.f, 1e-2f);
        fill_by_channel(src, [&](dim_t c, dim_t) { return (c == 1 || c == 17 ? 1e4f : 1.f) + noise(gen); });
        run_t r;
        r.scale = r.shift = true;
        const std::vector<float> scale(19, 1.f), shift(19, 0.f), zeros(19, 0.f), ones(19, 1.f);
        tol_t tol;
        tol.mean_r = 1e-7; // the float mean rounded from the exact one
        tol.var_r = 1e-4;  // of a variance that E[x^2] - E[x]^2 would lose entirely
        tol.dst_a = 1e-4;  // normalized values of O(1) computed from 1e4 - 1e4
        fwd_case(src, r, i, scale, shift, zeros, ones, em.m, tol);
        const tensor ddst(d);
        fill_random(ddst, 6);
        r.dir = bnorm_dir_t::bwd;
        tol.dst_a = 1e-3, tol.dst_r = 1e-4, tol.dw_r = 1e-3;
        bwd_case(src, ddst, r, i, scale, shift, {}, {}, em.m, tol);
    });
}

// Values near the float limits. Huge (|x| up to 1e38, also all near 3e38): the variance
// overflows float (reported as inf, as the naive forward does) but dst stays finite and
// right. Tiny (|x| ~ 1e-37, eps = 0): the variance underflows float, yet 1/sqrt(var) is
// representable and dst is right.
TEST_P(BnormJitEdge, NearFloatLimits) {
    const isa i = level();
    struct case_t {
        const char *name;
        float lo, hi, eps;
    };
    const case_t cases[] = {
            {"huge", -1e38f, 1e38f, 1e-5f}, {"huge_offset", 1e38f, 3e38f, 1e-5f}, {"tiny", -1e-37f, 1e-37f, 0.f}};
    for (const edge_machine_t &em : edge_machines())
        for (const case_t &cs : cases)
            for (const tensor_desc &d : descs_every_layout({3, 21, 6, 7})) {
                SCOPED_TRACE(cs.name);
                const threads_guard_t threads(em.threads);
                const tensor src(d);
                std::mt19937 gen(9);
                std::uniform_real_distribution<float> u(cs.lo, cs.hi);
                fill_by_channel(src, [&](dim_t, dim_t) { return u(gen); });
                run_t r;
                r.eps = cs.eps;
                r.shift = true;
                const std::vector<float> ones(21, 1.f), shift = random_vec(21, 3, -1.f, 1.f);
                tol_t tol;
                tol.dst_a = 1e-4;
                // The mean is a sum of values 1e3 times larger that cancel: its error scales
                // with the values, not with the mean.
                tol.mean_a = 1e-6 * std::max(std::fabs(cs.lo), std::fabs(cs.hi));
                const tensor dst =
                        fwd_case(src, r, i, ones, shift, std::vector<float>(21), std::vector<float>(21), em.m, tol);
                for_each_index(d, [&](const dim_t *idx) { ASSERT_TRUE(std::isfinite(dst.f32()[d.offset(idx)])); });
            }
}

// A NaN in one element of channel 2 or 18 (the second unit of 16c blocks, whose statistics
// the fused path gathers): training gives NaN statistics and dst for that channel only;
// inference gives NaN at that element only; backward confines NaN to that channel.
TEST_P(BnormJitEdge, NanStaysInItsChannel) {
    const isa i = level();
    const float qnan = std::numeric_limits<float>::quiet_NaN();
    for (const edge_machine_t &em : edge_machines())
        for (const tensor_desc &d : descs_every_layout({2, 19, 4, 3}))
            for (const run_t &base : all_dirs)
                for (dim_t nan_c : {2, 18}) { // in unit 0, and in unit 1 (gathered by the fused path)
                    const threads_guard_t threads(em.threads);
                    const tensor src(d);
                    fill_random(src, 21);
                    dim_t nan_idx[max_ndims] = {1, nan_c};
                    for (int k = 2; k < d.ndims(); ++k) nan_idx[k] = 1;
                    src.f32()[d.offset(nan_idx)] = qnan;
                    run_t r = base;
                    r.relu = true; // max(0, NaN) must stay NaN
                    r.scale = r.shift = true;
                    const std::vector<float> scale = random_vec(19, 1, 0.5f, 1.5f);
                    const std::vector<float> shift = random_vec(19, 2, -1.f, 1.f);
                    const std::vector<float> mean = random_vec(19, 3, -0.5f, 0.5f);
                    const std::vector<float> var = random_vec(19, 4, 0.1f, 1.f);
                    tensor out;
                    if (r.dir == bnorm_dir_t::bwd) {
                        const tensor ddst(d);
                        fill_random(ddst, 22);
                        out = bwd_case(src, ddst, r, i, scale, shift, mean, var, em.m);
                    } else {
                        out = fwd_case(src, r, i, scale, shift, mean, var, em.m);
                    }
                    const bool whole_channel =
                            r.dir == bnorm_dir_t::fwd_training || (r.dir == bnorm_dir_t::bwd && !r.global);
                    int nan_elsewhere = 0, nan_in_channel = 0;
                    for_each_index(d, [&](const dim_t *idx) {
                        const bool is_nan = std::isnan(out.f32()[d.offset(idx)]);
                        if (idx[1] != nan_c) nan_elsewhere += is_nan;
                        else nan_in_channel += is_nan;
                    });
                    SCOPED_TRACE(run_str(d, r, i));
                    EXPECT_EQ(nan_elsewhere, 0);
                    if (whole_channel) {
                        EXPECT_EQ(nan_in_channel, d.nelems() / 19);
                    } else if (r.dir == bnorm_dir_t::fwd_inference) {
                        EXPECT_EQ(nan_in_channel, 1);
                    }
                }
}

// Inference with var + eps <= 0 (a constant channel recorded with eps = 0, or a negative
// variance): the normalized value is taken as 0, so dst = shift.
TEST_P(BnormJitEdge, InferenceNonpositiveVariance) {
    const isa i = level();
    for (const tensor_desc &d : descs_every_layout({2, 3, 5, 5})) {
        const tensor src(d);
        fill_random(src, 31);
        run_t r;
        r.dir = bnorm_dir_t::fwd_inference;
        r.eps = 0.f;
        r.shift = true;
        const std::vector<float> shift = {0.5f, -0.25f, 2.f};
        const tensor dst = fwd_case(src, r, i, {}, shift, {0.1f, 0.2f, 0.3f}, {0.f, -1.f, 0.f});
        for_each_index(d, [&](const dim_t *idx) { ASSERT_EQ(dst.f32()[d.offset(idx)], shift[idx[1]]); });
    }
}

// Infinities, which the statistics must carry as the naive sums do: +inf as channel 2's
// first value and -inf as channel 18's (the point from which the kernels take their shift;
// 18 is in the fused path's second unit), +inf as the last value of channel 5 (a later
// chunk, folded after finite ones), and both +inf and -inf in channel 7. Means are +inf,
// -inf, +inf and NaN, variances NaN and dst NaN in those channels; the rest are untouched.
TEST_P(BnormJitEdge, InfinitiesInTheStatistics) {
    const isa i = level();
    const float inf = std::numeric_limits<float>::infinity();
    auto special = [](dim_t c) { return c == 2 || c == 18 || c == 5 || c == 7; };
    for_each_machine_layout({2, 19, 4, 3}, [&](const edge_machine_t &em, const tensor_desc &d) {
        const tensor src(d), dst(d);
        const dim_t last = d.nelems() / 19 - 1;
        std::mt19937 gen(41);
        std::uniform_real_distribution<float> u(-1.f, 1.f);
        fill_by_channel(src, [&](dim_t c, dim_t j) {
            if ((c == 2 && j == 0) || (c == 5 && j == last) || (c == 7 && j == last / 2)) return inf;
            if ((c == 18 && j == 0) || (c == 7 && j == last)) return -inf;
            return u(gen);
        });
        run_t r;
        r.scale = r.shift = true;
        const auto jit = make_jit(d, r, i, em.m);
        if (!jit) return;
        const std::vector<float> scale = random_vec(19, 1, 0.5f, 1.5f);
        const std::vector<float> shift = random_vec(19, 2, -1.f, 1.f);
        std::vector<float> mean(19, -1.f), var(19, -1.f);
        jit->execute(fwd_args(src, dst, mean, var, scale.data(), shift.data()), r.mode);
        SCOPED_TRACE(run_str(d, r, i));
        EXPECT_EQ(mean[2], inf);
        EXPECT_EQ(mean[18], -inf);
        EXPECT_EQ(mean[5], inf);
        EXPECT_TRUE(std::isnan(mean[7]));
        for (dim_t c = 0; c < 19; ++c) {
            if (special(c)) EXPECT_TRUE(std::isnan(var[c])) << "c " << c;
            else EXPECT_TRUE(std::isfinite(mean[c]) && std::isfinite(var[c])) << "c " << c;
        }
        for_each_index(d, [&](const dim_t *idx) {
            const float v = dst.f32()[d.offset(idx)];
            ASSERT_EQ(std::isnan(v), special(idx[1])) << "c " << idx[1] << " value " << v;
        });
    });
}

INSTANTIATE_TEST_SUITE_P(Isa, BnormJitEdge, ::testing::Values(isa::avx2, isa::avx512_core), bdtest::case_name());
