// SPDX-License-Identifier: Apache-2.0
// Fused RNN forward cell of one panel (layout in rnn_conf.hpp): one pass over the gate
// pre-activations that adds the bias, applies the gate nonlinearities and updates the states.
//   for m < rows:  for v < nv (vectors of the panel's hidden units):
//     vanilla:  h = act(g0 + b0)
//     lstm:     i, f, o = sigmoid(g + b), c~ = tanh(g2 + b2); c = f c + i c~; h = o tanh(c)
//     gru 1:    u = sigmoid(g0 + b0) (written back into g0), r = sigmoid(g1 + b1); rh = r h_prev
//     gru 2:    o = tanh(g2 + b2) (g2 includes U_o (r h)); h = o + u (h_prev - o)
//     lbr_gru:  u, r = sigmoid(gx + gh + b); o = tanh(gx2 + b2 + r (gh2 + b3)); h = o + u (h_prev - o)
// The nonlinearities are the foundation's eltwise injector; the gates of one vector that share
// a function go through it together (lstm's i, f and o in one sigmoid pass), so their
// dependency chains overlap.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "jit/isa_traits.hpp"
#include "jit/jit_generator.hpp"
#include "jit/jit_kernel_handle.hpp"
#include "jit/jit_tail_mask.hpp"
#include "ops/rnn/rnn_conf.hpp"

namespace blockdnn::impl {

/// Arguments of one call (pointers at row 0 of the panel), read through offsetof; keep POD.
struct rnn_cell_call_args_t {
    float *gates;         // gate pre-activations (gru part 1 writes u back into gate 0)
    const float *gates_h; // lbr_gru: recurrent pre-activations U h_{t-1}
    const float *bias;    // the panel's packed bias
    const float *h_prev;  // h_{t-1}
    float *h_new;         // h_t
    float *c;             // lstm: c_{t-1} in, c_t out
    float *rh;            // gru part 1: r * h_{t-1} out
    std::int64_t rows;
};

template <isa level>
class jit_rnn_cell_fwd_kernel_t : public jit_generator_t {
public:
    explicit jit_rnn_cell_fwd_kernel_t(const rnn_cell_conf_t &c)
        : jit_generator_t(std::string("jit_rnn_cell_fwd_") + to_string(c.cell), level), c_(c) {}
    std::string conf_str() const override;

private:
    BLOCKDNN_JIT_ISA_NAMES(level);

    // General-purpose registers, one owner each.
    const Xbyak::Reg64 reg_param = abi_param1;
    const Xbyak::Reg64 reg_gates = rsi;
    const Xbyak::Reg64 reg_gates_h = rdx;
    const Xbyak::Reg64 reg_bias = rcx;
    const Xbyak::Reg64 reg_h_prev = r8;
    const Xbyak::Reg64 reg_h_new = r9;
    const Xbyak::Reg64 reg_c = r10;
    const Xbyak::Reg64 reg_rh = r11;
    const Xbyak::Reg64 reg_rows = rax;
    const Xbyak::Reg32 reg_tmp32 = edi; // opmask setup, after the arguments are read
    const Xbyak::Opmask k_tail = k1;    // AVX-512: the panel's last, partial vector
    const Xbyak::Opmask k_act = k7;     // AVX-512: clobbered by the injector

    // Vector registers: each cell's values from 0 up, the injector's temporaries right after
    // the values it works on (as each piece of generate() says), the AVX2 tail mask at the top.
    Vmm vg(int i) const { return Vmm(i); }
    Vmm vmm_mask() const { return Vmm(n_vregs - 1); }

    void generate() override;
    void vector(int v, bool tail); // one vector of one row
    void lstm(int v, bool tail);
    void vanilla(int v, bool tail);
    void gru_part1(int v, bool tail);
    void gru_part2(int v, bool tail);
    void lbr_gru(int v, bool tail);

    // dst = gate g + its bias (+ the recurrent gate when `with_h`).
    void load_gate(const Vmm &dst, int g, int v, bool with_h = false);
    Xbyak::Address gate_addr(const Xbyak::Reg64 &base, int g, int v) const {
        return ptr[base + (g * c_.hb + v * simd_w) * 4];
    }
    Xbyak::Address state_addr(const Xbyak::Reg64 &base, int v) const { return ptr[base + v * simd_w * 4]; }
    void load_state(const Vmm &dst, const Xbyak::Address &a, bool tail) {
        emit_load_tail<is_avx512>(*this, dst, a, tail, k_tail, vmm_mask());
    }
    void store_state(const Xbyak::Address &a, const Vmm &src, bool tail) {
        emit_store_tail<is_avx512>(*this, a, src, tail, k_tail, vmm_mask());
    }
    // alg on the registers `vals`, temporaries from `tmp_first` on.
    void act(eltwise_alg alg, float alpha, const std::vector<int> &vals, int tmp_first);

    const rnn_cell_conf_t c_;
};

/// A generated cell kernel behind a plain call.
class rnn_cell_kernel_t : public jit_kernel_handle_t<rnn_cell_kernel_t, rnn_cell_conf_t, rnn_cell_call_args_t> {
public:
    /// The kernel for `c`, from the process-wide kernel cache or generated.
    static status create(std::unique_ptr<rnn_cell_kernel_t> &out, const rnn_cell_conf_t &c, std::string &why);
    void operator()(const rnn_cell_call_args_t &args) const { call(args); }

private:
    using base = jit_kernel_handle_t<rnn_cell_kernel_t, rnn_cell_conf_t, rnn_cell_call_args_t>;
    friend base;
    using base::base;
};

} // namespace blockdnn::impl
