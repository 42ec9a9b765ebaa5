// SPDX-License-Identifier: Apache-2.0
// Batch normalization throughput beside the machine's copy bandwidth and oneDNN, in one binary.
// Rows:
//   bnorm/<isa>/t<threads>/<shape>/<mode>/blockdnn    JIT bnorm, nChw16c (avx512) or nChw8c (avx2)
//   bnorm/avx512/t<threads>/<shape>/<mode>/onednn     oneDNN 2.x at its best ISA, in the blocked
//                                                     layout its JIT kernels take there: nChw16c
//                                                     with AVX-512, nChw8c on an AVX2 CPU
//   copy/t<threads>/<shape>/memcpy, copy/t<threads>/<shape>/nt   copies of the tensor's bytes
// Modes (scale and shift on, eps 1e-5, no relu) and the bytes counted as crossing memory:
//   inference  read src, write dst                      2 x tensor
//   training   read src, write dst (statistics from the same read when a channel block fits
//              in cache; oneDNN reads src more often)    2 x tensor
//   backward   read src and diff_dst, write diff_src    3 x tensor
//   copies     read and write the tensor                2 x tensor
// The `bytes` counter is that count per second. At the end a table gives each blockdnn row's
// GB/s, its fraction of the non-temporal copy bandwidth with the same threads, and its time
// relative to oneDNN's (< 1: faster).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <benchmark/benchmark.h>
#include <immintrin.h>

#include "bench_common.hpp"
#include "blockdnn/blockdnn.hpp"
#include "sched/parallel.hpp"
#include "core/utils.hpp"

using namespace blockdnn;
using namespace blockdnn::impl;

