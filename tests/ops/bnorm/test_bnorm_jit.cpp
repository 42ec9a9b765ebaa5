// SPDX-License-Identifier: Apache-2.0
// JIT batch normalization against the oracles: the naive forward of bnorm_test_util.hpp and
// the library's reference backward, at every JIT ISA the machine has, on every layout and flag
// combination, seeded random problems, and the numerical edge cases (constant channels, a
// channel of 1e4 + small noise, values near the float limits, NaN), plus init_conf checks and
// bit-identity across threading modes.
#include <cmath>
#include <cstring>
#include <memory>

#include "bnorm_jit_test_util.hpp"
#include "common/isa_param.hpp"

using namespace blockdnn;
using namespace blockdnn::impl;
using namespace bnorm_test;
using bdtest::isa_case_t;

TEST(BnormJitConf, Blocking) {
    bnorm_jit_prb_t p;
    p.src = tensor_desc({2, 17, 5, 5}, format_tag::nChw16c);
    bnorm_conf_t c;
    std::string why;
    ASSERT_EQ(bnorm_init_conf(c, p, isa::avx512_core, bnorm_machine_t(), why), status::success) << why;
    EXPECT_EQ(c.layout, bnorm_layout_t::blocked);
    EXPECT_EQ(c.simd_w, 16);
    // A block's row is 1.6 KB: one unit of both blocks, 25 x 16 floats apart.
    EXPECT_EQ(c.n_units, 1);
    EXPECT_EQ(c.unit_c, 32);
    EXPECT_EQ(c.stats[0].blocks, 2);
    EXPECT_EQ(c.norm[0].blocks, 2);
    EXPECT_EQ(c.stats[0].blk_stride, 25 * 16);
    EXPECT_EQ(c.stats[0].c_vecs, 1);
    EXPECT_EQ(c.row_pts, 25);
    ASSERT_EQ(bnorm_init_conf(c, p, isa::avx2, bnorm_machine_t(), why), status::success) << why;
    EXPECT_EQ(c.simd_w, 8);
    EXPECT_EQ(c.stats[0].c_vecs, 2);
    EXPECT_EQ(c.stats[0].blocks, 2);
    // Two threads: one unit each rather than one unit for both.
    bnorm_machine_t two;
    two.nthr = 2;
    ASSERT_EQ(bnorm_init_conf(c, p, isa::avx512_core, two, why), status::success) << why;
    EXPECT_EQ(c.n_units, 2);
    EXPECT_EQ(c.stats[0].blocks, 1);
    // Large blocks stay units of their own: 56 x 56 x 16 floats is 200 KB a row.
    p.src = tensor_desc({1, 64, 56, 56}, format_tag::nChw16c);
    ASSERT_EQ(bnorm_init_conf(c, p, isa::avx512_core, bnorm_machine_t(), why), status::success) << why;
    EXPECT_EQ(c.n_units, 4);
    EXPECT_EQ(c.stats[0].blocks, 1);

    p.src = tensor_desc({2, 100, 3, 3}, format_tag::nhwc);
    ASSERT_EQ(bnorm_init_conf(c, p, isa::avx512_core, bnorm_machine_t(), why), status::success) << why;
    EXPECT_EQ(c.layout, bnorm_layout_t::nspc);
    EXPECT_EQ(c.unit_c, 64);
    EXPECT_EQ(c.n_units, 2);
    EXPECT_TRUE(c.has_last_ker);
    EXPECT_EQ(c.stats[1].c_vecs, 3);
    EXPECT_EQ(c.stats[1].c_tail, 4);
    EXPECT_EQ(c.row_pts, 18); // mb and spatial merge

    p.src = tensor_desc({1, 512, 7, 7}, format_tag::nchw);
    ASSERT_EQ(bnorm_init_conf(c, p, isa::avx512_core, bnorm_machine_t(), why), status::success) << why;
    EXPECT_EQ(c.layout, bnorm_layout_t::ncsp);
    EXPECT_EQ(c.row_pts, 3);
    EXPECT_EQ(c.row_tail, 1);
    // A channel's row is 196 bytes: units of 64 channels (the most lanes a unit has), 49
    // floats apart.
    EXPECT_EQ(c.n_units, 8);
    EXPECT_EQ(c.unit_c, 64);
    EXPECT_EQ(c.stats[0].blocks, 64);
    EXPECT_EQ(c.stats[0].blk_stride, 49);

    p.src = tensor_desc({16, 256, 56, 56}, format_tag::nChw16c);
    bnorm_machine_t m;      // the caches the model counts on: 4 MiB of L3 for each of 4 cores
    m.l3_bytes = 480 << 20; // a VM may report the host's whole L3: not what the rules read
    m.l3_share_bytes = 4 << 20;
    m.cores = 4;
    ASSERT_EQ(bnorm_init_conf(c, p, isa::avx512_core, m, why), status::success) << why;
    EXPECT_TRUE(c.nt_store); // 2 x 51 MB exceed the 2 MiB of one thread
    EXPECT_EQ(c.stats[0].blocks, 1);
    for (const bnorm_ker_conf_t *k : {&c.stats[0], &c.norm[0]}) EXPECT_LE(bnorm_ker_vregs(*k), 32) << to_string(*k);
    // Training: one-pass statistics in double, the next unit's inside the normalization.
    p.dir = bnorm_dir_t::fwd_training;
    ASSERT_EQ(bnorm_init_conf(c, p, isa::avx512_core, m, why), status::success) << why;
    EXPECT_TRUE(c.fuse_next_stats);
    EXPECT_TRUE(c.stats[0].f64_sums);
    EXPECT_TRUE(c.norm_next.next_stats);
    EXPECT_EQ(c.norm_next.ur, c.stats[0].ur); // the same sums, in the same order
    // The next unit's src, which comes from memory, is prefetched ahead of the points.
    EXPECT_GT(c.norm_next.pf_next, 0);
    EXPECT_EQ(c.norm[0].pf_next, 0);
    EXPECT_LE(bnorm_ker_vregs(c.norm_next), 32) << to_string(c.norm_next);
    // Backward alike: its normalization sums the next unit as bwd_stats does (in float, with
    // bwd_stats' unroll), prefetching the next unit's src and diff_dst.
    p.dir = bnorm_dir_t::bwd;
    ASSERT_EQ(bnorm_init_conf(c, p, isa::avx512_core, m, why), status::success) << why;
    EXPECT_TRUE(c.fuse_next_stats);
    EXPECT_FALSE(c.stats[0].f64_sums);
    EXPECT_TRUE(c.norm_next.next_stats);
    EXPECT_EQ(c.norm_next.ur, c.stats[0].ur);
    EXPECT_GT(c.norm_next.pf_next, 0);
    EXPECT_LE(bnorm_ker_vregs(c.norm_next), 32) << to_string(c.norm_next);
    // Not with relu: the next unit's forward dst would be one more stream.
    p.fuse_relu = true;
    ASSERT_EQ(bnorm_init_conf(c, p, isa::avx512_core, m, why), status::success) << why;
    EXPECT_FALSE(c.fuse_next_stats);
    p.fuse_relu = false;
    p.dir = bnorm_dir_t::fwd_training;
    // Streaming stores: one thread from half its share on, several threads from their shares
    // on (src + dst of mb16ic64ih28 are 6.4 MB, between 2 and 8 MiB). The statistics'
    // algorithm does not follow the thread count: the fused one-pass sums either way.
    p.src = tensor_desc({16, 64, 28, 28}, format_tag::nChw16c);
    for (int nthr : {1, 2}) {
        m.nthr = nthr;
        ASSERT_EQ(bnorm_init_conf(c, p, isa::avx512_core, m, why), status::success) << why;
        EXPECT_EQ(c.nt_store, nthr == 1) << "nthr " << nthr;
        EXPECT_TRUE(c.fuse_next_stats) << "nthr " << nthr;
        EXPECT_TRUE(c.stats[0].f64_sums) << "nthr " << nthr;
    }
    // Threads past the cores share the cores' shares: 8 threads count on the 16 MiB of 4 cores,
    // which the 25.6 MB of src + dst of mb16ic64ih56 exceed.
    p.src = tensor_desc({16, 64, 56, 56}, format_tag::nChw16c);
    m.nthr = 8;
    ASSERT_EQ(bnorm_init_conf(c, p, isa::avx512_core, m, why), status::success) << why;
    EXPECT_TRUE(c.nt_store);
    m.nthr = 1;
    // Not with a tensor that stays in the cache (the statistics pass re-reads it from there).
    p.src = tensor_desc({4, 64, 14, 14}, format_tag::nChw16c);
    ASSERT_EQ(bnorm_init_conf(c, p, isa::avx512_core, m, why), status::success) << why;
    EXPECT_FALSE(c.fuse_next_stats);
    EXPECT_FALSE(c.stats[0].f64_sums);
}

