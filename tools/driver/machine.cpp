// SPDX-License-Identifier: Apache-2.0
// Machine report, peaks and the reorder section of blockdnn-bench (see machine.hpp).
#include "driver/machine.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>

#include "blockdnn/blockdnn.hpp"
#include "core/machine_model.hpp"
#include "core/utils.hpp"
#include "sched/parallel.hpp"
#include "testing/fma_peak.hpp"

namespace bdrv {

using namespace blockdnn;

namespace {

// Median seconds of `reps` timed calls of fn (after one warm-up call).
template <typename F>
double median_seconds(int reps, F &&fn) {
    fn();
    std::vector<double> t;
    for (int r = 0; r < reps; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        fn();
        t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

double gbps(std::size_t bytes, double seconds) { return static_cast<double>(bytes) / seconds * 1e-9; }

// GB/s (read + write) of memcpy of `bytes` in `chunks` pieces spread over the threads, median
// of `reps`. The destination's offset in its page is the source's plus half a page. With the
// destination a few bytes past the source's offset (as the heap places two neighbouring
// blocks), loads match recent stores in their low 12 address bits and wait on them (4K
// aliasing; measured in docs/tuning.md, "memcpy peak and 4K aliasing (blockdnn-bench)").
double parallel_copy_gbps(std::size_t bytes, dim_t chunks, int reps) {
    constexpr std::size_t page = 4096;
    const std::size_t span = (bytes + page - 1) / page * page;
    std::vector<char> buf(2 * span + 2 * page, 1);
    char *a = reinterpret_cast<char *>((reinterpret_cast<std::uintptr_t>(buf.data()) + page - 1) & ~(page - 1));
    char *b = a + span + page / 2;
    const double s = median_seconds(reps, [&] {
        impl::parallel_for(chunks, 1, [&](dim_t c0, dim_t c1) {
            const std::size_t n = bytes / static_cast<std::size_t>(chunks);
            const std::size_t end = c1 == chunks ? bytes : static_cast<std::size_t>(c1) * n;
            std::memcpy(b + c0 * n, a + c0 * n, end - static_cast<std::size_t>(c0) * n);
        });
    });
    return gbps(2 * bytes, s);
}

} // namespace

void print_cpu(std::FILE *out) {
    const cpu_features &f = cpu();
    const std::string l3_sharing =
            f.l3_processors > 0 ? impl::cat(" per ", f.l3_processors, " logical") : std::string();
    std::fprintf(out, "cpu: %s, %d cores (%d logical), L1d %ld KiB, L2 %ld KiB, L3 %ld MiB%s\n",
            f.name.empty() ? "unknown" : f.name.c_str(), f.physical_cores, f.logical_processors, f.l1d_bytes >> 10,
            f.l2_bytes >> 10, f.l3_bytes >> 20, l3_sharing.c_str());
    std::fprintf(out, "isa: detected %s, cap %s, dispatch uses %s (avx512_vnni %s, avx512_bf16 %s)\n",
            to_string(detected_isa()), to_string(max_isa()), to_string(effective_isa()), f.avx512_vnni ? "yes" : "no",
            f.avx512_bf16 ? "yes" : "no");
    std::fprintf(out, "model: %s\n", impl::to_string(impl::machine_model()).c_str());
}

double copy_gbps_for(double bytes) {
    static std::map<std::size_t, double> cache;
    const std::size_t half = std::max<std::size_t>(4096, static_cast<std::size_t>(bytes / 2) / 64 * 64);
    if (auto it = cache.find(half); it != cache.end()) return it->second;
    const dim_t chunks = std::max<dim_t>(1, std::min<dim_t>(64, static_cast<dim_t>(half >> 14)));
    return cache[half] = parallel_copy_gbps(half, chunks, half > (std::size_t(16) << 20) ? 5 : 21);
}

machine_t measure_machine(int threads) {
    machine_t m;
    m.threads = threads;
    m.peak_avx512 = bdtest::fma_peak_flops(isa::avx512_core) * 1e-9; // 0 without the ISA
    m.peak_avx2 = bdtest::fma_peak_flops(isa::avx2) * 1e-9;
    // The reference is scalar code: one 8-wide FMA's worth of a ymm peak is its ceiling.
    m.peak_scalar = m.peak_avx2 / 8;
    m.copy_gbps = parallel_copy_gbps(std::size_t(64) << 20, 64, 5);
    return m;
}

int reorder_report(std::FILE *out, const std::vector<long> &dims, int reps) {
    const dims_t d(dims.begin(), dims.end());
    const tensor src(tensor_desc(d, format_tag::nchw)), back(tensor_desc(d, format_tag::nchw));
    for (dim_t i = 0; i < src.desc().nelems(); ++i) src.f32()[i] = static_cast<float>(i % 9973) * 0.5f - 7.f;
    const std::size_t bytes = src.desc().size_bytes();
    const tensor copy(src.desc());
    const double t_copy = median_seconds(reps, [&] { std::memcpy(copy.data(), src.data(), bytes); });
    std::fprintf(out, "\nreorder %s (%.1f MB each way), 1 thread, median of %d\n", src.desc().str().c_str(),
            bytes * 1e-6, reps);
    std::fprintf(out, "%-12s %-24s %-18s %9s %9s %s\n", "isa", "reorder", "impl", "GB/s", "%memcpy", "round trip");
    std::fprintf(out, "%-12s %-24s %-18s %9.1f %9s\n", "-", "memcpy", "libc", gbps(2 * bytes, t_copy), "100");
    const isa original_cap = max_isa();
    int failures = 0;
    for (isa level : {isa::avx512_core, isa::avx2, isa::scalar}) {
        if (level > detected_isa()) continue;
        set_max_isa(level);
        for (format_tag bt : {format_tag::nChw16c, format_tag::nChw8c}) {
            const tensor blocked(tensor_desc(d, bt));
            const double t_to = median_seconds(reps, [&] { reorder(src, blocked); });
            std::memset(back.data(), 0, bytes);
            const double t_from = median_seconds(reps, [&] { reorder(blocked, back); });
            const bool ok = std::memcmp(src.data(), back.data(), bytes) == 0;
            failures += !ok;
            const std::string to = std::string("nchw->") + to_string(bt), from = std::string(to_string(bt)) + "->nchw";
            const double copy_gbps = gbps(2 * bytes, t_copy);
            const double g_to = gbps(bytes + blocked.desc().size_bytes(), t_to);
            const double g_from = gbps(bytes + blocked.desc().size_bytes(), t_from);
            std::fprintf(out, "%-12s %-24s %-18s %9.1f %9.0f %s\n", to_string(level), to.c_str(),
                    reorder_impl_name(src.desc(), blocked.desc()).c_str(), g_to, 100 * g_to / copy_gbps,
                    ok ? "bit-exact" : "MISMATCH");
            std::fprintf(out, "%-12s %-24s %-18s %9.1f %9.0f\n", to_string(level), from.c_str(),
                    reorder_impl_name(blocked.desc(), back.desc()).c_str(), g_from, 100 * g_from / copy_gbps);
        }
    }
    set_max_isa(original_cap);
    std::fprintf(out, "%s\n", failures ? "reorder round-trip checks FAILED" : "all reorder round-trip checks passed");
    return failures;
}

} // namespace bdrv
