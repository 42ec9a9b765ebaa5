// SPDX-License-Identifier: Apache-2.0
// What a public op class holds (blockdnn::primitive's state), the same in every op: the
// problem, the implementation its table picked and that row's name. An op with more (weights
// held since creation) derives from op_state_t. Part of the ops' shared contract.
#pragma once

#include <memory>
#include <span>
#include <string>

#include "blockdnn/primitive.hpp"
#include "blockdnn/tensor.hpp"
#include "ops/op_table.hpp"

namespace blockdnn::impl {

/// The part of an op's state that blockdnn::primitive's queries read. execute() reads only
/// impl_name here; str() and info() are for the queries, not for the hot path.
struct op_state_base_t {
    virtual ~op_state_base_t() = default;
    /// The problem in words, as verbose lines print it (primitive::str()).
    virtual std::string str() const = 0;
    /// The implementation's decisions in words (impl_t::info()); empty if none.
    virtual std::string info() const = 0;

    const char *impl_name = ""; ///< the name of the table's row that took the problem
};

/// The problem's text: prb.str(), or to_string(prb) for the problems that spell it so.
template <typename prb_t>
std::string prb_str(const prb_t &prb) {
    if constexpr (requires { prb.str(); }) return prb.str();
    else return to_string(prb);
}

/// The state of an op whose table has rows op_row_t<prb_t, base_t>.
template <typename prb_t, typename base_t>
struct op_state_t : op_state_base_t {
    using prb_type = prb_t;
    using row_t = op_row_t<prb_t, base_t>;

    std::string str() const override { return prb_str(prb); }
    std::string info() const override { return impl->info(); }

    prb_t prb;
    std::unique_ptr<base_t> impl;
    /// The names of each argument's dims, for check_arg()'s messages: views of static tables
    /// (an op's names depend only on its rank), so a creation copies none; empty where the
    /// op's messages say "dims[d]". A span binds to a temporary vector without a word, so
    /// assign only what outlives the op.
    std::span<const std::string> src_fields, wei_fields, dst_fields;
};

/// The state of an op that may take its weights at creation (conv, ip): its own copies of
/// them, which hold_weights_at_creation() fills and check_weighted_args() reads.
template <typename prb_t, typename base_t>
struct weighted_op_state_t : op_state_t<prb_t, base_t> {
    tensor wei, bia; ///< empty unless the weights were given at creation
};

/// Makes an op's state for the problem `prb`: the implementation comes from the first row of
/// `table` that takes it (create_impl(), which throws blockdnn::error if none does), and the
/// state keeps that row's name. `op` names the op in verbose lines and errors.
template <typename state_t>
std::shared_ptr<state_t> create_op_state(
        const char *op, std::span<const typename state_t::row_t> table, typename state_t::prb_type prb) {
    auto st = std::make_shared<state_t>();
    st->prb = std::move(prb);
    const typename state_t::prb_type &p = st->prb;
    st->impl_name = create_impl(
            table, p, op, [&p] { return prb_str(p); }, st->impl)
                            .name;
    return st;
}

} // namespace blockdnn::impl
