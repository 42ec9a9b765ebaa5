// SPDX-License-Identifier: Apache-2.0
// The base of every op class: the state an op shares with its copies, and the queries every
// op answers.
#pragma once

#include <memory>
#include <string>

namespace blockdnn {

namespace impl {
struct op_state_base_t;
}

/// What every op class is (conv_fwd, softmax_fwd, bnorm_bwd, ...), as oneDNN's
/// dnnl::primitive: a handle to the state made at creation (the problem and the implementation
/// chosen for it), shared by copies, so copying an op is cheap and the copy runs the same
/// implementation. Code that only reports on ops can take a `const primitive &`. A moved-from
/// op may be assigned or destroyed; any other call throws `blockdnn::error`
/// (invalid_arguments) saying so.
class primitive {
public:
    /// The implementation chosen at creation, by the name of its row in the op's table:
    /// "<kind>:<isa>[:<variant>]" ("jit:avx512_core", "jit:avx2:first", "gemm:avx2",
    /// "simd:scalar:max_nxc") or "ref". Each op's class comment lists its own.
    const char *impl_name() const;
    /// impl_name() and, for the implementations that decide more than their name says (the
    /// JIT ones: conf, blocking, plan), those decisions in words on the next lines.
    std::string impl_info() const;
    /// The problem in words, as BLOCKDNN_VERBOSE's exec lines print it: for conv_fwd
    /// "src:nchw wei:oihw dst:nchw mb2ic3ih5oc4oh5kh3 post_ops:relu:0:0" (the desc in
    /// benchdnn syntax, which leaves out the pads that oh implies).
    std::string str() const;

    primitive(const primitive &) = default;
    primitive(primitive &&) = default;

protected:
    explicit primitive(std::shared_ptr<const impl::op_state_base_t> st) : st_(std::move(st)) {}
    // Not virtual, hence protected: an op is never deleted through a primitive pointer.
    ~primitive() = default;
    // Assigning through the base could put one op's state into another op's object; an op
    // class assigns only its own kind.
    primitive &operator=(const primitive &) = default;
    primitive &operator=(primitive &&) = default;
    /// The state, as the op's own state type (its source file defines it).
    template <typename state_t>
    const state_t &state() const {
        if (!st_) throw_moved_from();
        return static_cast<const state_t &>(*st_);
    }
    /// The state's shared pointer, for the work an execute() queues: it keeps the state alive.
    const std::shared_ptr<const impl::op_state_base_t> &shared_state() const { return st_; }

private:
    [[noreturn]] static void throw_moved_from();

    std::shared_ptr<const impl::op_state_base_t> st_;
};

} // namespace blockdnn
