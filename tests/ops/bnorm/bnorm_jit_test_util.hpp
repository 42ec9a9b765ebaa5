// SPDX-License-Identifier: Apache-2.0
// Running the JIT batch normalization beside its oracles in tests: the machine description,
// building the op for one run, and fwd_case / bwd_case, which run both on given data and
// compare (dst, statistics, diff_src, diff_scale, diff_shift, blocked padding).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "blockdnn/stream.hpp"
#include "ops/bnorm/bnorm_bwd_ref.hpp"
#include "ops/bnorm/bnorm_jit.hpp"
#include "bnorm_test_util.hpp"
#include "sched/parallel.hpp"
#include "core/utils.hpp"

namespace bnorm_test {

using namespace blockdnn::impl;

/// The JIT ISA levels this machine has.
inline std::vector<isa> jit_isas() {
    std::vector<isa> v;
    for (isa i : {isa::avx2, isa::avx512_core})
        if (i <= detected_isa()) v.push_back(i);
    return v;
}

/// The machine the library's jit rows plan for.
inline bnorm_machine_t this_machine() { return bnorm_this_machine(); }

/// A machine on which training on blocked layouts takes the fused path of one thread
/// (bnorm_conf_t::fuse_next_stats): no L3 share, so streaming stores, and a 16 KiB L2, so rows of
/// more than 256 points (16c) split into several statistics calls. Its FMAs are the reference
/// machine's, so that the statistics unroll, and with it whether the fused kernels fit the
/// registers, does not depend on the CPU.
inline bnorm_machine_t fused_machine() {
    bnorm_machine_t m = this_machine();
    m.l3_share_bytes = 0;
    m.l2_bytes = 16 << 10;
    const machine_model_t reference;
    m.avx2 = reference.avx2;
    m.avx512 = reference.avx512;
    return m;
}

/// The machines the numerical edge cases run on: this one, and fused_machine() on one thread
/// (the fused path needs two units on a thread). threads: the count to set (0: as is).
struct edge_machine_t {
    bnorm_machine_t m;
    int threads;
};
inline std::vector<edge_machine_t> edge_machines() { return {{this_machine(), 0}, {fused_machine(), 1}}; }

/// One run's settings.
struct run_t {
    bnorm_dir_t dir = bnorm_dir_t::fwd_training;
    bool scale = false, shift = false, relu = false, global = false;
    float eps = 1e-5f;
    bnorm_thr_mode_t mode = bnorm_thr_mode_t::automatic;
};

/// Every direction: inference, training, backward (training form), backward (global stats).
inline const run_t all_dirs[] = {
        {bnorm_dir_t::fwd_inference},
        {bnorm_dir_t::fwd_training},
        {bnorm_dir_t::bwd},
        {bnorm_dir_t::bwd, false, false, false, true},
};

/// A run's flags in benchdnn's letters: G global stats, C scale, H shift, R relu ("CHR").
inline std::string flags_str(const run_t &r) {
    return std::string(r.global ? "G" : "") + (r.scale ? "C" : "") + (r.shift ? "H" : "") + (r.relu ? "R" : "");
}

/// "avx512_core/mb2ic37ih3iw5/nChw16c/fwd_training/flags=CHR" for traces.
inline std::string run_str(const tensor_desc &d, const run_t &r, isa i) {
    return cat(to_string(i), "/", dims_str(d.dims()), "/", to_string(d.tag()), "/", to_string(r.dir),
            "/flags=", flags_str(r));
}

inline std::unique_ptr<bnorm_jit_t> make_jit(const tensor_desc &d, const run_t &r, isa i, const bnorm_machine_t &m) {
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

/// A forward run's arguments: src, dst, the statistics (read in inference, written in
/// training), scale and shift (null when not used).
inline bnorm_args_t fwd_args(const tensor &src, const tensor &dst, std::vector<float> &mean, std::vector<float> &var,
        const float *scale, const float *shift) {
    bnorm_args_t a;
    a.src = src.f32();
    a.dst = dst.f32();
    a.mean = mean.data();
    a.variance = var.data();
    a.scale = scale;
    a.shift = shift;
    return a;
}

/// Tolerances of one comparison (|got - want| <= atol + rtol |want|).
struct tol_t {
    double dst_a = 1e-5, dst_r = 1e-5; // dst, diff_src
    double mean_a = 1e-6, mean_r = 1e-6;
    double var_a = 1e-7, var_r = 1e-5;
    double dw_r = 1e-5; // diff_scale / diff_shift (atol: 1e-6 per value summed)
};

/// Forward: runs the JIT and the naive forward on src (inference reads mean/var) and compares.
/// Returns the JIT's dst for further checks.
inline tensor fwd_case(const tensor &src, const run_t &r, isa i, const std::vector<float> &scale,
        const std::vector<float> &shift, const std::vector<float> &mean, const std::vector<float> &var,
        const bnorm_machine_t &m = this_machine(), const tol_t &tol = tol_t()) {
    const tensor_desc &d = src.desc();
    SCOPED_TRACE(run_str(d, r, i));
    const tensor dst(d), want(d);
    const auto jit = make_jit(d, r, i, m);
    if (!jit) return dst;
    const bool training = r.dir == bnorm_dir_t::fwd_training;
    const float *sc = r.scale ? scale.data() : nullptr, *sh = r.shift ? shift.data() : nullptr;
    std::fill(dst.f32(), dst.f32() + d.nelems_padded(), 7.f); // padding must be overwritten
    std::vector<float> jmean = mean, jvar = var, wmean = mean, wvar = var;
    if (training) std::fill(jmean.begin(), jmean.end(), -1.f), std::fill(jvar.begin(), jvar.end(), -1.f);
    jit->execute(fwd_args(src, dst, jmean, jvar, sc, sh), r.mode);
    naive_fwd(d, src.f32(), want.f32(), wmean, wvar, training, sc, sh, r.eps, r.relu);
    expect_near(d, dst.f32(), want.f32(), tol.dst_a, tol.dst_r, "dst");
    expect_zero_padding(dst, "dst");
    if (training) {
        expect_near(jmean, wmean, tol.mean_a, tol.mean_r, "mean");
        expect_near(jvar, wvar, tol.var_a, tol.var_r, "variance");
    }
    return dst;
}

/// Backward: statistics of src (training form) or mean/var as given (global), the forward dst
/// for the relu mask from the naive forward, then the JIT against bnorm_bwd_ref. Returns the
/// JIT's diff_src.
inline tensor bwd_case(const tensor &src, const tensor &ddst, const run_t &r, isa i, const std::vector<float> &scale,
        const std::vector<float> &shift, std::vector<float> mean, std::vector<float> var,
        const bnorm_machine_t &m = this_machine(), const tol_t &tol = tol_t()) {
    const tensor_desc &d = src.desc();
    SCOPED_TRACE(run_str(d, r, i));
    const dim_t C = d.dim(1);
    const tensor dst_fwd(d), dsrc(d), want(d);
    const auto jit = make_jit(d, r, i, m);
    if (!jit) return dsrc;
    const float *sc = r.scale ? scale.data() : nullptr, *sh = r.shift ? shift.data() : nullptr;
    mean.resize(C), var.resize(C); // the training form computes them below
    naive_fwd(d, src.f32(), dst_fwd.f32(), mean, var, !r.global, sc, sh, r.eps, r.relu);
    std::fill(dsrc.f32(), dsrc.f32() + d.nelems_padded(), 7.f);
    std::vector<float> jdscale(C, -1.f), jdshift(C, -1.f), wdscale(C, -1.f), wdshift(C, -1.f);
    bnorm_bwd_args_t mem;
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
    expect_near(d, dsrc.f32(), want.f32(), 10 * tol.dst_a, 10 * tol.dst_r, "diff_src");
    expect_zero_padding(dsrc, "diff_src");
    const double n = static_cast<double>(d.nelems() / C);
    if (r.scale) expect_near(jdscale, wdscale, 1e-6 * n, tol.dw_r, "diff_scale");
    if (r.shift) expect_near(jdshift, wdshift, 1e-6 * n, tol.dw_r, "diff_shift");
    return dsrc;
}

/// Seeded data for d, then fwd_case or bwd_case by direction.
inline void check(
        const tensor_desc &d, const run_t &r, isa i, unsigned seed, const bnorm_machine_t &m = this_machine()) {
    const dim_t C = d.dim(1);
    const tensor src(d);
    fill_random(src, seed);
    const std::vector<float> scale = random_vec(C, seed + 1, 0.5f, 1.5f), shift = random_vec(C, seed + 2, -1.f, 1.f);
    const std::vector<float> mean = random_vec(C, seed + 3, -0.5f, 0.5f), var = random_vec(C, seed + 4, 0.1f, 1.5f);
    if (r.dir != bnorm_dir_t::bwd) {
        fwd_case(src, r, i, scale, shift, mean, var, m);
        return;
    }
    const tensor ddst(d);
    fill_random(ddst, seed + 5);
    bwd_case(src, ddst, r, i, scale, shift, mean, var, m);
}

} // namespace bnorm_test