TEST(BnormJitConf, Rejects) {
    bnorm_jit_prb_t p;
    p.src = tensor_desc({2, 17, 5, 5}, format_tag::nChw16c);
    bnorm_conf_t c;
    std::string why;
    EXPECT_EQ(bnorm_init_conf(c, p, isa::scalar, bnorm_machine_t(), why), status::unimplemented);
    EXPECT_NE(why.find("scalar"), std::string::npos) << why;
    p.src = tensor_desc({2, 17, 5}, format_tag::tnc);
    EXPECT_EQ(bnorm_init_conf(c, p, isa::avx2, bnorm_machine_t(), why), status::unimplemented);
    EXPECT_NE(why.find("tnc"), std::string::npos) << why;
}

TEST(BnormJitConf, RegisterBudgetEveryLayout) {
    for (isa i : {isa::avx2, isa::avx512_core})
        for (int nd = 2; nd <= 5; ++nd)
            for (format_tag t : layouts_for(nd))
                for (const run_t &r : all_dirs) {
                    bnorm_jit_prb_t p;
                    p.dir = r.dir;
                    p.global_stats = r.global;
                    p.fuse_relu = true;
                    dims_t dims = {3, 300, 7, 5, 3};
                    dims.resize(nd);
                    p.src = tensor_desc(dims, t);
                    bnorm_conf_t c;
                    std::string why;
                    bnorm_machine_t m;
                    m.l3_share_bytes = 0; // streaming stores, and the fused training path where it applies
                    ASSERT_EQ(bnorm_init_conf(c, p, i, m, why), status::success) << why;
                    for (int k = 0; k < (c.has_last_ker ? 2 : 1); ++k) {
                        EXPECT_LE(bnorm_ker_vregs(c.stats[k]), i == isa::avx2 ? 16 : 32) << to_string(c.stats[k]);
                        EXPECT_LE(bnorm_ker_vregs(c.norm[k]), i == isa::avx2 ? 16 : 32) << to_string(c.norm[k]);
                    }
                    if (c.fuse_next_stats) {
                        EXPECT_LE(bnorm_ker_vregs(c.norm_next), i == isa::avx2 ? 16 : 32) << to_string(c.norm_next);
                    }
                }
}

