// SPDX-License-Identifier: Apache-2.0
// JIT batch normalization against the oracles: the naive forward of bnorm_test_util.hpp and
// the library's reference backward, at every JIT ISA the machine has, on every layout and flag
// combination, seeded random problems, and the numerical edge cases (constant channels, a
// channel of 1e4 + small noise, values near the float limits, NaN), plus init_conf checks and
// bit-identity across threading modes.
#include <cstring>
#include <memory>

#include "bnorm/bnorm_bwd_ref.hpp"
#include "bnorm/bnorm_jit.hpp"
#include "bnorm_test_util.hpp"
#include "common/parallel.hpp"
#include "common/utils.hpp"

using namespace blockdnn;
using namespace blockdnn::impl;
using namespace bnorm_test;

namespace {

std::vector<isa> jit_isas() {
    std::vector<isa> v;
    for (isa i : {isa::avx2, isa::avx512_core})
        if (i <= detected_isa()) v.push_back(i);
    return v;
}

bnorm_machine_t this_machine() {
    bnorm_machine_t m;
    const cpu_features &f = cpu();
    if (f.l1d_bytes) m.l1d_bytes = f.l1d_bytes;
    if (f.l2_bytes) m.l2_bytes = f.l2_bytes;
    if (f.l3_bytes) m.l3_bytes = f.l3_bytes;
    m.nthr = parallel_max_threads();
    return m;
}

// One run's settings.
struct run_t {
    bnorm_dir_t dir = bnorm_dir_t::fwd_training;
    bool scale = false, shift = false, relu = false, global = false;
    float eps = 1e-5f;
    bnorm_thr_mode_t mode = bnorm_thr_mode_t::automatic;
};

std::string run_str(const tensor_desc &d, const run_t &r, isa i) {
    std::string f = std::string(r.global ? "G" : "") + (r.scale ? "C" : "") + (r.shift ? "H" : "") + (r.relu ? "R" : "");
    return cat(to_string(i), "/", dims_str(d.dims()), "/", to_string(d.tag()), "/", to_string(r.dir), "/flags=", f);
}

std::unique_ptr<bnorm_jit_t> make_jit(const tensor_desc &d, const run_t &r, isa i, const bnorm_machine_t &m) {
    bnorm_jit_prb_t p;
    p.dir = r.dir;
    p.src = d;
    p.eps = r.eps;
    p.use_scale = r.scale;
    p.use_shift = r.shift;
    p.fuse_relu = r.relu;
    p.global_stats = r.global;
    std::unique_ptr<bnorm_jit_t> jit;
    std::string why;
    const status s = bnorm_jit_t::create(jit, p, i, m, why);
    EXPECT_EQ(s, status::success) << why;
    return jit;
}

// Blocked layouts: every padding element of t equals 0.
void expect_zero_padding(const tensor &t, const std::string &what) {
    const tensor_desc &d = t.desc();
    if (!d.is_blocked()) return;
    int bad = 0;
    const dims_t pd = d.padded_dims();
    for (dim_t n = 0; n < d.dim(0); ++n)
        for (dim_t c = d.dim(1); c < pd[1]; ++c) {
            dim_t sp = 1;
            for (int k = 2; k < d.ndims(); ++k) sp *= d.dim(k);
            for (dim_t s = 0; s < sp; ++s) {
                dim_t idx[max_ndims] = {n, c};
                dim_t rest = s;
                for (int k = d.ndims() - 1; k >= 2; --k) idx[k] = rest % d.dim(k), rest /= d.dim(k);
                if (t.f32()[d.offset(idx)] != 0.f) ++bad;
            }
        }
    EXPECT_EQ(bad, 0) << what << ": padding channels not zero";
}

// Runs the JIT and the oracle on seeded data for one problem and compares.
void check(const tensor_desc &d, const run_t &r, isa i, unsigned seed, const bnorm_machine_t &m = this_machine()) {
    SCOPED_TRACE(run_str(d, r, i));
    const auto jit = make_jit(d, r, i, m);
    if (!jit) return;
    const dim_t C = d.dim(1);
    const tensor src(d);
    fill_random(src, seed);
    std::vector<float> scale = random_vec(C, seed + 1, 0.5f, 1.5f), shift = random_vec(C, seed + 2, -1.f, 1.f);
    std::vector<float> mean = random_vec(C, seed + 3, -0.5f, 0.5f), var = random_vec(C, seed + 4, 0.1f, 1.5f);
    const float *sc = r.scale ? scale.data() : nullptr, *sh = r.shift ? shift.data() : nullptr;

    if (r.dir != bnorm_dir_t::bwd) {
        const bool training = r.dir == bnorm_dir_t::fwd_training;
        const tensor dst(d), want(d);
        std::fill(dst.f32(), dst.f32() + d.nelems_padded(), 7.f); // padding must be overwritten
        std::vector<float> jmean = mean, jvar = var, wmean = mean, wvar = var;
        if (training) std::fill(jmean.begin(), jmean.end(), -1.f), std::fill(jvar.begin(), jvar.end(), -1.f);
        bnorm_jit_mem_t mem;
        mem.src = src.f32();
        mem.dst = dst.f32();
        mem.mean = jmean.data();
        mem.variance = jvar.data();
        mem.scale = sc;
        mem.shift = sh;
        jit->execute(mem, r.mode);
        naive_fwd(d, src.f32(), want.f32(), wmean, wvar, training, sc, sh, r.eps, r.relu);
        expect_near(d, dst.f32(), want.f32(), 1e-5, 1e-5, "dst");
        expect_zero_padding(dst, "dst");
        if (training) {
            expect_near(jmean, wmean, 1e-6, 1e-6, "mean");
            expect_near(jvar, wvar, 1e-7, 1e-5, "variance");
        }
        return;
    }

    // Backward: statistics of src (training form) or the random ones (global), the forward
    // dst for the relu mask, a random diff_dst.
    const tensor dst_fwd(d), ddst(d), dsrc(d), want(d);
    naive_fwd(d, src.f32(), dst_fwd.f32(), mean, var, !r.global, sc, sh, r.eps, r.relu);
    fill_random(ddst, seed + 5);
    std::fill(dsrc.f32(), dsrc.f32() + d.nelems_padded(), 7.f);
    std::vector<float> jdscale(C, -1.f), jdshift(C, -1.f), wdscale(C, -1.f), wdshift(C, -1.f);
    bnorm_jit_mem_t mem;
    mem.src = src.f32();
    mem.mean = mean.data();
    mem.variance = var.data();
    mem.scale = sc;
    mem.diff_dst = ddst.f32();
    mem.dst_fwd = r.relu ? dst_fwd.f32() : nullptr;
    mem.diff_src = dsrc.f32();
    mem.diff_scale = r.scale ? jdscale.data() : nullptr;
    mem.diff_shift = r.shift ? jdshift.data() : nullptr;
    jit->execute(mem, r.mode);

    bnorm_bwd_ref_prb_t rp;
    rp.src = rp.diff_dst = rp.diff_src = rp.dst = d;
    rp.eps = r.eps;
    rp.use_scale = r.scale;
    rp.fuse_relu = r.relu;
    rp.global_stats = r.global;
    bnorm_bwd_ref(rp, src.f32(), mean.data(), var.data(), sc, dst_fwd.f32(), ddst.f32(), want.f32(), wdscale.data(),
            wdshift.data());
    expect_near(d, dsrc.f32(), want.f32(), 1e-4, 1e-4, "diff_src");
    expect_zero_padding(dsrc, "diff_src");
    const double n = static_cast<double>(d.nelems() / C);
    if (r.scale) expect_near(jdscale, wdscale, 1e-6 * n, 1e-5, "diff_scale");
    if (r.shift) expect_near(jdshift, wdshift, 1e-6 * n, 1e-5, "diff_shift");
}

const run_t all_dirs[] = {
        {bnorm_dir_t::fwd_inference}, {bnorm_dir_t::fwd_training}, {bnorm_dir_t::bwd},
        {bnorm_dir_t::bwd, false, false, false, true},
};

} // namespace

