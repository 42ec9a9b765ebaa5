// SPDX-License-Identifier: Apache-2.0
// The run loop of blockdnn-bench (see runner.hpp).
#include "driver/runner.hpp"

#include <unistd.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <new>
#include <utility>

#include "core/utils.hpp"
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

namespace {
// The streams' thread budgets as "2+1+1".
std::string budgets_of(const std::vector<std::unique_ptr<stream>> &ss) {
    std::string out;
    for (const std::unique_ptr<stream> &s : ss) out += cat(out.empty() ? "" : "+", s->threads());
    return out;
}
} // namespace

std::string stream_budgets(int n) { return budgets_of(make_streams(n)); }

const char *isa_word(isa level) { return level == isa::avx512_core ? "avx512" : level == isa::avx2 ? "avx2" : "ref"; }

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

using wall_clock = std::chrono::steady_clock;

double ms_between(wall_clock::time_point t0, wall_clock::time_point t1) {
    return std::chrono::duration<double, std::milli>(t1 - t0).count();
}

double median(std::vector<double> t) {
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

// Median wall time of up to `reps` executions after one warm-up, stopping after max_ms.
double median_ms(op_case_t &c, int reps, double max_ms) {
    c.execute();
    std::vector<double> t;
    const auto start = wall_clock::now();
    for (int r = 0; r < reps; ++r) {
        const auto t0 = wall_clock::now();
        c.execute();
        const auto t1 = wall_clock::now();
        t.push_back(ms_between(t0, t1));
        if (ms_between(start, t1) > max_ms) break;
    }
    return median(t);
}

// Median wall times of a and b, up to `reps` each after one warm-up of each, alternating and
// swapping which goes first every round (a b, b a, a b, ...) so that a change in the
// machine's speed (another process, the clock) reaches both alike; stops after max_ms.
template <typename A, typename B>
std::pair<double, double> alternating_median_ms(A &&a, B &&b, int reps, double max_ms) {
    a();
    b();
    std::vector<double> ta, tb;
    const auto start = wall_clock::now();
    for (int r = 0; r < reps; ++r) {
        for (int i = 0; i < 2; ++i) {
            const bool run_a = (i == 0) == (r % 2 == 0);
            const auto t0 = wall_clock::now();
            if (run_a) a();
            else b();
            (run_a ? ta : tb).push_back(ms_between(t0, wall_clock::now()));
        }
        if (ms_between(start, wall_clock::now()) > max_ms) break;
    }
    return {median(ta), median(tb)};
}

// Half of the machine's memory at most: other work shares it (and an out-of-memory kill
// would end the whole run).
double memory_limit() {
    static const double ram = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
    return ram / 2;
}

using streams_t = std::vector<std::unique_ptr<stream>>;

// Waits for every stream, then rethrows the first error one of them raised.
void synchronize_all(const streams_t &ss) {
    std::exception_ptr first;
    for (const std::unique_ptr<stream> &s : ss) {
        try {
            s->synchronize();
        } catch (...) {
            if (!first) first = std::current_exception();
        }
    }
    if (first) std::rethrow_exception(first);
}

// The streams mode on the prepared case c (run_opts_t::streams): fills r's streams fields and
// fails r if a copy's outputs on the streams differ from the same copy's run alone.
void run_streams(op_case_t &c, const run_opts_t &opts, const streams_t &ss, row_t &r) {
    const int n = static_cast<int>(ss.size()), copies = opts.copies > 0 ? opts.copies : 2 * n;
    if (c.memory_bytes() * copies > memory_limit()) {
        r.streams_note = cat("needs about ", static_cast<long>(c.memory_bytes() * copies / 1e9), " GB for ", copies,
                " copies, more than half of this machine's memory (give a smaller --copies or --mb)");
        return;
    }
    std::vector<std::unique_ptr<op_copy_t>> cs;
    for (int k = 0; k < copies; ++k) cs.push_back(c.make_copy(k));
    const auto sequential = [&] {
        for (const std::unique_ptr<op_copy_t> &x : cs) x->execute();
    };
    const auto on_streams = [&] {
        try {
            for (int k = 0; k < copies; ++k) {
                stream_scope on(*ss[static_cast<std::size_t>(k % n)]);
                cs[static_cast<std::size_t>(k)]->execute();
            }
        } catch (...) { // a refused call: let the copies queued before it finish first
            try {
                synchronize_all(ss);
            } catch (...) {}
            throw;
        }
        synchronize_all(ss);
    };
    // The same inputs through both paths, outputs compared bit for bit.
    std::vector<std::vector<std::vector<float>>> alone;
    for (const std::unique_ptr<op_copy_t> &x : cs) x->reset();
    sequential();
    for (const std::unique_ptr<op_copy_t> &x : cs) alone.push_back(x->outputs());
    for (const std::unique_ptr<op_copy_t> &x : cs) x->reset();
    on_streams();
    for (int k = 0; k < copies; ++k) {
        const std::string diff =
                bitwise_difference(cs[static_cast<std::size_t>(k)]->outputs(), alone[static_cast<std::size_t>(k)]);
        if (diff.empty()) continue;
        r.status = "FAILED";
        r.reason = cat("streams: copy ", k, " of ", copies, " (stream ", k % n,
                ") differs from the same copy run alone: ", diff);
        break;
    }
    const auto [seq_ms, streams_ms] = alternating_median_ms(sequential, on_streams, opts.reps, opts.max_ms);
    r.streams = n;
    r.copies = copies;
    r.budgets = budgets_of(ss);
    r.seq_ms = seq_ms;
    r.streams_ms = streams_ms;
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

std::string bitwise_difference(
        const std::vector<std::vector<float>> &got, const std::vector<std::vector<float>> &want) {
    if (got.size() != want.size()) return cat(got.size(), " outputs, not ", want.size());
    for (std::size_t o = 0; o < got.size(); ++o) {
        if (got[o].size() != want[o].size())
            return cat("output ", o, " has ", got[o].size(), " values, not ", want[o].size());
        for (std::size_t i = 0; i < got[o].size(); ++i) {
            const auto g = std::bit_cast<std::uint32_t>(got[o][i]), w = std::bit_cast<std::uint32_t>(want[o][i]);
            if (g == w) continue;
            char b[160];
            std::snprintf(b, sizeof b, "output %zu value %zu is %.9g (0x%08x) on the streams, %.9g (0x%08x) alone", o,
                    i, got[o][i], static_cast<unsigned>(g), want[o][i], static_cast<unsigned>(w));
            return b;
        }
    }
    return "";
}

std::vector<row_t> run_problems(const std::vector<problem_t> &problems, const run_opts_t &opts, const machine_t &m,
        const baseline_t &baseline) {
    std::vector<row_t> rows;
    progress_t progress(opts.progress);
    isa_cap_guard_t guard;
    const isa user_cap = max_isa(); // set_max_isa or BLOCKDNN_MAX_ISA: columns above it do not run
    const streams_t ss = opts.performance && opts.streams > 0 ? make_streams(opts.streams) : streams_t();
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
        if (c->memory_bytes() > memory_limit()) {
            base.status = "skipped";
            base.reason = cat("needs about ", static_cast<long>(c->memory_bytes() / 1e9),
                    " GB of memory, more than half of this machine's ", static_cast<long>(2 * memory_limit() / 1e9),
                    " GB (give a smaller --mb)");
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
            progress.show(
                    i, problems.size(), cat(p.driver, " ", r.isa, " ", spec->name.empty() ? spec->str : spec->name));
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
                    if (!ss.empty()) run_streams(*c, opts, ss, r);
                }
            } catch (const error &e) {
                r.status = e.code() == status::invalid_arguments || e.code() == status::unimplemented ? "skipped"
                                                                                                      : "FAILED";
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
