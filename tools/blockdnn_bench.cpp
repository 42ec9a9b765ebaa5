// SPDX-License-Identifier: Apache-2.0
// blockdnn-bench: the README's main job. For now it prints the detected CPU and the ISA
// dispatch will use, then runs the reorder nchw -> nChw{16,8}c -> nchw on a real ResNet-50
// activation (mb 32, c 64, 56x56, 25.7 MB each way) at every ISA level the machine has, checks
// the round trip is bit-exact, and prints GB/s beside memcpy of the same bytes.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include <CLI/CLI.hpp>

#include "blockdnn/blockdnn.hpp"

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

// Bytes read plus bytes written per second, in GB/s (1e9).
double gbps(std::size_t bytes, double seconds) { return static_cast<double>(bytes) / seconds * 1e-9; }

} // namespace

int main(int argc, char **argv) {
    CLI::App app {"blockdnn-bench: the blockdnn main job (machine report, reorders with checks and GB/s)"};
    int reps = 20;
    std::vector<long> dims = {32, 64, 56, 56};
    app.add_option("--reps", reps, "timed repetitions per measurement (median is reported)")->check(CLI::Range(1, 10000));
    app.add_option("--dims", dims, "nchw activation dims: mb c h w")->expected(4);
    CLI11_PARSE(app, argc, argv);

    try {
        const cpu_features &f = cpu();
        std::printf("cpu: %s, %d cores (%d logical), L1d %ld KiB, L2 %ld KiB, L3 %ld MiB\n",
                f.name.empty() ? "unknown" : f.name.c_str(), f.physical_cores, f.logical_processors,
                f.l1d_bytes >> 10, f.l2_bytes >> 10, f.l3_bytes >> 20);
        std::printf("isa: detected %s, cap %s, dispatch uses %s (avx512_vnni %s, avx512_bf16 %s)\n",
                to_string(detected_isa()), to_string(max_isa()), to_string(effective_isa()),
                f.avx512_vnni ? "yes" : "no", f.avx512_bf16 ? "yes" : "no");

        const dims_t d(dims.begin(), dims.end());
        const tensor src(tensor_desc(d, format_tag::nchw)), back(tensor_desc(d, format_tag::nchw));
        for (dim_t i = 0; i < src.desc().nelems(); ++i) src.f32()[i] = static_cast<float>(i % 9973) * 0.5f - 7.f;
        const std::size_t bytes = src.desc().size_bytes();

        const tensor copy(src.desc());
        const double t_copy = median_seconds(reps, [&] { std::memcpy(copy.data(), src.data(), bytes); });
        std::printf("\nreorder %s (%.1f MB each way), 1 thread, median of %d\n", src.desc().str().c_str(),
                bytes * 1e-6, reps);
        std::printf("%-12s %-24s %-18s %9s %9s %s\n", "isa", "reorder", "impl", "GB/s", "%memcpy", "round trip");
        std::printf("%-12s %-24s %-18s %9.1f %9s\n", "-", "memcpy", "libc", gbps(2 * bytes, t_copy), "100");

        const isa original_cap = max_isa();
        int failures = 0;
        for (isa level : {isa::avx512_core, isa::avx2, isa::scalar}) {
            if (level > effective_isa()) continue;
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
                std::printf("%-12s %-24s %-18s %9.1f %9.0f %s\n", to_string(level), to.c_str(),
                        reorder_impl_name(src.desc(), blocked.desc()).c_str(), g_to, 100 * g_to / copy_gbps,
                        ok ? "bit-exact" : "MISMATCH");
                std::printf("%-12s %-24s %-18s %9.1f %9.0f\n", to_string(level), from.c_str(),
                        reorder_impl_name(blocked.desc(), back.desc()).c_str(), g_from, 100 * g_from / copy_gbps);
            }
        }
        set_max_isa(original_cap);
        std::printf("\n%s\n", failures ? "round-trip checks FAILED" : "all round-trip checks passed");
        return failures ? 1 : 0;
    } catch (const error &e) {
        std::fprintf(stderr, "blockdnn-bench: %s\n", e.what());
        return 2;
    }
}