TEST(bnorm_jit_conf, blocking) {
    bnorm_jit_prb_t p;
    p.src = tensor_desc({2, 17, 5, 5}, format_tag::nChw16c);
    bnorm_conf_t c;
    std::string why;
    ASSERT_EQ(bnorm_init_conf(c, p, isa::avx512_core, bnorm_machine_t(), why), status::success) << why;
    EXPECT_EQ(c.layout, bnorm_layout_t::blocked);
    EXPECT_EQ(c.simd_w, 16);
    EXPECT_EQ(c.n_units, 2);
    EXPECT_EQ(c.stats[0].c_vecs, 1);
    EXPECT_EQ(c.row_pts, 25);
    ASSERT_EQ(bnorm_init_conf(c, p, isa::avx2, bnorm_machine_t(), why), status::success) << why;
    EXPECT_EQ(c.simd_w, 8);
    EXPECT_EQ(c.stats[0].c_vecs, 2);

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

    p.src = tensor_desc({16, 256, 56, 56}, format_tag::nChw16c);
    bnorm_machine_t m;
    m.l3_bytes = 32 << 20;
    ASSERT_EQ(bnorm_init_conf(c, p, isa::avx512_core, m, why), status::success) << why;
    EXPECT_TRUE(c.nt_store); // 2 x 51 MB exceed the 32 MB L3
    for (const bnorm_ker_conf_t *k : {&c.stats[0], &c.norm[0]}) EXPECT_LE(bnorm_ker_vregs(*k), 32) << to_string(*k);
}