namespace {

// One layout of EveryFlagAndDirection: the tensor, and its place in the list, from which its
// seeds follow (32 per layout and level: 4 directions x 8 flag sets; avx512_core's run on from
// avx2's).
struct layout_case_t {
    tensor_desc d;
    unsigned index = 0;
};

// Every layout of 0 to 3 spatial dims on a shape with channel tails (37 = 2 x 16 + 5) and an
// odd spatial size.
std::vector<layout_case_t> every_layout() {
    std::vector<layout_case_t> v;
    for (int nd = 2; nd <= 5; ++nd) {
        dims_t dims = {3, 37, 3, 5, 7};
        dims.resize(nd);
        for (format_tag t : layouts_for(nd)) v.push_back({tensor_desc(dims, t), static_cast<unsigned>(v.size())});
    }
    return v;
}

std::string layout_name(const layout_case_t &c) { return dims_str(c.d.dims()) + "_" + to_string(c.d.tag()); }

class BnormJitLayout : public bdtest::isa_test<isa_case_t<layout_case_t>> {};

// One seeded random problem: the tensor and the run (direction, flags).
struct random_case_t {
    int k = 0;
    tensor_desc d;
    run_t r;
};

// Seeded random problems: mb 1-8, c 1-300, 1-3 spatial dims of 1-60 (element count capped so
// the suite stays fast), a random layout, flags and direction.
std::vector<random_case_t> random_problems() {
    std::vector<random_case_t> v;
    std::mt19937 gen(20240607);
    auto rnd = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(gen); };
    for (int k = 0; k < 60; ++k) {
        const int nsp = rnd(0, 3);
        dims_t dims = {rnd(1, 8), rnd(1, 300)};
        for (int s = 0; s < nsp; ++s) dims.push_back(rnd(1, 60));
        auto nelems = [&] {
            dim_t n = 1;
            for (dim_t x : dims) n *= x;
            return n;
        };
        for (int s = 0; s < nsp; ++s) // shrink spatial dims until the problem is small
            while (nelems() > 40000 && dims[2 + s] > 1) dims[2 + s] = (dims[2 + s] + 1) / 2;
        const std::vector<format_tag> tags = layouts_for(2 + nsp);
        const tensor_desc d(dims, tags[rnd(0, static_cast<int>(tags.size()) - 1)]);
        run_t r = all_dirs[rnd(0, 3)];
        r.scale = rnd(0, 1), r.shift = rnd(0, 1), r.relu = rnd(0, 1);
        v.push_back({k, d, r});
    }
    return v;
}

// "p7_mb2ic37ih3iw5_nChw16c_bwd_CHR": the problem's number, tensor, direction and flags.
std::string random_name(const random_case_t &c) {
    const std::string flags = flags_str(c.r);
    // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) on `"p" + std::to_string(...)`
    // once inlined.
    std::string name = "p";
    name.append(std::to_string(c.k)).append("_").append(dims_str(c.d.dims())).append("_");
    name.append(to_string(c.d.tag())).append("_").append(to_string(c.r.dir));
    if (!flags.empty()) name.append("_").append(flags);
    return name;
}

class BnormJitRandom : public bdtest::isa_test<isa_case_t<random_case_t>> {};

// The tests that run a fixed set of problems at each level.
class BnormJitIsa : public bdtest::isa_test<isa> {};

} // namespace

// Every flag combination x every direction on one layout.
TEST_P(BnormJitLayout, EveryFlagAndDirection) {
    const layout_case_t &c = GetParam().desc;
    const unsigned per_level = 32 * static_cast<unsigned>(every_layout().size());
    unsigned seed = 100 + (level() == isa::avx512_core ? per_level : 0) + 32 * c.index;
    for (run_t r : all_dirs)
        for (int f = 0; f < 8; ++f) {
            r.scale = f & 1, r.shift = f & 2, r.relu = f & 4;
            check(c.d, r, level(), seed++);
        }
}

INSTANTIATE_TEST_SUITE_P(EveryLayout, BnormJitLayout,
        ::testing::ValuesIn(bdtest::isa_cases({isa::avx2, isa::avx512_core}, every_layout(), layout_name)),
        bdtest::case_name());

TEST_P(BnormJitRandom, MatchesTheOracles) {
    const random_case_t &c = GetParam().desc;
    check(c.d, c.r, level(), 1000 + static_cast<unsigned>(c.k));
}

INSTANTIATE_TEST_SUITE_P(Seeded, BnormJitRandom,
        ::testing::ValuesIn(bdtest::isa_cases({isa::avx2, isa::avx512_core}, random_problems(), random_name)),
        bdtest::case_name());

