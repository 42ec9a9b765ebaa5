// SPDX-License-Identifier: Apache-2.0
// The run loop of blockdnn-bench (see runner.hpp).
#include "driver/runner.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <new>

#include "common/utils.hpp"
#include "driver/machine.hpp"
#include "driver/op_case.hpp"

namespace bdrv {

using namespace blockdnn;
using blockdnn::impl::cat;

double machine_t::peak(isa level) const {
    const double core = level == isa::avx512_core ? peak_avx512 : level == isa::avx2 ? peak_avx2 : peak_scalar;
    return core * threads;
}

std::string machine_t::fma_peaks_text() const {
    auto one = [](const char *name, double gflops) {
        char buf[64];
        if (gflops > 0) std::snprintf(buf, sizeof buf, "%s %.1f GFLOP/s", name, gflops);
        else std::snprintf(buf, sizeof buf, "%s (not on this CPU)", name);
        return std::string(buf);
    };
    return cat(one("avx512", peak_avx512), ", ", one("avx2", peak_avx2));
}

const char *isa_word(isa level) {
    return level == isa::avx512_core ? "avx512" : level == isa::avx2 ? "avx2" : "ref";
}

std::vector<isa> parse_isa_list(const std::string &text) {
    std::vector<isa> out;
    auto add = [&](isa l) {
        if (std::find(out.begin(), out.end(), l) == out.end()) out.push_back(l);
    };
    std::size_t i = 0;
    while (i <= text.size()) {
        const std::size_t c = std::min(text.find(',', i), text.size());
        const std::string w = text.substr(i, c - i);
        if (w == "avx512" || w == "avx512_core") add(isa::avx512_core);
        else if (w == "avx2") add(isa::avx2);
        else if (w == "ref" || w == "scalar") add(isa::scalar);
        else if (w == "all") { // what the CPU has, under the cap (BLOCKDNN_MAX_ISA)
            if (effective_isa() >= isa::avx512_core) add(isa::avx512_core);
            if (effective_isa() >= isa::avx2) add(isa::avx2);
            if (effective_isa() < isa::avx2) add(isa::scalar);
        } else {
            impl::fail(status::invalid_arguments, "--isa=", text, ": '", w, "' is not avx512, avx2, ref or all");
        }
        i = c + 1;
    }
    return out;
}

namespace {

// Median wall time of up to `reps` executions after one warm-up, stopping after max_ms.
double median_ms(op_case_t &c, int reps, double max_ms) {
    using clock = std::chrono::steady_clock;
    c.execute();
    std::vector<double> t;
    const auto start = clock::now();
    for (int r = 0; r < reps; ++r) {
        const auto t0 = clock::now();
        c.execute();
        const auto t1 = clock::now();
        t.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
        if (std::chrono::duration<double, std::milli>(t1 - start).count() > max_ms) break;
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

class progress_t {
public:
    // Only on a terminal: a line rewritten in place; logs get the report alone.
    explicit progress_t(bool on) : tty_(on && isatty(2)) {}
    void show(std::size_t i, std::size_t n, const std::string &what) {
        if (!tty_) return;
        std::string line = cat("[", i + 1, "/", n, "] ", what);
        if (line.size() > 110) line = line.substr(0, 107) + "...";
        std::fprintf(stderr, "\r\033[K%s", line.c_str());
        std::fflush(stderr);
    }
    ~progress_t() {
        if (tty_) std::fprintf(stderr, "\r\033[K");
    }

private:
    bool tty_;
};

} // namespace

std::vector<row_t> run_problems(const std::vector<problem_t> &problems, const run_opts_t &opts, const machine_t &m,
        const baseline_t &baseline) {
    std::vector<row_t> rows;
    progress_t progress(opts.progress);
    isa_cap_guard_t guard;
    const isa user_cap = max_isa(); // set_max_isa or BLOCKDNN_MAX_ISA: columns above it do not run
    for (std::size_t i = 0; i < problems.size(); ++i) {
        const problem_t &p = problems[i];
        row_t base;
        base.driver = p.driver;
        base.prb = p.desc;
        base.where = p.where;
        std::optional<spec_t> spec;
        try {
            spec = make_spec(p, opts.mb);
        } catch (const error &e) {
            base.status = e.code() == status::unimplemented ? "skipped" : "invalid";
            base.reason = e.what();
            base.isa = "-";
            rows.push_back(base);
            continue;
        }
        if (!spec) continue; // filtered out by --match
        base.name = spec->name;
        base.prb = spec->str;
        std::unique_ptr<op_case_t> c = make_case(*spec);
        // Half of the machine's memory at most: other work shares it (and an out-of-memory
        // kill would end the whole run).
        static const double ram = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
        if (c->memory_bytes() > ram / 2) {
            base.status = "skipped";
            base.reason = cat("needs about ", static_cast<long>(c->memory_bytes() / 1e9), " GB of memory, more than half of this machine's ",
                    static_cast<long>(ram / 1e9), " GB (give a smaller --mb)");
            base.isa = "-";
            rows.push_back(base);
            continue;
        }
        for (isa level : opts.isas) {
            row_t r = base;
            r.isa = isa_word(level);
            if (level > detected_isa()) {
                r.status = "skipped";
                r.reason = cat("this CPU has no ", to_string(level));
                rows.push_back(r);
                continue;
            }
            if (level > user_cap) {
                r.status = "skipped";
                r.reason = cat(to_string(level), " is above the ISA cap ", to_string(user_cap), " (BLOCKDNN_MAX_ISA)");
                rows.push_back(r);
                continue;
            }
            progress.show(i, problems.size(), cat(p.driver, " ", r.isa, " ", spec->name.empty() ? spec->str : spec->name));
            set_max_isa(level);
            try {
                r.impl = c->prepare(level);
                if (opts.correctness) {
                    r.err = c->check();
                    r.tol = c->tolerance();
                    r.status = r.err <= r.tol ? "passed" : "FAILED"; // NaN fails
                } else {
                    r.status = "ran";
                }
                if (opts.performance) {
                    r.ms = median_ms(*c, opts.reps, opts.max_ms);
                    const work_t w = c->work();
                    r.flops = w.bytes <= 0;
                    r.rate = (r.flops ? w.flops : w.bytes) / (r.ms * 1e-3) * 1e-9;
                    // Memory-bound ops against memcpy of the same bytes (in cache if they are).
                    const double peak = r.flops ? m.peak(level) : copy_gbps_for(w.bytes);
                    r.pct = peak > 0 ? 100 * r.rate / peak : 0;
                    if (baseline) r.base_ms = baseline(*spec, level, m.threads, opts.reps, r.base_impl);
                }
            } catch (const error &e) {
                r.status = e.code() == status::invalid_arguments || e.code() == status::unimplemented ? "skipped" : "FAILED";
                r.reason = e.what();
            } catch (const std::bad_alloc &) {
                r.status = "skipped";
                r.reason = "out of memory";
            }
            rows.push_back(r);
        }
    }
    return rows;
}

} // namespace bdrv