TEST(bnorm_jit_conf, rejects) {
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

TEST(bnorm_jit_conf, register_budget_every_layout) {
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
                    ASSERT_EQ(bnorm_init_conf(c, p, i, bnorm_machine_t(), why), status::success) << why;
                    for (int k = 0; k < (c.has_last_ker ? 2 : 1); ++k) {
                        EXPECT_LE(bnorm_ker_vregs(c.stats[k]), i == isa::avx2 ? 16 : 32) << to_string(c.stats[k]);
                        EXPECT_LE(bnorm_ker_vregs(c.norm[k]), i == isa::avx2 ? 16 : 32) << to_string(c.norm[k]);
                    }
                }
}

// Every layout x every flag combination x every direction, on a shape with channel tails
// (37 = 2 x 16 + 5) and an odd spatial size.
TEST(bnorm_jit, every_layout_and_flag) {
    unsigned seed = 100;
    for (isa i : jit_isas())
        for (int nd = 2; nd <= 5; ++nd) {
            dims_t dims = {3, 37, 3, 5, 7};
            dims.resize(nd);
            for (format_tag t : layouts_for(nd))
                for (run_t r : all_dirs)
                    for (int f = 0; f < 8; ++f) {
                        r.scale = f & 1, r.shift = f & 2, r.relu = f & 4;
                        check(tensor_desc(dims, t), r, i, seed++);
                    }
        }
}

// Seeded random problems: mb 1-8, c 1-300, 1-3 spatial dims of 1-60 (element count capped so
// the suite stays fast), a random layout, flags and direction.
TEST(bnorm_jit, random_problems) {
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
        for (isa i : jit_isas()) check(d, r, i, 1000 + k);
    }
}

// Streaming stores (forced by a machine with no cache) and the fallback for an unaligned dst.
TEST(bnorm_jit, streaming_stores) {
    bnorm_machine_t m = this_machine();
    m.l3_bytes = 0;
    for (isa i : jit_isas())
        for (format_tag t : {format_tag::nChw16c, format_tag::nChw8c, format_tag::nhwc, format_tag::nchw})
            for (const run_t &r : all_dirs) {
                const tensor_desc d({2, 32, 4, 4}, t);
                check(d, r, i, 7, m);
                const auto jit = make_jit(d, r, i, m);
                ASSERT_TRUE(jit);
                EXPECT_TRUE(jit->conf().nt_store) << to_string(jit->conf());
            }
}

// The two threading modes give the same bits (statistics fold in one fixed order).
TEST(bnorm_jit, thread_modes_bit_identical) {
    for (isa i : jit_isas())
        for (format_tag t : {format_tag::nChw16c, format_tag::nhwc, format_tag::nchw})
            for (const run_t &base : all_dirs) {
                const tensor_desc d({4, 40, 9, 11}, t);
                run_t a = base, b = base;
                a.mode = bnorm_thr_mode_t::by_unit;
                b.mode = bnorm_thr_mode_t::within_unit;
                a.scale = b.scale = a.shift = b.shift = true;
                const auto ja = make_jit(d, a, i, this_machine()), jb = make_jit(d, b, i, this_machine());
                ASSERT_TRUE(ja && jb);
                const tensor src(d), ddst(d), out_a(d), out_b(d);
                fill_random(src, 3);
                fill_random(ddst, 4);
                std::vector<float> mean = random_vec(40, 5, -0.5f, 0.5f), var = random_vec(40, 6, 0.1f, 1.f);
                std::vector<float> sc = random_vec(40, 7, 0.5f, 1.5f), sh = random_vec(40, 8, -1.f, 1.f);
                std::vector<float> ma = mean, va = var, mb = mean, vb = var, dsa(40), dsb(40), dha(40), dhb(40);
                auto mem = [&](const tensor &out, std::vector<float> &m, std::vector<float> &v, std::vector<float> &ds,
                                   std::vector<float> &dh) {
                    bnorm_jit_mem_t x;
                    x.src = src.f32();
                    x.dst = out.f32();
                    x.mean = m.data();
                    x.variance = v.data();
                    x.scale = sc.data();
                    x.shift = sh.data();
                    x.diff_dst = ddst.f32();
                    x.diff_src = out.f32();
                    x.diff_scale = ds.data();
                    x.diff_shift = dh.data();
                    return x;
                };
                ja->execute(mem(out_a, ma, va, dsa, dha), a.mode);
                jb->execute(mem(out_b, mb, vb, dsb, dhb), b.mode);
                SCOPED_TRACE(run_str(d, a, i));
                EXPECT_EQ(std::memcmp(out_a.data(), out_b.data(), d.size_bytes()), 0);
                EXPECT_EQ(ma, mb);
                EXPECT_EQ(va, vb);
                EXPECT_EQ(dsa, dsb);
                EXPECT_EQ(dha, dhb);
            }
}
