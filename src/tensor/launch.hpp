// SPDX-License-Identifier: Apache-2.0
// The one way an op's execution starts. Every public op (each execute, reorder) checks its
// arguments at the call, then hands its work to launch(), which runs it on the calling
// thread's current stream: inline on the default stream, queued in call order inside a
// stream_scope. Queued work holds the op's state and copies of its tensors, so both outlive
// the caller's handles, and it runs in the denormals mode the caller had at the call.
#pragma once

#include <array>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "blockdnn/isa.hpp"
#include "blockdnn/stream.hpp"
#include "blockdnn/tensor.hpp"
#include "core/fp_env.hpp"
#include "core/utils.hpp"
#include "core/verbose.hpp"
#include "sched/fn_ref.hpp"

namespace blockdnn::impl {

/// Reads a tensor's shared memory handle (what keeps it alive), without copying its descriptor.
struct tensor_access {
    static const std::shared_ptr<void> &memory(const tensor &t) { return t.mem_; }
};

/// The memory handles of up to `inline_n` tensors kept in place, more in a vector: what queued
/// work holds so that the memory it reads and writes outlives the caller's handles.
class kept_memory_t {
public:
    static constexpr std::size_t inline_n = 4;
    void add(const std::shared_ptr<void> &m) {
        if (!m) return; // wrapped memory: the caller's duty
        if (n_ < inline_n) inline_[n_++] = m;
        else more_.push_back(m);
    }

private:
    std::array<std::shared_ptr<void>, inline_n> inline_ {};
    std::size_t n_ = 0;
    std::vector<std::shared_ptr<void>> more_;
};

/// What launch() needs to know of an op besides its work.
struct op_call_t {
    const char *op;                    ///< the op's name in errors and verbose lines ("conv_fwd")
    const char *impl;                  ///< the implementation's name; null: no verbose line
    isa level;                         ///< the ISA the verbose line names
    std::shared_ptr<const void> state; ///< the op's state, which the work reads (may be null)
};

/// For an op's creation that reads tensors now (weights given at creation): inside a
/// stream_scope, waits for the work queued so far on the current stream, which may be what
/// writes them (a fold, an import, a reorder), and rethrows its first error. On the default
/// stream, nothing to wait for.
inline void wait_for_current_stream() {
    if (stream &s = current_stream(); !s.is_default()) s.synchronize();
}

/// Runs work() in denormals mode dm; prints `line` (a verbose exec line without its time) with
/// the time taken, unless it is empty.
void run_op(const char *op, denormals_mode dm, const std::string &line, sched::fn_ref_t<void()> work);

/// The verbose exec line of a call without its time; empty when BLOCKDNN_VERBOSE is off, and
/// describe() (the problem string) is called only when it is on.
template <typename Describe>
std::string exec_line(const char *op, const char *impl, isa level, Describe &&describe) {
    if (!impl || !verbose_level()) return {};
    return cat("blockdnn_verbose,exec,", op, ",", impl, ",", to_string(level), ",", describe());
}

/// Runs work() on the current stream, after the caller has checked every argument. `tensors`
/// are the tensors work reads or writes through raw pointers; null or empty ones are skipped.
/// describe() gives the problem string of the verbose line and is called, at the call, only
/// when BLOCKDNN_VERBOSE is on. work must own (copy) whatever else it needs, since it may run
/// after the caller's frame is gone. On the default stream its exceptions reach the caller;
/// queued, they surface at the stream's synchronize().
template <typename Describe, typename Work>
void launch(const op_call_t &call, std::initializer_list<const tensor *> tensors, Describe &&describe, Work &&work) {
    const denormals_mode dm = get_denormals_mode(); // the caller's: may throw, at the call
    std::string line = exec_line(call.op, call.impl, call.level, describe);
    stream &s = current_stream();
    if (s.is_default()) {
        run_op(call.op, dm, line, work);
        return;
    }
    oom_as_error(call.op, "queueing the op on the current stream", [&] {
        kept_memory_t keep;
        for (const tensor *t : tensors)
            if (t && !t->empty()) keep.add(tensor_access::memory(*t));
        s.submit([op = call.op, dm, line = std::move(line), state = call.state, keep = std::move(keep),
                         work = std::forward<Work>(work)] { run_op(op, dm, line, work); });
    });
}

} // namespace blockdnn::impl
