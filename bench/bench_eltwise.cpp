// SPDX-License-Identifier: Apache-2.0
// Eltwise throughput and JIT generation time. One thread.
//   eltwise/<impl>/<alg>            the op on 64K floats (256 KiB each way, L2-resident)
//   autovec[_fastmath]/<isa>/<alg>  the -O3 loop of std:: functions on the same data
//     (bench/eltwise_autovec.cpp; _fastmath adds -ffast-math, vectorized through glibc libmvec)
//   relu_64MB/<impl>/{out_of_place,in_place} and memcpy_64MB: bytes read + written per second,
//     so relu's bytes/s over memcpy's is the fraction of copy bandwidth it reaches
//   jit_gen/cold/<isa>/<alg>: the eltwise_fwd constructor generating its kernel (cache emptied);
//     op_create/<isa>/<alg>: the same constructor with the kernel cached. Times in microseconds.
// The counter `elems` is elements per second.
#include <cmath>
#include <cstring>
#include <string>

#include <benchmark/benchmark.h>

#include "bench_common.hpp"
#include "blockdnn/blockdnn.hpp"
#include "core/isa_assume.hpp"
#include "eltwise_autovec.hpp"
#include "jit/jit_kernel_cache.hpp"

using namespace blockdnn;

namespace {

constexpr dim_t small_n = 64 * 1024;
constexpr dim_t large_n = 16 * 1024 * 1024; // 64 MiB

float alpha_for(eltwise_alg a) {
    return a == eltwise_alg::clip ? -1.f : a == eltwise_alg::swish || a == eltwise_alg::linear ? 1.f : 0.f;
}
float beta_for(eltwise_alg a) { return a == eltwise_alg::clip ? 6.f : 0.f; }

// Values in [-8, 8) (log gets |x|): every branch of every alg is exercised.
void fill(float *p, dim_t n, eltwise_alg alg) {
    for (dim_t i = 0; i < n; ++i) {
        const float x = static_cast<float>((i * 7919) % 16001) / 1000.f - 8.f;
        p[i] = alg == eltwise_alg::log ? std::fabs(x) + 1e-3f : x;
    }
}

void bm_op(benchmark::State &state, isa level, eltwise_alg alg) {
    if (bench::skip_if_missing(state, level)) return;
    set_max_isa(level);
    const tensor_desc d({small_n}, format_tag::x);
    const tensor src(d), dst(d);
    fill(src.f32(), small_n, alg);
    const eltwise_fwd op(alg, alpha_for(alg), beta_for(alg), d);
    state.SetLabel(op.impl_name());
    for (auto _ : state) {
        op.execute(src, dst);
        benchmark::ClobberMemory();
    }
    state.counters["elems"] =
            benchmark::Counter(static_cast<double>(small_n), benchmark::Counter::kIsIterationInvariantRate);
    reset_max_isa();
}

void bm_autovec(benchmark::State &state, isa level, bench_autovec::loop_fn_t fn, eltwise_alg alg) {
    if (bench::skip_if_missing(state, level)) return;
    const tensor_desc d({small_n}, format_tag::x);
    const tensor src(d), dst(d);
    fill(src.f32(), small_n, alg);
    for (auto _ : state) {
        fn(alg, alpha_for(alg), beta_for(alg), src.f32(), dst.f32(), small_n);
        benchmark::ClobberMemory();
    }
    state.counters["elems"] =
            benchmark::Counter(static_cast<double>(small_n), benchmark::Counter::kIsIterationInvariantRate);
}

void bm_relu_large(benchmark::State &state, isa level, bool in_place) {
    if (bench::skip_if_missing(state, level)) return;
    set_max_isa(level);
    const tensor_desc d({large_n}, format_tag::x);
    const tensor src(d), dst = in_place ? src : tensor(d);
    fill(src.f32(), large_n, eltwise_alg::relu);
    std::memset(dst.data(), 1, d.size_bytes()); // touch every page before timing
    const eltwise_fwd op(eltwise_alg::relu, 0.f, 0.f, d);
    state.SetLabel(op.impl_name());
    for (auto _ : state) {
        op.execute(src, dst);
        benchmark::ClobberMemory();
    }
    state.counters["bytes"] = benchmark::Counter(2.0 * static_cast<double>(d.size_bytes()),
            benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1024);
    state.counters["elems"] =
            benchmark::Counter(static_cast<double>(large_n), benchmark::Counter::kIsIterationInvariantRate);
    reset_max_isa();
}

void bm_memcpy_large(benchmark::State &state) {
    const tensor_desc d({large_n}, format_tag::x);
    const tensor src(d), dst(d);
    std::memset(src.data(), 1, d.size_bytes());
    std::memset(dst.data(), 2, d.size_bytes());
    for (auto _ : state) {
        std::memcpy(dst.data(), src.data(), d.size_bytes());
        benchmark::ClobberMemory();
    }
    state.counters["bytes"] = benchmark::Counter(2.0 * static_cast<double>(d.size_bytes()),
            benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1024);
}

// The eltwise_fwd constructor when its kernel must be generated: the cache is emptied, untimed,
// before each creation. The CPU is assumed to have `level`, so the AVX-512 row runs anywhere;
// nothing created here executes.
void bm_gen_cold(benchmark::State &state, isa level, eltwise_alg alg) {
    impl::assume_cpu_isa(level);
    set_max_isa(level);
    const tensor_desc d({small_n}, format_tag::x);
    for (auto _ : state) {
        state.PauseTiming();
        impl::kernel_cache().clear();
        state.ResumeTiming();
        const eltwise_fwd op(alg, alpha_for(alg), beta_for(alg), d);
        benchmark::DoNotOptimize(&op);
    }
    reset_max_isa();
    impl::reset_assumed_cpu_isa();
}

void bm_op_create(benchmark::State &state, isa level, eltwise_alg alg) {
    if (bench::skip_if_missing(state, level)) return;
    set_max_isa(level);
    const tensor_desc d({small_n}, format_tag::x);
    { const eltwise_fwd warm(alg, alpha_for(alg), beta_for(alg), d); }
    for (auto _ : state) {
        const eltwise_fwd op(alg, alpha_for(alg), beta_for(alg), d);
        benchmark::DoNotOptimize(&op);
    }
    reset_max_isa();
}

void register_all() {
    const struct {
        const char *name;
        isa level;
        bench_autovec::loop_fn_t fn;
    } autovec[] = {
            {"autovec/avx512_core/", isa::avx512_core, bench_autovec::loop_avx512},
            {"autovec/avx2/", isa::avx2, bench_autovec::loop_avx2},
            {"autovec_fastmath/avx512_core/", isa::avx512_core, bench_autovec::loop_avx512_fastmath},
            {"autovec_fastmath/avx2/", isa::avx2, bench_autovec::loop_avx2_fastmath},
    };
    for (int a = 0; a <= static_cast<int>(eltwise_alg::linear); ++a) {
        const auto alg = static_cast<eltwise_alg>(a);
        const std::string an = to_string(alg);
        for (isa level : {isa::avx512_core, isa::avx2, isa::scalar}) {
            const std::string impl = level == isa::scalar ? "ref" : std::string("jit:") + to_string(level);
            benchmark::RegisterBenchmark(("eltwise/" + impl + "/" + an).c_str(), bm_op, level, alg)->UseRealTime();
        }
        for (const auto &v : autovec)
            benchmark::RegisterBenchmark((v.name + an).c_str(), bm_autovec, v.level, v.fn, alg)->UseRealTime();
    }
    benchmark::RegisterBenchmark("memcpy_64MB", bm_memcpy_large)->UseRealTime();
    for (isa level : {isa::avx512_core, isa::avx2})
        for (bool in_place : {false, true})
            benchmark::RegisterBenchmark(
                    (std::string("relu_64MB/jit:") + to_string(level) + (in_place ? "/in_place" : "/out_of_place"))
                            .c_str(),
                    bm_relu_large, level, in_place)
                    ->UseRealTime();
    for (isa level : {isa::avx512_core, isa::avx2})
        for (eltwise_alg alg : {eltwise_alg::relu, eltwise_alg::gelu_tanh, eltwise_alg::gelu_erf}) {
            const std::string tail = std::string(to_string(level)) + "/" + to_string(alg);
            benchmark::RegisterBenchmark(("jit_gen/cold/" + tail).c_str(), bm_gen_cold, level, alg)
                    ->Unit(benchmark::kMicrosecond);
            benchmark::RegisterBenchmark(("op_create/" + tail).c_str(), bm_op_create, level, alg)
                    ->Unit(benchmark::kMicrosecond);
        }
}

} // namespace

int main(int argc, char **argv) { return bench::bench_main(argc, argv, register_all); }
