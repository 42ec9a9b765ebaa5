// SPDX-License-Identifier: Apache-2.0
// The JIT GEMM (brgemm microkernel + packed-B driver) alone: GFLOP/s and percent of the FMA
// peak for M = N = K = 512 and for the GEMMs of the RNN benchmark shapes (the input projection
// of all time steps, M = T * mb, and one recurrent step, M = mb), with oneDNN's dnnl_sgemm beside
// it when the baseline is built. Rows: gemm/<isa>/t<threads>/<shape>/{blockdnn,onednn}.
// Both libraries get the buffers the RNN op gives the GEMM: 64-byte aligned, large ones on huge
// pages (aligned_vector). From std::vector a large buffer starts 16 bytes into a page, so that
// every zmm load of packed B and every zmm store of C splits two cache lines.
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "bench_common.hpp"
#include "core/aligned_vector.hpp"
#include "core/utils.hpp"
#include "jit/gemm/gemm_jit.hpp"

using namespace blockdnn;
using namespace blockdnn::impl;

namespace {

struct shape_t {
    std::string name;
    std::int64_t M, N, K;
};

std::vector<shape_t> shapes() {
    std::vector<shape_t> v = {{"M512N512K512", 512, 512, 512}};
    // RNN shapes: LSTM's 4 gates (the largest N); T x mb rows for the input projection.
    const struct { std::int64_t t, mb, c; } rnn[] = {{50, 64, 512}, {100, 1, 128}, {100, 10, 10}, {100, 1, 10}};
    for (const auto &r : rnn) {
        v.push_back({cat("lstm_layer_t", r.t, "mb", r.mb, "sic", r.c), r.t * r.mb, 4 * r.c, r.c});
        v.push_back({cat("lstm_iter_t", r.t, "mb", r.mb, "sic", r.c), r.mb, 4 * r.c, r.c});
    }
    // An inner product at batch 1: ResNet-50's classifier (2048 inputs, 1000 classes).
    v.push_back({"ip_mb1ic2048oc1000", 1, 1000, 2048});
    return v;
}

aligned_vector<float> filled(std::int64_t n, float scale) {
    aligned_vector<float> v(n);
    for (std::int64_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>((i * 7 + 3) % 13 - 6);
    return v;
}

void run_blockdnn(benchmark::State &state, isa level, shape_t s, int nthr) {
    if (detected_isa() < level) return state.SkipWithError((std::string(to_string(level)) + " not available").c_str());
    std::unique_ptr<gemm_jit_t> g;
    std::string why;
    if (gemm_jit_t::create(g, level, s.M, s.N, s.K, s.K, s.N, 0.f, why, {}, true, {}, nthr) != status::success)
        return state.SkipWithError(why.c_str());
    const aligned_vector<float> A = filled(s.M * s.K, 0.1f), B = filled(s.K * s.N, 0.01f);
    aligned_vector<float> Bp(g->packed_b().size()), C(s.M * s.N);
    gemm_pack_b(g->packed_b(), B.data(), s.N, Bp.data());
    for (auto _ : state) {
        g->execute(A.data(), Bp.data(), C.data(), nthr);
        benchmark::ClobberMemory();
    }
    state.SetLabel(g->str());
    bench::set_flop_counters(state, 2.0 * s.M * s.N * s.K, level, nthr);
}

#ifdef BLOCKDNN_BENCH_ONEDNN
void run_onednn(benchmark::State &state, isa level, shape_t s, int nthr) {
    if (!bench::onednn_use_isa(state, level)) return;
    omp_set_num_threads(nthr);
    const aligned_vector<float> A = filled(s.M * s.K, 0.1f), B = filled(s.K * s.N, 0.01f);
    aligned_vector<float> C(s.M * s.N);
    for (auto _ : state) {
        dnnl_sgemm('N', 'N', s.M, s.N, s.K, 1.f, A.data(), s.K, B.data(), s.N, 0.f, C.data(), s.N);
        benchmark::ClobberMemory();
    }
    state.SetLabel("dnnl_sgemm");
    bench::set_flop_counters(state, 2.0 * s.M * s.N * s.K, level, nthr);
}
#endif

void register_all() {
    for (isa level : {isa::avx512_core, isa::avx2})
        for (int nthr : {1, 2})
            for (const shape_t &s : shapes()) {
                const std::string isa_name = level == isa::avx512_core ? "avx512" : "avx2";
                const std::string path = cat("gemm/", isa_name, "/t", nthr, "/", s.name, "/");
                bench::register_threaded_row(path + "blockdnn", nthr, run_blockdnn, level, s, nthr);
#ifdef BLOCKDNN_BENCH_ONEDNN
                bench::register_threaded_row(path + "onednn", nthr, run_onednn, level, s, nthr);
#endif
            }
}

} // namespace

int main(int argc, char **argv) { return bench::bench_main(argc, argv, register_all, bench::add_peak_context); }