// Streaming stores (forced by a machine with no cache) and the fallback for an unaligned dst.
TEST_P(BnormJitIsa, StreamingStores) {
    const isa i = level();
    bnorm_machine_t m = this_machine();
    m.l3_share_bytes = 0;
    for (format_tag t : {format_tag::nChw16c, format_tag::nChw8c, format_tag::nhwc, format_tag::nchw})
        for (const run_t &r : all_dirs) {
            const tensor_desc d({2, 32, 4, 4}, t);
            check(d, r, i, 7, m);
            const auto jit = make_jit(d, r, i, m);
            ASSERT_TRUE(jit);
            EXPECT_TRUE(jit->conf().nt_store) << to_string(jit->conf());
        }
}

namespace {

// Runs a (in mode_a) and b (in mode_b) on the same seeded data of d, scale and shift given,
// and expects the same bits in every output of r's direction.
void expect_same_bits(const tensor_desc &d, const run_t &r, isa i, const bnorm_jit_t &a, bnorm_thr_mode_t mode_a,
        const bnorm_jit_t &b, bnorm_thr_mode_t mode_b) {
    const dim_t C = d.dim(1);
    const tensor src(d), ddst(d), dst_fwd(d), out_a(d), out_b(d);
    fill_random(src, 3);
    fill_random(ddst, 4);
    fill_random(dst_fwd, 9); // backward with relu: both signs, so the mask matters
    const std::vector<float> mean = random_vec(C, 5, -0.5f, 0.5f), var = random_vec(C, 6, 0.1f, 1.f);
    const std::vector<float> sc = random_vec(C, 7, 0.5f, 1.5f), sh = random_vec(C, 8, -1.f, 1.f);
    std::vector<float> ma = mean, va = var, mb = mean, vb = var, dsa(C), dsb(C), dha(C), dhb(C);
    auto run = [&](const bnorm_jit_t &jit, bnorm_thr_mode_t mode, const tensor &out, std::vector<float> &m,
                       std::vector<float> &v, std::vector<float> &ds, std::vector<float> &dh) {
        if (r.dir != bnorm_dir_t::bwd) return jit.execute(fwd_args(src, out, m, v, sc.data(), sh.data()), mode);
        bnorm_bwd_args_t x;
        x.src = src.f32();
        x.mean = m.data();
        x.variance = v.data();
        x.scale = sc.data();
        x.diff_dst = ddst.f32();
        if (r.relu) x.dst_fwd = dst_fwd.f32();
        x.diff_src = out.f32();
        x.diff_scale = ds.data();
        x.diff_shift = dh.data();
        jit.execute(x, mode);
    };
    run(a, mode_a, out_a, ma, va, dsa, dha);
    run(b, mode_b, out_b, mb, vb, dsb, dhb);
    SCOPED_TRACE(run_str(d, r, i));
    EXPECT_EQ(std::memcmp(out_a.data(), out_b.data(), d.size_bytes()), 0);
    EXPECT_EQ(ma, mb);
    EXPECT_EQ(va, vb);
    EXPECT_EQ(dsa, dsb);
    EXPECT_EQ(dha, dhb);
}

} // namespace

// The thread count when the op is created picks the stores and the units' sizes
// (bnorm_init_conf) but not the arithmetic: ops created for 1 and for 2 threads give the same
// bits. The machine's L3 share is
// set so that these tensors fall between half of one core's share and two cores' shares, where
// the two differ.
TEST_P(BnormJitIsa, CreationThreadCountKeepsBits) {
    const isa i = level();
    for (format_tag t : {format_tag::nChw16c, format_tag::nChw8c, format_tag::nhwc, format_tag::nchw})
        for (const run_t &base : all_dirs) {
            const tensor_desc d({2, 32, 20, 20}, t);
            bnorm_machine_t m1 = this_machine(), m2 = m1;
            const long streams = base.dir == bnorm_dir_t::bwd ? 3 : 2;
            m1.l3_share_bytes = m2.l3_share_bytes = static_cast<long>(streams * d.size_bytes());
            m1.cores = m2.cores = 2;
            m1.nthr = 1, m2.nthr = 2;
            run_t r = base;
            r.scale = r.shift = true;
            const auto j1 = make_jit(d, r, i, m1), j2 = make_jit(d, r, i, m2);
            ASSERT_TRUE(j1 && j2);
            if (t == format_tag::nChw8c || (t == format_tag::nChw16c && i == isa::avx512_core)) {
                EXPECT_NE(j1->conf().nt_store, j2->conf().nt_store)
                        << run_str(d, r, i) << ": the test misses the window";
            }
            const threads_guard_t one(1);
            expect_same_bits(d, r, i, *j1, r.mode, *j2, r.mode);
        }
}

