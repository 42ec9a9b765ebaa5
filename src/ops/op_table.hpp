// SPDX-License-Identifier: Apache-2.0
// The contract of an op's implementations, the same in every op folder: an implementation is
// an impl_t<args_t>, created by a row of the op's table; the table lists its rows best first
// and create_impl() takes the first row whose ISA level is usable and whose one-pass create
// takes the problem. Files directly under ops/ are the ops' shared contract: any op may
// include them, and they include no op.
#pragma once

#include <memory>
#include <span>
#include <string>

#include "blockdnn/isa.hpp"
#include "blockdnn/status.hpp"
#include "core/dispatch.hpp"
#include "core/lazy.hpp"
#include "core/utils.hpp"
#include "jit/jit_isa_switch.hpp" // with_jit_isa, make_for_isa, for the rows' creates
#include "tensor/op_check.hpp"

namespace blockdnn::impl {

/// One created implementation of an op; execute() is const and safe to call concurrently.
template <typename args_t>
class impl_t {
public:
    virtual ~impl_t() = default;
    virtual void execute(const args_t &args) const = 0;
    /// Called once, before any execute(), by an op created with its weights (conv, ip, rnn):
    /// only the weight and bias pointers of `weights` are set, to the op's own copies (in the
    /// layouts the implementation prefers), valid for the op's life; every later execute()
    /// gets these same pointers. An implementation may prepare them here (pack them once).
    virtual void take_weights(const args_t &weights) { (void)weights; }
    /// What the implementation decided for its problem (its conf, its plan), in words, for the
    /// public classes' impl_info(); empty where there is nothing beyond the row's name.
    virtual std::string info() const { return {}; }
};

/// One row of an op's table. `create` is one pass: it checks that the implementation takes
/// prb, makes it into `out` and returns success; or it returns unimplemented with the reason
/// in `why` ("try the next row"), or another status with `why`, which fails the creation.
template <typename prb_t, typename base_t>
struct op_row_t {
    const char *name; // "jit:avx2", "simd:scalar:max_nxc", "ref", ...
    isa level;        // lowest ISA level the implementation needs
    status (*create)(const prb_t &prb, std::unique_ptr<base_t> &out, std::string &why);
};

/// The create of a row whose implementation takes every problem (a reference): out = make(prb).
template <auto make, typename prb_t, typename base_t>
status create_any(const prb_t &prb, std::unique_ptr<base_t> &out, std::string &) {
    out = make(prb);
    return status::success;
}

/// The create of a row whose rules are a cheap check: out = make(prb) if accept(prb, why),
/// else unimplemented with accept's reason.
template <auto accept, auto make, typename prb_t, typename base_t>
status create_if(const prb_t &prb, std::unique_ptr<base_t> &out, std::string &why) {
    if (!accept(prb, why)) return status::unimplemented;
    return create_any<make>(prb, out, why);
}

/// Creates prb's implementation into `out` with the first row of `table` whose ISA level is
/// usable (the CPU has it and the max-ISA cap allows it) and whose create succeeds, and returns
/// that row. Each row skipped prints its reason under BLOCKDNN_VERBOSE=dispatch; `op` and the
/// problem's text, prb_str(), are for those lines and for errors (prb_str is called only for
/// them, at most once: a creation that prints nothing does not build the text). Throws
/// blockdnn::error: a create's status other than unimplemented ("<op>: <row> failed for
/// <prb_str>: <why>"), out_of_memory for a std::bad_alloc, unimplemented if no row takes prb
/// (tables end with a ref row, so a bug).
template <typename prb_t, typename base_t, typename str_fn_t>
const op_row_t<prb_t, base_t> &create_impl(std::span<const op_row_t<prb_t, base_t>> table, const prb_t &prb,
        const char *op, const str_fn_t &prb_str, std::unique_ptr<base_t> &out) {
    const isa cap = effective_isa();
    std::string text; // prb_str(), once needed
    auto prb_text = [&]() -> const std::string & {
        if (text.empty()) text = prb_str();
        return text;
    };
    const bool verbose = verbose_level() >= 2;
    for (const op_row_t<prb_t, base_t> &row : table) {
        std::string why;
        // The reason of an unusable level is only printed.
        if (verbose ? isa_usable(row.level, cap, why) : row.level <= cap) {
            const status st =
                    oom_as_error(op, "creating the implementation", [&] { return row.create(prb, out, why); });
            if (st == status::success) return row;
            out.reset();
            if (st != status::unimplemented) fail(st, op, ": ", row.name, " failed for ", prb_text(), ": ", why);
        }
        if (verbose) verbose_skipped(op, row.name, prb_text(), why);
    }
    fail(status::unimplemented, op, ": no implementation accepts ", prb_text());
}

/// The base of a reference implementation: its problem, and the offset tables it builds from
/// it at the first execute() (lazy_t says why not at creation), shared by the threads of that
/// call and every later one.
template <typename base_t, typename prb_t, typename tables_t>
class ref_impl_t : public base_t {
public:
    explicit ref_impl_t(const prb_t &p) : p_(p), tables_([p] { return std::make_shared<const tables_t>(p); }) {}

protected:
    const tables_t &tables() const { return *tables_.get(); }
    prb_t p_;

private:
    lazy_t<std::shared_ptr<const tables_t>> tables_;
};

/// Weights given at creation, for an op with weights (conv, ip) whose state `st` holds the
/// problem (prb: desc.with_bias, wei, bia), its implementation, the op's own wei and bia
/// tensors and the field names of wei: checks wei and bia against the problem, holds them in
/// layout `held_tag` (the implementation's preferred one; undef keeps prb.wei's, and prb.wei
/// becomes the held layout) and tells the implementation once (take_weights).
template <typename state_t>
void hold_weights_at_creation(const char *op, state_t &st, const tensor &wei, const tensor &bia, format_tag held_tag) {
    check_arg(op, "wei", wei, st.prb.wei, st.wei_fields);
    check_bias_arg(op, bia, st.prb.desc.with_bias, st.prb.bia);
    if (held_tag != format_tag::undef) st.prb.wei = tensor_desc(st.prb.wei.dims(), held_tag);
    hold_weights(wei, bia, st.prb.wei, st.prb.bia, st.wei, st.bia);
    st.impl->take_weights({nullptr, st.wei.f32(), st.prb.desc.with_bias ? st.bia.f32() : nullptr, nullptr});
}

/// The argument checks of execute() for an op with weights (state as above, with the field
/// names of src and dst too): the held weights or the given ones (check_held_weights), then
/// each tensor against the problem and dst apart from the inputs. Returns whether the op holds
/// its weights (execute then runs on st.wei and st.bia).
template <typename state_t>
bool check_weighted_args(
        const char *op, const state_t &st, const tensor &src, const tensor &wei, const tensor &bia, const tensor &dst) {
    const bool held = !st.wei.empty();
    check_held_weights(op, held, wei, bia);
    check_arg(op, "src", src, st.prb.src, st.src_fields);
    if (!held) {
        check_arg(op, "wei", wei, st.prb.wei, st.wei_fields);
        check_bias_arg(op, bia, st.prb.desc.with_bias, st.prb.bia);
    }
    check_arg(op, "dst", dst, st.prb.dst, st.dst_fields);
    check_no_overlap(op, "dst", dst, "src", src);
    if (!held) {
        check_no_overlap(op, "dst", dst, "wei", wei);
        check_no_overlap(op, "dst", dst, "bia", bia);
    }
    return held;
}

} // namespace blockdnn::impl
