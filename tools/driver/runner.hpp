// SPDX-License-Identifier: Apache-2.0
// Runs problems on ISAs: correctness against the reference, median time, rate and % of peak,
// an optional baseline time, the streams mode's throughput, one result row per (problem, ISA).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "blockdnn/isa.hpp"
#include "testing/batch.hpp"
#include "driver/spec.hpp"

namespace bdrv {

/// What this machine does at best, per core and for the run's thread count.
struct machine_t {
    double peak_avx512 = 0, peak_avx2 = 0, peak_scalar = 0; ///< GFLOP/s of one core's FMAs
    double copy_gbps = 0;                                   ///< memcpy read + write GB/s, all threads
    int threads = 1;
    /// GFLOP/s peak of `threads` cores at `level` (scalar: one FMA per cycle's worth, 1/8 of ymm).
    double peak(blockdnn::isa level) const;
    /// "avx512 271.3 GFLOP/s, avx2 135.9 GFLOP/s"; an ISA the CPU lacks (peak 0) reads
    /// "avx512 (not on this CPU)".
    std::string fma_peaks_text() const;
};

struct run_opts_t {
    bool correctness = true, performance = true;
    std::vector<blockdnn::isa> isas;
    int reps = 5;         ///< timed repetitions (the median is reported)
    double max_ms = 3000; ///< stop timing a problem after this many ms (at least one repetition)
    long mb = 0;          ///< > 0: overrides every problem's minibatch
    bool progress = true; ///< a progress line on stderr
    /// The streams mode (with performance): > 0 runs `copies` copies of each problem
    /// (op_case_t::make_copy: one op object, buffers per copy) on this many streams from
    /// blockdnn::make_streams, copy k on stream k % streams, beside the same copies one after
    /// another on the default stream (all threads); the two are timed alternately and their
    /// outputs compared bit for bit.
    int streams = 0;
    int copies = 0; ///< copies per problem in the streams mode; 0: 2 * streams (two per stream)
};

/// One problem on one ISA. status: "passed", "FAILED", "skipped" (reason says why: the
/// driver or op does not run it), "invalid" (a malformed problem), "ran" (performance only).
struct row_t {
    std::string driver, name, prb, where, isa, impl, status, reason;
    double err = -1, tol = 0; ///< err < 0: not checked
    double ms = 0;            ///< median time of one execution (0: not timed)
    double rate = 0;          ///< GFLOP/s or GB/s
    bool flops = true;        ///< rate is GFLOP/s (else GB/s)
    double pct = 0;           ///< % of the machine's peak (FMA or copy bandwidth)
    double base_ms = 0;       ///< baseline time (0: none)
    std::string base_impl;
    // The streams mode (run_opts_t::streams > 0). A difference between the streams' outputs
    // and the sequential ones makes the row FAILED, with the reason.
    int streams = 0, copies = 0; ///< 0: the streams mode did not run on this row
    std::string budgets;         ///< the streams' thread budgets, "1+1"
    double seq_ms = 0;           ///< median time of the copies one after another on all threads
    double streams_ms = 0;       ///< median time of the same copies on the streams
    std::string streams_note;    ///< why the streams mode did not run on a timed row
};

/// A baseline timer: the median ms of one execution of the problem by another library at
/// `level` with `threads` threads, 0 if it does not run it; base_impl gets its impl name.
using baseline_t =
        std::function<double(const spec_t &, blockdnn::isa level, int threads, int reps, std::string &base_impl)>;

/// Runs every problem on every ISA of opts (skipping ISAs the CPU lacks).
std::vector<row_t> run_problems(const std::vector<problem_t> &problems, const run_opts_t &opts, const machine_t &m,
        const baseline_t &baseline = {});

/// Where the streams' output lists `got` differ bit for bit from those of the sequential run,
/// `want` ("output 0 value 17 is ... on the streams, ... alone"); "" if nowhere.
std::string bitwise_difference(const std::vector<std::vector<float>> &got, const std::vector<std::vector<float>> &want);

/// The thread budgets of blockdnn::make_streams(n)'s streams, joined by '+' ("2+1+1").
std::string stream_budgets(int n);

/// "avx512", "avx2", "ref": the driver's ISA words.
const char *isa_word(blockdnn::isa level);
/// Parses a comma list of avx512 / avx2 / ref / all (the JIT ISAs the CPU has under the cap,
/// set_max_isa or BLOCKDNN_MAX_ISA; ref when that leaves none); throws blockdnn::error naming
/// a bad word.
std::vector<blockdnn::isa> parse_isa_list(const std::string &text);

} // namespace bdrv