// Units of several channel blocks (small images) compute each block as a unit of its own
// would: the same bits as one block per unit, which init_conf picks for a machine of many
// threads. Blocked layouts and, with a channel a block, plain ones. Last units of fewer
// blocks (216 channels: 27 blocks of 8 in units of 7, 7, 7, 6; 235: 15 blocks of 16 in units
// of 4, 4, 4, 3, the last block 11 channels and padding; 190 plain channels in units of 64,
// 64, 62), mb 1 and 3, 1-D and 3-D, plain rows shorter than a vector (5 points) and with a
// partial one (30), relu, every direction.
TEST_P(BnormJitIsa, GroupedBlocksKeepBits) {
    const isa i = level();
    const format_tag tags[] = {format_tag::nChw8c, format_tag::nChw16c, format_tag::nCw16c, format_tag::nCdhw8c,
            format_tag::nchw, format_tag::ncw, format_tag::ncdhw};
    int n_checked = 0;
    for (format_tag t : tags)
        for (dim_t mb : {1, 3})
            for (const run_t &base : all_dirs)
                for (bool relu : {false, true}) {
                    const bool one_d = t == format_tag::nCw16c || t == format_tag::ncw;
                    const bool three_d = t == format_tag::nCdhw8c || t == format_tag::ncdhw;
                    const int nd = one_d ? 3 : three_d ? 5 : 4;
                    const bool c8 = t == format_tag::nChw8c || t == format_tag::nCdhw8c;
                    const bool c16 = t == format_tag::nChw16c || t == format_tag::nCw16c;
                    const dim_t C = c8 ? 216 : c16 ? 235 : 190;
                    const dims_t dims = nd == 3 ? dims_t {mb, C, 5}
                            : nd == 4           ? dims_t {mb, C, 7, 7}
                                                : dims_t {mb, C, 2, 3, 5};
                    const tensor_desc d(dims, t);
                    bnorm_machine_t grouped = this_machine();
                    grouped.l2_bytes = 1 << 24; // units as large as the lanes allow
                    bnorm_machine_t single = grouped;
                    grouped.nthr = 1;
                    single.nthr = 1 << 12; // no unit count of several blocks gives each thread whole units
                    run_t r = base;
                    r.scale = r.shift = true;
                    r.relu = relu;
                    const auto jg = make_jit(d, r, i, grouped), js = make_jit(d, r, i, single);
                    ASSERT_TRUE(jg && js);
                    ASSERT_GT(jg->conf().stats[0].blocks, 1) << run_str(d, r, i);
                    ASSERT_EQ(js->conf().stats[0].blocks, 1) << run_str(d, r, i);
                    const dim_t n_blks = c8 ? div_up(C, 8) : c16 ? div_up(C, 16) : C;
                    EXPECT_GT(n_blks % jg->conf().stats[0].blocks, 1) << "the last unit: several blocks, fewer";
                    const threads_guard_t one(1);
                    expect_same_bits(d, r, i, *jg, r.mode, *js, r.mode);
                    ++n_checked;
                }
    EXPECT_EQ(n_checked, 7 * 2 * 4 * 2);
}

// Inference streaming from memory walks its calls in the tensor's memory order
// (bnorm_conf_t::rows_outer), with the same bits as unit by unit on a machine whose cache
// holds the tensors, on 1, 2 and 3 threads (which split the calls mid-row). Blocked layouts
// with a partial last block (40 channels), plain ones with rows of whole vectors (8 x 12:
// streaming stores) and with a partial one (25 x 15: fused_machine()'s L2 bounds its units to
// one channel), 1-D and 3-D, a unit's row split into several calls (48 x 48 of 8c, 130 x 130
// plain); relu. Units of one row (mb 1) or of several blocks keep the unit order, as do
// training and backward.
TEST_P(BnormJitIsa, InferenceInMemoryOrderKeepsBits) {
    const isa i = level();
    struct shape_t {
        format_tag tag;
        dims_t dims;
    };
    const shape_t shapes[] = {{format_tag::nChw8c, {3, 40, 9, 11}}, {format_tag::nChw16c, {3, 40, 9, 11}},
            {format_tag::nCw16c, {2, 40, 37}}, {format_tag::nCdhw8c, {2, 40, 3, 5, 7}},
            {format_tag::nchw, {3, 40, 8, 12}}, {format_tag::nchw, {3, 40, 25, 15}},
            {format_tag::ncdhw, {2, 24, 4, 8, 8}}, {format_tag::nChw8c, {2, 24, 48, 48}},
            {format_tag::nchw, {2, 8, 130, 130}}};
    bnorm_machine_t cached = this_machine();
    cached.l3_share_bytes = 64 << 20; // the tensors stay in cache: unit by unit
    cached.nthr = 1;
    auto conf_of = [&](const tensor_desc &d, const run_t &r) {
        const auto j = make_jit(d, r, i, fused_machine());
        EXPECT_TRUE(j) << run_str(d, r, i);
        return j ? j->conf() : bnorm_conf_t {};
    };
    dim_t chunks_per_row = 0;
    for (const shape_t &sh : shapes)
        for (bool relu : {false, true}) {
            const tensor_desc d(sh.dims, sh.tag);
            run_t r;
            r.dir = bnorm_dir_t::fwd_inference;
            r.scale = r.shift = true;
            r.relu = relu;
            const auto jm = make_jit(d, r, i, fused_machine()), ju = make_jit(d, r, i, cached);
            ASSERT_TRUE(jm && ju);
            ASSERT_TRUE(jm->conf().rows_outer) << to_string(jm->conf());
            ASSERT_EQ(jm->conf().stats[0].blocks, 1) << to_string(jm->conf());
            ASSERT_FALSE(ju->conf().rows_outer) << to_string(ju->conf());
            chunks_per_row = std::max(chunks_per_row, div_up(jm->conf().row_pts, jm->conf().norm_chunk));
            for (int nthr : {1, 2, 3}) {
                const threads_guard_t t(nthr);
                expect_same_bits(d, r, i, *jm, r.mode, *ju, r.mode);
            }
            for (const run_t &other : all_dirs) {
                run_t o = other;
                o.relu = relu;
                if (o.dir == bnorm_dir_t::fwd_inference) continue;
                EXPECT_FALSE(conf_of(d, o).rows_outer) << run_str(d, o, i);
            }
            if (sh.tag == format_tag::nchw || sh.tag == format_tag::ncdhw) continue; // mb 1 groups plain rows
            dims_t one = sh.dims;
            one[0] = 1;
            const bnorm_conf_t c1 = conf_of(tensor_desc(one, sh.tag), r);
            EXPECT_EQ(c1.stats[0].blocks, 1) << to_string(c1);
            EXPECT_FALSE(c1.rows_outer) << to_string(c1);
        }
    EXPECT_GT(chunks_per_row, 1) << "a unit's row split into several calls";
    // Plain rows from memory without streaming stores (a partial vector) group channels.
    run_t r;
    r.dir = bnorm_dir_t::fwd_inference;
    const bnorm_conf_t grouped = conf_of(tensor_desc({3, 40, 5, 5}, format_tag::nchw), r);
    EXPECT_GT(grouped.stats[0].blocks, 1) << to_string(grouped);
    EXPECT_FALSE(grouped.rows_outer) << to_string(grouped);
}