namespace {

struct shape_t {
    const char *name;
    dims_t dims;
};
const shape_t shapes[] = {
        {"mb16ic64ih56", {16, 64, 56, 56}},
        {"mb16ic256ih56", {16, 256, 56, 56}},
        {"mb1ic512ih7", {1, 512, 7, 7}},
};
const char *mode_names[] = {"inference", "training", "backward"};
constexpr float eps = 1e-5f;

int stream_count(int mode) { return mode == 2 ? 3 : 2; }

void set_bytes(benchmark::State &state, std::size_t tensor_bytes, int streams) {
    state.counters["bytes"] = benchmark::Counter(static_cast<double>(tensor_bytes * streams),
            benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}

// Per-channel inputs shared by both libraries.
struct channel_data_t {
    std::vector<float> mean, var, scale, shift, dscale, dshift;
    explicit channel_data_t(dim_t c) : mean(c), var(c), scale(c), shift(c), dscale(c), dshift(c) {
        for (dim_t i = 0; i < c; ++i) {
            mean[i] = 0.01f * static_cast<float>(i % 7);
            var[i] = 1.f + 0.1f * static_cast<float>(i % 5);
            scale[i] = 1.f + 0.01f * static_cast<float>(i % 3);
            shift[i] = 0.1f * static_cast<float>(i % 4);
        }
    }
};

void fill(float *p, dim_t n, unsigned salt) {
    for (dim_t i = 0; i < n; ++i) p[i] = static_cast<float>((i * 7 + salt) % 1013) * 0.002f - 1.f;
}

// ---- blockdnn --------------------------------------------------------------------------------

// The public ops, the ISA capped at `level` (the JIT row of that ISA), the library's threads
// set to nthr; the timed call is one execute.
void run_blockdnn(benchmark::State &state, isa level, int nthr, dims_t dims, int mode) {
    if (detected_isa() < level) {
        state.SkipWithError((std::string(to_string(level)) + " not available").c_str());
        return;
    }
    set_num_threads(nthr);
    set_max_isa(level);
    struct reset_t {
        ~reset_t() {
            reset_max_isa();
            reset_num_threads();
        }
    } reset;
    const tensor_desc d(dims, level == isa::avx512_core ? format_tag::nChw16c : format_tag::nChw8c);
    const bnorm_flags flags = bnorm_flags::use_scale | bnorm_flags::use_shift;
    const tensor src(d), dst(d), ddst(d);
    fill(src.f32(), d.nelems_padded(), 1);
    fill(ddst.f32(), d.nelems_padded(), 2);
    channel_data_t ch(dims[1]);
    const tensor_desc cd({dims[1]}, format_tag::x);
    const tensor mean(cd, ch.mean.data()), var(cd, ch.var.data()), scale(cd, ch.scale.data()),
            shift(cd, ch.shift.data()), dscale(cd, ch.dscale.data()), dshift(cd, ch.dshift.data());
    const bnorm_fwd_args fwd_args {src, dst, mean, var, scale, shift};
    std::optional<bnorm_fwd> fwd;
    std::optional<bnorm_bwd> bwd;
    if (mode == 2) { // backward reads the batch statistics of src
        bnorm_fwd(bnorm_desc {bnorm_mode::training, d, {}, eps, flags}).execute(fwd_args);
        bwd.emplace(bnorm_bwd_desc {d, {}, {}, eps, flags});
    } else {
        fwd.emplace(bnorm_desc {mode == 0 ? bnorm_mode::inference : bnorm_mode::training, d, {}, eps, flags});
    }
    const bnorm_bwd_args bwd_args {src, ddst, dst, mean, var, scale, {}, dscale, dshift};
    // The driver's plan: the line of impl_info() after the name.
    const std::string info = fwd ? fwd->impl_info() : bwd->impl_info();
    const std::size_t nl = info.find('\n');
    if (nl == std::string::npos) return state.SkipWithError(("no JIT row: " + info).c_str());
    state.SetLabel(info.substr(nl + 1, info.find('\n', nl + 1) - nl - 1));
    // One untimed run first, as for oneDNN: a row of few iterations would time the first touch
    // of its output pages.
    if (fwd) fwd->execute(fwd_args);
    else bwd->execute(bwd_args);
    for (auto _ : state) {
        if (fwd) fwd->execute(fwd_args);
        else bwd->execute(bwd_args);
        benchmark::ClobberMemory();
    }
    set_bytes(state, d.size_bytes(), stream_count(mode));
}

// ---- copies ----------------------------------------------------------------------------------

__attribute__((target("avx512f"))) void nt_copy_avx512(float *dst, const float *src, std::size_t n) {
    for (std::size_t i = 0; i + 64 <= n; i += 64)
        for (int k = 0; k < 4; ++k) _mm512_stream_ps(dst + i + 16 * k, _mm512_load_ps(src + i + 16 * k));
}
__attribute__((target("avx"))) void nt_copy_avx(float *dst, const float *src, std::size_t n) {
    for (std::size_t i = 0; i + 32 <= n; i += 32)
        for (int k = 0; k < 4; ++k) _mm256_stream_ps(dst + i + 8 * k, _mm256_load_ps(src + i + 8 * k));
}

// Copies n floats (a multiple of 64, 64-byte aligned) on nthr threads, each its contiguous part.
void copy(float *dst, const float *src, std::size_t n, int nthr, bool nt) {
    auto part = [&](int t) {
        const std::size_t b = n / 64 * t / nthr * 64, e = n / 64 * (t + 1) / nthr * 64;
        if (!nt) std::memcpy(dst + b, src + b, (e - b) * sizeof(float));
        else if (cpu().avx512f) nt_copy_avx512(dst + b, src + b, e - b);
        else nt_copy_avx(dst + b, src + b, e - b);
        if (nt) _mm_sfence();
    };
    if (nthr == 1) return part(0);
    std::vector<std::thread> ts;
    for (int t = 1; t < nthr; ++t) ts.emplace_back(part, t);
    part(0);
    for (std::thread &t : ts) t.join();
}

void run_copy(benchmark::State &state, int nthr, dims_t dims, bool nt) {
    const tensor_desc d(dims, format_tag::nChw16c);
    const tensor src(d), dst(d);
    fill(src.f32(), d.nelems_padded(), 3);
    for (auto _ : state) {
        copy(dst.f32(), src.f32(), static_cast<std::size_t>(d.nelems_padded()), nthr, nt);
        benchmark::ClobberMemory();
    }
    set_bytes(state, d.size_bytes(), 2);
}

// ---- oneDNN ----------------------------------------------------------------------------------

#ifdef BLOCKDNN_BENCH_ONEDNN
void run_onednn(benchmark::State &state, int nthr, dims_t dims, int mode) {
    using namespace dnnl;
    omp_set_num_threads(nthr);
    dnnl::engine eng(dnnl::engine::kind::cpu, 0);
    dnnl::stream strm(eng);
    // oneDNN's AVX2 bnorm refuses nChw16c and would run its scalar reference. Its own ISA, so
    // that a cap on oneDNN (ONEDNN_MAX_CPU_ISA) picks the layout too.
    // (dnnl_cpu_isa_t values are masks: each ISA holds the bits of those below it.)
    const int od_isa = static_cast<int>(get_effective_cpu_isa());
    const bool od_avx512 = (od_isa & dnnl_cpu_isa_avx512_core) == dnnl_cpu_isa_avx512_core;
    const memory::format_tag tag = od_avx512 ? memory::format_tag::nChw16c : memory::format_tag::nChw8c;
    const memory::desc md(memory::dims(dims.begin(), dims.end()), memory::data_type::f32, tag);
    const auto flags = normalization_flags::use_scale | normalization_flags::use_shift
            | (mode == 0 ? normalization_flags::use_global_stats : normalization_flags::none);
    const prop_kind pk = mode == 0 ? prop_kind::forward_inference : prop_kind::forward_training;
    const batch_normalization_forward::primitive_desc fpd({pk, md, eps, flags}, eng);
    const memory::desc cd({dims[1]}, memory::data_type::f32, memory::format_tag::x);
    bench::onednn_buffers_t buffers; // the tensors on memory placed as blockdnn's are
    memory src = buffers.make(md, eng), dst = buffers.make(md, eng), ddst = buffers.make(md, eng),
           dsrc = buffers.make(md, eng);
    memory mean(cd, eng), var(cd, eng), scale(cd, eng), shift(cd, eng), dscale(cd, eng), dshift(cd, eng);
    const dim_t padded = static_cast<dim_t>(md.get_size() / sizeof(float));
    fill(static_cast<float *>(src.get_data_handle()), padded, 1);
    fill(static_cast<float *>(ddst.get_data_handle()), padded, 2);
    channel_data_t ch(dims[1]);
    std::memcpy(mean.get_data_handle(), ch.mean.data(), dims[1] * 4);
    std::memcpy(var.get_data_handle(), ch.var.data(), dims[1] * 4);
    std::memcpy(scale.get_data_handle(), ch.scale.data(), dims[1] * 4);
    std::memcpy(shift.get_data_handle(), ch.shift.data(), dims[1] * 4);
    std::unordered_map<int, memory> fargs = {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}, {DNNL_ARG_MEAN, mean},
            {DNNL_ARG_VARIANCE, var}, {DNNL_ARG_SCALE, scale}, {DNNL_ARG_SHIFT, shift}};
    const batch_normalization_forward fwd(fpd);
    dnnl::primitive prim = fwd;
    std::unordered_map<int, memory> args = fargs;
    std::string impl = fpd.impl_info_str();
    if (mode == 2) {
        const auto bflags = normalization_flags::use_scale | normalization_flags::use_shift;
        const batch_normalization_backward::primitive_desc bpd({prop_kind::backward, md, md, eps, bflags}, eng, fpd);
        fwd.execute(strm, fargs); // batch statistics for backward
        prim = batch_normalization_backward(bpd);
        impl = bpd.impl_info_str();
        args = {{DNNL_ARG_SRC, src}, {DNNL_ARG_DIFF_DST, ddst}, {DNNL_ARG_MEAN, mean}, {DNNL_ARG_VARIANCE, var},
                {DNNL_ARG_SCALE, scale}, {DNNL_ARG_SHIFT, shift}, {DNNL_ARG_DIFF_SRC, dsrc},
                {DNNL_ARG_DIFF_SCALE, dscale}, {DNNL_ARG_DIFF_SHIFT, dshift}};
    }
    if (impl.find("ref") != std::string::npos) {
        state.SkipWithError(("oneDNN runs its reference here (" + impl + "), no baseline").c_str());
        return;
    }
    state.SetLabel(impl);
    // One untimed run first: oneDNN's first execute touches its output and scratchpad pages,
    // which made a row of few iterations 10-20x slower than the rest.
    prim.execute(strm, args);
    strm.wait();
    for (auto _ : state) {
        prim.execute(strm, args);
        strm.wait();
    }
    set_bytes(state, md.get_size(), stream_count(mode));
}
#endif

// ---- the summary table -----------------------------------------------------------------------

// Keeps each row's fastest time per iteration (over --benchmark_repetitions, if given) and
// prints the table last. `cpu` makes the table use the process CPU time instead of wall time:
// a proxy for an unloaded machine when others share the cores (single-thread rows only).
class summary_reporter_t : public benchmark::ConsoleReporter {
public:
    explicit summary_reporter_t(bool cpu) : cpu_(cpu) {}
    void ReportRuns(const std::vector<Run> &runs) override {
        ConsoleReporter::ReportRuns(runs);
        for (const Run &r : runs) {
            if (r.error_occurred || r.run_type == Run::RT_Aggregate) continue;
            const double mult = benchmark::GetTimeUnitMultiplier(r.time_unit);
            const double real_s = r.GetAdjustedRealTime() / mult, cpu_s = r.GetAdjustedCPUTime() / mult;
            auto it = r.counters.find("bytes");
            const double bytes = it == r.counters.end() ? 0 : it->second.value * real_s; // rate x time
            row_t &row = rows_[r.run_name.function_name];
            const double t = cpu_ ? cpu_s : real_s;
            if (row.s == 0 || t < row.s) row.s = t, row.bytes = bytes;
            ++row.runs;
        }
    }
    void Finalize() override {
        ConsoleReporter::Finalize();
        std::printf("\nSummary (fastest of each row's runs, %s time; GB/s = bytes that must cross memory per\n"
                    "second, 1e9; %%nt_copy = of the non-temporal copy with the same threads; /onednn = time /\n"
                    "oneDNN's time, < 1 is faster)\n",
                cpu_ ? "process CPU" : "wall");
        std::printf("%-48s %10s %8s %9s %9s\n", "row", "ms", "GB/s", "%nt_copy", "/onednn");
        auto gbps = [](const row_t &r) { return r.bytes / r.s * 1e-9; };
        for (const auto &[name, row] : rows_) {
            if (name.rfind("bnorm/", 0) != 0 || name.find("/blockdnn") == std::string::npos) continue;
            // bnorm/<isa>/t<n>/<shape>/<mode>/blockdnn
            const std::size_t t0 = name.find("/t"), s0 = name.find('/', t0 + 1), m0 = name.find('/', s0 + 1);
            const std::string thr = name.substr(t0 + 1, s0 - t0 - 1), shape = name.substr(s0 + 1, m0 - s0 - 1);
            const auto nt = rows_.find("copy/" + thr + "/" + shape + "/nt");
            std::string onednn = name.substr(0, name.size() - 8) + "onednn";
            onednn.replace(6, name.find('/', 6) - 6, "avx512");
            const auto od = rows_.find(onednn);
            std::printf("%-48s %10.4f %8.1f", name.c_str(), row.s * 1e3, gbps(row));
            if (nt != rows_.end()) std::printf(" %8.0f%%", 100 * gbps(row) / gbps(nt->second));
            else std::printf(" %9s", "-");
            if (od != rows_.end()) std::printf(" %9.2f\n", row.s / od->second.s);
            else std::printf(" %9s\n", "-");
        }
        for (const auto &[name, row] : rows_)
            if (name.rfind("bnorm/", 0) != 0 || name.find("/onednn") != std::string::npos)
                std::printf("%-48s %10.4f %8.1f\n", name.c_str(), row.s * 1e3, gbps(row));
    }

private:
    struct row_t {
        double s = 0, bytes = 0;
        int runs = 0;
    };
    bool cpu_;
    std::map<std::string, row_t> rows_;
};

void register_all() {
    for (int nthr : {1, 2})
        for (const shape_t &s : shapes) {
            const std::string t = cat("t", nthr, "/", s.name);
            benchmark::RegisterBenchmark(("copy/" + t + "/memcpy").c_str(), run_copy, nthr, s.dims, false)
                    ->UseRealTime();
            benchmark::RegisterBenchmark(("copy/" + t + "/nt").c_str(), run_copy, nthr, s.dims, true)->UseRealTime();
            for (int mode = 0; mode < 3; ++mode) {
                for (isa level : {isa::avx512_core, isa::avx2}) {
                    const std::string name = std::string("bnorm/") + (level == isa::avx2 ? "avx2" : "avx512") + "/" + t
                            + "/" + mode_names[mode] + "/blockdnn";
                    benchmark::RegisterBenchmark(name.c_str(), run_blockdnn, level, nthr, s.dims, mode)->UseRealTime();
                }
#ifdef BLOCKDNN_BENCH_ONEDNN
                const std::string name = "bnorm/avx512/" + t + "/" + mode_names[mode] + "/onednn";
                benchmark::RegisterBenchmark(name.c_str(), run_onednn, nthr, s.dims, mode)->UseRealTime();
#endif
            }
        }
}

} // namespace

int main(int argc, char **argv) {
    // --summary_cpu_time: the table uses process CPU time (see summary_reporter_t).
    bool cpu = false;
    for (int i = 1; i < argc; ++i)
        if (std::strcmp(argv[i], "--summary_cpu_time") == 0) {
            cpu = true;
            for (int k = i; k + 1 < argc; ++k) argv[k] = argv[k + 1];
            --argc;
            break;
        }
    summary_reporter_t reporter(cpu);
    return bench::bench_main(argc, argv, register_all, {}, &reporter);
}
