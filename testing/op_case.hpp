// SPDX-License-Identifier: Apache-2.0
// One problem of one op made runnable, the same way for every op: created at an ISA cap,
// executed (what a benchmark times), and checked against the reference implementation (the
// same public op created with the ISA capped at scalar) on the same seeded inputs; for the
// streams mode, copies with buffers of their own. Tests, blockdnn-bench's driver
// (tools/driver/case_*.cpp implement it per op) and benchmarks share this interface.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "blockdnn/blockdnn.hpp"

namespace bdtest {

/// What one execution does, for rates: bytes > 0 gives GB/s against the copy bandwidth, else
/// flops gives GFLOP/s against the FMA peak (an op counted in FLOPs keeps that unit when it
/// does none: a convolution whose every tap falls on padding).
struct work_t {
    double flops = 0;
    double bytes = 0;
};

/// One copy of a prepared problem, for the streams mode (runner.hpp): the case's op object,
/// shared by all copies as a server shares one model among its requests, with inputs and
/// outputs of its own.
class op_copy_t {
public:
    virtual ~op_copy_t() = default;
    /// Fills the copy's inputs again (in-place ops and sum post-ops change them).
    virtual void reset() = 0;
    /// One execution on the copy's tensors, on the calling thread's current stream.
    virtual void execute() = 0;
    /// The outputs' logical values, one list per output (read after the stream finished).
    virtual std::vector<std::vector<float>> outputs() const = 0;
};

class op_case_t {
public:
    virtual ~op_case_t() = default;
    /// Creates the op under the current ISA cap (the caller sets it to `level`), in the layouts
    /// the spec asks or, for "any" (conv), the op's own pick (created with format_tag::any, the
    /// layouts its src_desc()/wei_desc()/dst_desc() answer), and fills its inputs. Returns the implementation name. Throws
    /// `blockdnn::error` if the op rejects the problem.
    virtual std::string prepare(blockdnn::isa level) = 0;
    /// One execution of the prepared op (what is timed).
    virtual void execute() = 0;
    /// Runs the prepared op once on fresh inputs and returns the largest error over its
    /// outputs against the reference (tol::rel_err's measure); the reference runs once per case.
    virtual double check() = 0;
    /// The op's tolerance (testing/tolerances.hpp) for the prepared implementation.
    virtual double tolerance() const = 0;
    virtual work_t work() const = 0;
    /// About how many bytes prepare() and check() hold at once (inputs, outputs in two
    /// layouts, the reference's): the runner skips problems that would not fit in memory.
    virtual double memory_bytes() const = 0;
    /// Copy k (0, 1, ...) of the prepared problem: the prepared op, and the read-only tensors
    /// it takes at execution (conv weights and bias) shared; inputs of its own, seeded apart
    /// from every other copy's (copy_seed), so that copies mixed up show; outputs of its own.
    /// Valid until the next prepare().
    virtual std::unique_ptr<op_copy_t> make_copy(int k) = 0;
};

/// The seed of copy k for a case's input seeded `seed`.
inline unsigned copy_seed(unsigned seed, int k) { return seed + 1000u * static_cast<unsigned>(k + 1); }

/// An op_copy_t over a buffer set: make() builds and fills a fresh set (at creation and on
/// reset), run() executes the op on it, outputs() reads it.
template <typename Bufs>
std::unique_ptr<op_copy_t> copy_from(std::function<Bufs()> make, std::function<void(const Bufs &)> run,
        std::function<std::vector<std::vector<float>>(const Bufs &)> outputs) {
    class copy_t final : public op_copy_t {
    public:
        copy_t(std::function<Bufs()> make, std::function<void(const Bufs &)> run,
                std::function<std::vector<std::vector<float>>(const Bufs &)> outputs)
            : make_(std::move(make)), run_(std::move(run)), outputs_(std::move(outputs)), bufs_(make_()) {}
        void reset() override { bufs_ = make_(); }
        void execute() override { run_(bufs_); }
        std::vector<std::vector<float>> outputs() const override { return outputs_(bufs_); }

    private:
        std::function<Bufs()> make_;
        std::function<void(const Bufs &)> run_;
        std::function<std::vector<std::vector<float>>(const Bufs &)> outputs_;
        Bufs bufs_;
    };
    return std::make_unique<copy_t>(std::move(make), std::move(run), std::move(outputs));
}

/// Restores the ISA cap on scope exit (the reference runs capped at scalar).
class isa_cap_guard_t {
public:
    isa_cap_guard_t() : saved_(blockdnn::max_isa()) {}
    ~isa_cap_guard_t() { blockdnn::set_max_isa(saved_); }
    isa_cap_guard_t(const isa_cap_guard_t &) = delete;
    isa_cap_guard_t &operator=(const isa_cap_guard_t &) = delete;

private:
    blockdnn::isa saved_;
};

} // namespace bdtest
