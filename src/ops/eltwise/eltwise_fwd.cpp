// SPDX-License-Identifier: Apache-2.0
// eltwise_fwd: validation, the dispatch table (jit:avx512_core, jit:avx2, ref), execution
// with its verbose line.
#include <cstdint>
#include <span>

#include "blockdnn/eltwise.hpp"
#include "tensor/launch.hpp"
#include "core/utils.hpp"
#include "core/verbose.hpp"
#include "ops/eltwise/eltwise_impl.hpp"
#include "ops/op_state.hpp"

namespace blockdnn {

using namespace impl;

namespace impl {

namespace {

constexpr eltwise_row_t impls[] = {
        {"jit:avx512_core", isa::avx512_core, create_eltwise_fwd_jit<isa::avx512_core>},
        {"jit:avx2", isa::avx2, create_eltwise_fwd_jit<isa::avx2>},
        {"ref", isa::scalar, create_any<create_eltwise_fwd_ref>},
};

void check_tensor(const char *what, const tensor &t, const tensor_desc &d) {
    if (t.empty()) fail(status::invalid_arguments, "eltwise_fwd: ", what, " tensor has no memory");
    if (t.desc() != d)
        fail(status::invalid_arguments, "eltwise_fwd: ", what, " ", t.desc().str(), " differs from the op's desc ",
                d.str());
}

} // namespace

std::span<const eltwise_row_t> eltwise_fwd_impls() { return impls; }

struct eltwise_fwd_state_t : op_state_t<eltwise_prb_t, eltwise_impl_t> {
    eltwise_desc desc;
    isa created_isa = isa::scalar; // effective ISA at creation, for verbose lines
};

} // namespace impl

namespace {

// Picks the implementation of a validated problem.
std::shared_ptr<const eltwise_fwd_state_t> make_state(const eltwise_prb_t &prb) {
    auto s = create_op_state<eltwise_fwd_state_t>("eltwise_fwd", eltwise_fwd_impls(), prb);
    s->desc = prb.op_desc();
    s->created_isa = effective_isa();
    return s;
}

// The tensor_desc form's problem: the desc of its fields, validated, and the descriptor as given.
eltwise_prb_t prb_of(eltwise_alg alg, float alpha, float beta, const tensor_desc &desc) {
    eltwise_prb_t p {alg, alpha, beta, desc};
    check_eltwise_prb(p);
    return p;
}

} // namespace

eltwise_fwd::eltwise_fwd(const eltwise_desc &desc, format_tag src_tag, format_tag dst_tag)
    : primitive(make_state(make_eltwise_prb(desc, src_tag, dst_tag))) {}

eltwise_fwd::eltwise_fwd(eltwise_alg alg, float alpha, float beta, const tensor_desc &desc)
    : primitive(make_state(prb_of(alg, alpha, beta, desc))) {}

void eltwise_fwd::execute(const eltwise_fwd_args &args) const {
    const tensor &src = args.src, &dst = args.dst;
    const eltwise_fwd_state_t &st = state<eltwise_fwd_state_t>();
    const tensor_desc &d = st.prb.desc;
    check_tensor("src", src, d);
    check_tensor("dst", dst, d);
    const auto sb = reinterpret_cast<std::uintptr_t>(src.data()), db = reinterpret_cast<std::uintptr_t>(dst.data());
    const std::uintptr_t bytes = d.size_bytes();
    if (sb != db && sb < db + bytes && db < sb + bytes)
        fail(status::invalid_arguments, "eltwise_fwd: src and dst overlap without being the same memory (src at +",
                sb > db ? sb - db : db - sb, " bytes from dst)");
    launch(
            {"eltwise_fwd", st.impl_name, st.created_isa, shared_state()}, {&src, &dst}, [&] { return st.prb.str(); },
            [impl = st.impl.get(), s = src.f32(), d = dst.f32()] {
                impl->execute({s, d});
            });
}

const eltwise_desc &eltwise_fwd::desc() const { return state<eltwise_fwd_state_t>().desc; }
const tensor_desc &eltwise_fwd::src_desc() const { return state<eltwise_fwd_state_t>().prb.desc; }
const tensor_desc &eltwise_fwd::dst_desc() const { return state<eltwise_fwd_state_t>().prb.desc; }
eltwise_alg eltwise_fwd::alg() const { return state<eltwise_fwd_state_t>().prb.alg; }
float eltwise_fwd::alpha() const { return state<eltwise_fwd_state_t>().prb.alpha; }
float eltwise_fwd::beta() const { return state<eltwise_fwd_state_t>().prb.beta; }

} // namespace blockdnn