// The two threading modes give the same bits (statistics fold in one fixed order).
TEST_P(BnormJitIsa, ThreadModesBitIdentical) {
    const isa i = level();
    for (format_tag t : {format_tag::nChw16c, format_tag::nhwc, format_tag::nchw})
        for (const run_t &base : all_dirs) {
            const tensor_desc d({4, 40, 9, 11}, t);
            run_t a = base, b = base;
            a.mode = bnorm_thr_mode_t::by_unit;
            b.mode = bnorm_thr_mode_t::within_unit;
            a.scale = b.scale = a.shift = b.shift = true;
            const auto ja = make_jit(d, a, i, this_machine()), jb = make_jit(d, b, i, this_machine());
            ASSERT_TRUE(ja && jb);
            expect_same_bits(d, a, i, *ja, a.mode, *jb, b.mode);
        }
}

// The fused training path (bnorm_conf_t::fuse_next_stats) against the naive forward (one
// thread, by_unit: most units' statistics are gathered inside the previous unit's
// normalization), and 1 and 2 threads in both threading modes giving the same bits (the
// within_unit runs gather the statistics with fwd_stats alone). Shapes: partial last blocks
// (40, 200 channels: zero padding lanes), odd spatial sizes that split rows into unequal
// statistics calls, mb 1, 1-D and 3-D.
TEST_P(BnormJitIsa, FusedNextStats) {
    const bnorm_machine_t m = fused_machine();
    const dims_t shapes[] = {{3, 40, 17, 19}, {1, 64, 23, 29}, {2, 200, 7, 9}, {2, 48, 301}, {1, 32, 3, 9, 13}};
    const format_tag tags16[] = {format_tag::nCw16c, format_tag::nChw16c, format_tag::nCdhw16c};
    const format_tag tags8[] = {format_tag::nCw8c, format_tag::nChw8c, format_tag::nCdhw8c};
    const isa i = level();
    for (const dims_t &dims : shapes)
        for (int blk : {16, 8}) {
            const tensor_desc d(dims, (blk == 16 ? tags16 : tags8)[dims.size() - 3]);
            const dim_t C = dims[1];
            run_t r;
            r.scale = r.shift = r.relu = true;
            r.mode = bnorm_thr_mode_t::by_unit;
            const auto jit = make_jit(d, r, i, m);
            ASSERT_TRUE(jit);
            // avx512 always fuses blocked training here; avx2 has the registers for 8c only.
            EXPECT_EQ(jit->conf().fuse_next_stats, i == isa::avx512_core || blk == 8) << to_string(jit->conf());
            const tensor src(d);
            fill_random(src, 31);
            const std::vector<float> scale = random_vec(C, 32, 0.5f, 1.5f), shift = random_vec(C, 33, -1.f, 1.f);
            {
                const threads_guard_t one(1);
                fwd_case(src, r, i, scale, shift, std::vector<float>(C), std::vector<float>(C), m);
            }
            std::vector<tensor> dst;
            std::vector<std::vector<float>> mean, var;
            for (int nthr : {1, 2})
                for (bnorm_thr_mode_t mode : {bnorm_thr_mode_t::by_unit, bnorm_thr_mode_t::within_unit}) {
                    const threads_guard_t threads(nthr);
                    dst.emplace_back(d);
                    mean.emplace_back(C), var.emplace_back(C);
                    jit->execute(fwd_args(src, dst.back(), mean.back(), var.back(), scale.data(), shift.data()), mode);
                }
            SCOPED_TRACE(run_str(d, r, i));
            for (std::size_t k = 1; k < dst.size(); ++k) { // runs: 1 thread by_unit, within_unit, 2 threads ...
                EXPECT_EQ(std::memcmp(dst[0].data(), dst[k].data(), d.size_bytes()), 0) << "run " << k;
                EXPECT_EQ(mean[0], mean[k]) << "run " << k;
                EXPECT_EQ(var[0], var[k]) << "run " << k;
            }
        }
}

namespace {

// p's conf on the fused-test machine in c and, when it fuses the next unit's sums, its
// statistics kernel and fused normalization (regular stores, so tests read dst back), created;
// stats stays null when it does not fuse.
void make_fused_kernels(const bnorm_jit_prb_t &p, isa i, bnorm_conf_t &c, std::unique_ptr<jit_generator_t> &stats,
        std::unique_ptr<jit_generator_t> &norm) {
    std::string why;
    ASSERT_EQ(bnorm_init_conf(c, p, i, fused_machine(), why), status::success) << why;
    if (!c.fuse_next_stats) return;
    bnorm_ker_conf_t nk = c.norm_next;
    nk.nt_store = false;
    stats = make_bnorm_kernel(c.stats[0]);
    norm = make_bnorm_kernel(nk);
    ASSERT_EQ(stats->create(why), status::success) << why;
    ASSERT_EQ(norm->create(why), status::success) << why;
}

} // namespace

// The fused normalization's sums of the next unit are the same doubles as fwd_stats' on the
// same points (the float mean and variance would hide most differences in summation order,
// so this compares the kernels' raw results): one call of each, for call sizes that do and
// do not fill the unroll, on data whose exponents spread so widely that double sums round
// (and a different order would show in the bits).
TEST_P(BnormJitIsa, FusedAndStandaloneSumsSameBits) {
    const isa i = level();
    for (format_tag t : {format_tag::nChw16c, format_tag::nChw8c}) {
        bnorm_jit_prb_t p;
        p.src = tensor_desc({1, 32, 17, 19}, t);
        bnorm_conf_t c;
        std::unique_ptr<jit_generator_t> stats, norm;
        ASSERT_NO_FATAL_FAILURE(make_fused_kernels(p, i, c, stats, norm));
        if (!stats) continue; // avx2 with 16c blocks
        const tensor src(p.src), dst(p.src);
        fill_random(src, 41);
        for (dim_t k = 0; k < p.src.nelems_padded(); ++k) // exponents spread over 2^24
            src.f32()[k] = std::ldexp(src.f32()[k], static_cast<int>(k * 7 % 25) - 12);
        const int S = c.stats[0].c_vecs * c.simd_w;
        alignas(64) float prm[5 * 64] = {}; // the normalization's parameters: any finite values
        for (int l = 0; l < S; ++l) prm[2 * S + l] = prm[3 * S + l] = 1.f;
        for (dim_t n : {dim_t(1), dim_t(2), dim_t(7), c.row_pts}) {
            alignas(64) double a[3 * 64], b[3 * 64];
            std::fill(a, a + 3 * 64, -1.0), std::fill(b, b + 3 * 64, -2.0);
            bnorm_call_args_t sa;
            sa.src = src.f32() + c.unit_stride; // unit 1
            sa.out = reinterpret_cast<float *>(a);
            sa.n_pts = n;
            stats->entry<bnorm_kernel_fn_t>()(&sa);
            bnorm_call_args_t na;
            na.src = src.f32(); // normalizes unit 0 ...
            na.dst = dst.f32();
            na.pf_src = src.f32() + c.unit_stride; // ... while summing unit 1
            na.prm = prm;
            na.out = reinterpret_cast<float *>(b);
            na.n_pts = n;
            na.eps = 1e-5f;
            norm->entry<bnorm_kernel_fn_t>()(&na);
            SCOPED_TRACE(cat(to_string(i), " ", to_string(t), " points ", n));
            EXPECT_EQ(std::memcmp(a, b, 3 * S * sizeof(double)), 0);
            for (int w = 0; w < 3; ++w) EXPECT_NE(a[w * S], -1.0) << "row " << w << " was not written";
        }
    }
}

// The fused backward (bnorm_conf_t::fuse_next_stats) against the library's reference backward
// (one thread, by_unit: most units' sums are gathered inside the previous unit's
// normalization), and 1 and 2 threads giving the same bits in both threading modes (within_unit
// sums with bwd_stats alone). The training form with and without scale and shift, and global
// statistics with scale and shift (the sums give diff_scale and diff_shift); shapes as in
// FusedNextStats.
TEST_P(BnormJitIsa, FusedNextStatsBackward) {
    const bnorm_machine_t m = fused_machine();
    const dims_t shapes[] = {{3, 40, 17, 19}, {1, 64, 23, 29}, {2, 200, 7, 9}, {2, 48, 301}, {1, 32, 3, 9, 13}};
    const format_tag tags16[] = {format_tag::nCw16c, format_tag::nChw16c, format_tag::nCdhw16c};
    const format_tag tags8[] = {format_tag::nCw8c, format_tag::nChw8c, format_tag::nCdhw8c};
    run_t runs[3];
    runs[0].scale = runs[0].shift = true;
    runs[2].scale = runs[2].shift = runs[2].global = true;
    const isa i = level();
    unsigned seed = 50;
    for (const dims_t &dims : shapes)
        for (int blk : {16, 8})
            for (run_t r : runs) {
                r.dir = bnorm_dir_t::bwd;
                r.mode = bnorm_thr_mode_t::by_unit;
                const tensor_desc d(dims, (blk == 16 ? tags16 : tags8)[dims.size() - 3]);
                const dim_t C = dims[1];
                const auto jit = make_jit(d, r, i, m);
                ASSERT_TRUE(jit);
                // avx512 always fuses blocked backward here; avx2 has the registers for 8c only.
                EXPECT_EQ(jit->conf().fuse_next_stats, i == isa::avx512_core || blk == 8) << to_string(jit->conf());
                const tensor src(d), ddst(d);
                fill_random(src, ++seed);
                fill_random(ddst, ++seed);
                const std::vector<float> scale = random_vec(C, ++seed, 0.5f, 1.5f),
                                         shift = random_vec(C, ++seed, -1.f, 1.f);
                const std::vector<float> mean = random_vec(C, ++seed, -0.5f, 0.5f),
                                         var = random_vec(C, ++seed, 0.1f, 1.5f);
                {
                    const threads_guard_t one(1);
                    bwd_case(src, ddst, r, i, scale, shift, mean, var, m);
                }
                for (int nthr : {1, 2}) {
                    const threads_guard_t threads(nthr);
                    SCOPED_TRACE(cat("threads ", nthr));
                    expect_same_bits(d, r, i, *jit, bnorm_thr_mode_t::by_unit, *jit, bnorm_thr_mode_t::within_unit);
                }
            }
}

// The fused backward normalization's sums of the next unit are the same floats as bwd_stats'
// on the same points: one call of each, for call sizes that do and do not fill the unroll, on
// data whose exponents spread so widely that the float sums round (a different order would
// show in the bits).
TEST_P(BnormJitIsa, FusedAndStandaloneBackwardSumsSameBits) {
    const isa i = level();
    for (format_tag t : {format_tag::nChw16c, format_tag::nChw8c})
        for (bool global : {false, true}) {
            bnorm_jit_prb_t p;
            p.dir = bnorm_dir_t::bwd;
            p.global_stats = global;
            p.use_scale = p.use_shift = true;
            p.src = tensor_desc({1, 32, 17, 19}, t);
            bnorm_conf_t c;
            std::unique_ptr<jit_generator_t> stats, norm;
            ASSERT_NO_FATAL_FAILURE(make_fused_kernels(p, i, c, stats, norm));
            if (!stats) continue; // avx2 with 16c blocks
            const tensor src(p.src), ddst(p.src), dsrc(p.src);
            fill_random(src, 61);
            fill_random(ddst, 62);
            for (dim_t k = 0; k < p.src.nelems_padded(); ++k) { // exponents spread over 2^24
                src.f32()[k] = std::ldexp(src.f32()[k], static_cast<int>(k * 7 % 25) - 12);
                ddst.f32()[k] = std::ldexp(ddst.f32()[k], static_cast<int>(k * 5 % 25) - 12);
            }
            const int S = c.stats[0].c_vecs * c.simd_w;
            // The statistics' prm is unit 1's mean; the normalization's [mean, A, B, C] of unit
            // 0 (any finite values), then unit 1's mean.
            alignas(64) float sprm[64], nprm[5 * 64] = {};
            for (int l = 0; l < S; ++l) {
                sprm[l] = nprm[4 * S + l] = 0.01f * static_cast<float>(l) - 0.05f;
                nprm[S + l] = nprm[2 * S + l] = 1.f;
            }
            for (dim_t n : {dim_t(1), dim_t(2), dim_t(7), c.row_pts}) {
                alignas(64) float a[3 * 64], b[3 * 64];
                std::fill(a, a + 3 * 64, -1.f), std::fill(b, b + 3 * 64, -2.f);
                bnorm_call_args_t sa;
                sa.src = src.f32() + c.unit_stride; // unit 1
                sa.diff_dst = ddst.f32() + c.unit_stride;
                sa.prm = sprm;
                sa.out = a;
                sa.n_pts = n;
                stats->entry<bnorm_kernel_fn_t>()(&sa);
                bnorm_call_args_t na;
                na.src = src.f32(); // normalizes unit 0 ...
                na.diff_dst = ddst.f32();
                na.diff_src = dsrc.f32();
                na.pf_src = src.f32() + c.unit_stride; // ... while summing unit 1
                na.pf_ddst = ddst.f32() + c.unit_stride;
                na.prm = nprm;
                na.out = b;
                na.n_pts = n;
                norm->entry<bnorm_kernel_fn_t>()(&na);
                SCOPED_TRACE(cat(to_string(i), " ", to_string(t), global ? " global" : "", " points ", n));
                const int sums = global ? 2 : 3; // sum(xm) only in the training form
                EXPECT_EQ(std::memcmp(a, b, static_cast<std::size_t>(sums * S) * sizeof(float)), 0);
                for (int w = 0; w < sums; ++w) EXPECT_NE(a[w * S], -1.f) << "row " << w << " was not written";
            }
        }
}

INSTANTIATE_TEST_SUITE_P(Isa, BnormJitIsa, ::testing::Values(isa::avx2, isa::avx512_core), bdtest::case_name());
