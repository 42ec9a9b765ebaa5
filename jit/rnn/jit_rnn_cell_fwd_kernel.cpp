// SPDX-License-Identifier: Apache-2.0
// Code generation of the fused RNN forward cell, and its init_conf.
#include "jit/rnn/jit_rnn_cell_fwd_kernel.hpp"

#include "common/utils.hpp"

namespace blockdnn::impl {

using namespace Xbyak;

status init_conf_rnn_cell(rnn_cell_conf_t &c, isa level, rnn_cell cell, rnn_cell_part_t part,
        eltwise_alg activation, float alpha, int hb, int n_valid, std::int64_t LDG, std::int64_t LDGH,
        std::int64_t LDH, std::int64_t LDS, std::string &why) {
    if (level != isa::avx512_core && level != isa::avx2) {
        why = cat("rnn cell: no JIT kernel for isa ", to_string(level));
        return status::unimplemented;
    }
    if (cell == rnn_cell::vanilla_rnn && activation != eltwise_alg::tanh && activation != eltwise_alg::relu
            && activation != eltwise_alg::sigmoid) {
        why = cat("rnn cell: vanilla activation ", to_string(activation), " has no JIT piece");
        return status::unimplemented;
    }
    const int simd_w = simd_width(level);
    const int G = rnn_n_gates(cell);
    if (hb < simd_w || hb % simd_w || n_valid < 1 || n_valid > hb || LDG < G * hb
            || (part != rnn_cell_part_t::full) != (cell == rnn_cell::gru)) {
        why = cat("rnn cell: bad block hb=", hb, " n_valid=", n_valid, " LDG=", LDG, " LDH=", LDH);
        return status::unimplemented;
    }
    c = rnn_cell_conf_t {};
    c.level = level, c.cell = cell, c.part = part, c.activation = activation, c.alpha = alpha;
    c.simd_w = simd_w, c.hb = hb, c.n_valid = n_valid;
    c.nv = static_cast<int>(div_up(n_valid, simd_w));
    c.n_tail = n_valid % simd_w;
    c.LDG = LDG, c.LDGH = LDGH, c.LDH = LDH, c.LDS = LDS;
    return status::success;
}

std::string to_string(const rnn_cell_conf_t &c) {
    const char *part = c.part == rnn_cell_part_t::gru_part1 ? ":part1" : c.part == rnn_cell_part_t::gru_part2 ? ":part2" : "";
    return cat(to_string(c.level), " ", to_string(c.cell), part,
            c.cell == rnn_cell::vanilla_rnn ? cat(":", to_string(c.activation)) : std::string(), " hb", c.hb,
            " n_valid", c.n_valid, " nv", c.nv, " n_tail", c.n_tail, " LDG", c.LDG, " LDGH", c.LDGH, " LDH", c.LDH,
            " LDS", c.LDS);
}

template <isa level>
void jit_rnn_cell_fwd_kernel_t<level>::load_gate(const Vmm &dst, int g, int v, bool with_h) {
    // Gates and bias are padded to whole vectors: full loads, whatever the tail.
    vmovups(dst, gate_addr(reg_gates, g, v));
    vaddps(dst, dst, gate_addr(reg_bias, g, v));
    if (with_h) vaddps(dst, dst, gate_addr(reg_gates_h, g, v));
}

template <isa level>
void jit_rnn_cell_fwd_kernel_t<level>::load_state(const Vmm &dst, const Address &a, bool tail) {
    if (!tail) vmovups(dst, a);
    else if constexpr (is_avx512) vmovups(dst | k_tail | T_z, a);
    else vmaskmovps(dst, vmm_mask(), a);
}

template <isa level>
void jit_rnn_cell_fwd_kernel_t<level>::store_state(const Address &a, const Vmm &src, bool tail) {
    if (!tail) vmovups(a, src);
    else if constexpr (is_avx512) vmovups(a | k_tail, src);
    else vmaskmovps(a, vmm_mask(), src);
}

template <isa level>
void jit_rnn_cell_fwd_kernel_t<level>::vanilla(int v, bool tail) {
    const Vmm x = vg(0);
    load_gate(x, 0, v);
    switch (c_.activation) {
    case eltwise_alg::relu: act_.relu(x, vt(0), vt(1)); break;
    case eltwise_alg::sigmoid: sigmoid(x); break;
    default: tanh(x); break;
    }
    store_state(state_addr(reg_h_new, v), x, tail);
}

template <isa level>
void jit_rnn_cell_fwd_kernel_t<level>::lstm(int v, bool tail) {
    const Vmm gi = vg(0), gf = vg(1), gc = vg(2), go = vg(3), cs = vg(4), th = vg(5);
    load_gate(gi, 0, v);
    sigmoid(gi);
    load_gate(gf, 1, v);
    sigmoid(gf);
    load_gate(gc, 2, v);
    tanh(gc);
    load_gate(go, 3, v);
    sigmoid(go);
    load_state(cs, state_addr(reg_c, v), tail);
    vmulps(gc, gc, gi);
    vfmadd231ps(gc, gf, cs); // c_t = f c_{t-1} + i c~
    store_state(state_addr(reg_c, v), gc, tail);
    vmovaps(th, gc);
    tanh(th);
    vmulps(th, th, go);
    store_state(state_addr(reg_h_new, v), th, tail);
}

template <isa level>
void jit_rnn_cell_fwd_kernel_t<level>::gru_part1(int v, bool tail) {
    const Vmm u = vg(0), r = vg(1), h = vg(2);
    load_gate(u, 0, v);
    sigmoid(u);
    vmovups(gate_addr(reg_gates, 0, v), u); // u for part 2 (padding lanes included: harmless)
    load_gate(r, 1, v);
    sigmoid(r);
    load_state(h, state_addr(reg_h_prev, v), tail);
    vmulps(r, r, h);
    store_state(state_addr(reg_rh, v), r, tail);
}

template <isa level>
void jit_rnn_cell_fwd_kernel_t<level>::gru_part2(int v, bool tail) {
    const Vmm o = vg(0), u = vg(1), h = vg(2);
    load_gate(o, 2, v);
    tanh(o);
    vmovups(u, gate_addr(reg_gates, 0, v));
    load_state(h, state_addr(reg_h_prev, v), tail);
    vsubps(h, h, o);
    vfmadd213ps(h, u, o); // o + u (h_prev - o)
    store_state(state_addr(reg_h_new, v), h, tail);
}

template <isa level>
void jit_rnn_cell_fwd_kernel_t<level>::lbr_gru(int v, bool tail) {
    const Vmm u = vg(0), r = vg(1), o = vg(2), n = vg(3), h = vg(4);
    load_gate(u, 0, v, true);
    sigmoid(u);
    load_gate(r, 1, v, true);
    sigmoid(r);
    vmovups(n, gate_addr(reg_gates_h, 2, v));
    vaddps(n, n, gate_addr(reg_bias, 3, v)); // U_o h + B_u'
    load_gate(o, 2, v);                      // W_o x + B_o
    vfmadd231ps(o, r, n);
    tanh(o);
    load_state(h, state_addr(reg_h_prev, v), tail);
    vsubps(h, h, o);
    vfmadd213ps(h, u, o);
    store_state(state_addr(reg_h_new, v), h, tail);
}

template <isa level>
void jit_rnn_cell_fwd_kernel_t<level>::vector(int v, bool tail) {
    switch (c_.cell) {
    case rnn_cell::vanilla_rnn: vanilla(v, tail); break;
    case rnn_cell::lstm: lstm(v, tail); break;
    case rnn_cell::lbr_gru: lbr_gru(v, tail); break;
    case rnn_cell::gru:
        if (c_.part == rnn_cell_part_t::gru_part1) gru_part1(v, tail);
        else gru_part2(v, tail);
        break;
    }
}

template <isa level>
void jit_rnn_cell_fwd_kernel_t<level>::generate() {
    preamble();
    mov(reg_gates, ptr[reg_param + offsetof(rnn_cell_call_args_t, gates)]);
    mov(reg_gates_h, ptr[reg_param + offsetof(rnn_cell_call_args_t, gates_h)]);
    mov(reg_bias, ptr[reg_param + offsetof(rnn_cell_call_args_t, bias)]);
    mov(reg_h_prev, ptr[reg_param + offsetof(rnn_cell_call_args_t, h_prev)]);
    mov(reg_h_new, ptr[reg_param + offsetof(rnn_cell_call_args_t, h_new)]);
    mov(reg_c, ptr[reg_param + offsetof(rnn_cell_call_args_t, c)]);
    mov(reg_rh, ptr[reg_param + offsetof(rnn_cell_call_args_t, rh)]);
    mov(reg_rows, ptr[reg_param + offsetof(rnn_cell_call_args_t, rows)]);
    if (c_.n_tail) {
        if constexpr (is_avx512) {
            mov(reg_tmp32, (1u << c_.n_tail) - 1);
            kmovw(k_tail, reg_tmp32);
        } else {
            vmovups(vmm_mask(), ptr[rip + l_mask_]);
        }
    }
    Label l_row, l_done;
    test(reg_rows, reg_rows);
    jle(l_done, T_NEAR);
    L(l_row);
    for (int v = 0; v < c_.nv; ++v) vector(v, c_.n_tail && v == c_.nv - 1);
    add(reg_gates, c_.LDG * 4);
    if (c_.cell == rnn_cell::lbr_gru) add(reg_gates_h, c_.LDGH * 4);
    add(reg_h_prev, c_.LDH * 4);
    add(reg_h_new, c_.LDH * 4);
    if (c_.cell == rnn_cell::lstm || c_.part == rnn_cell_part_t::gru_part1) {
        add(reg_c, c_.LDS * 4);
        add(reg_rh, c_.LDS * 4);
    }
    dec(reg_rows);
    jnz(l_row, T_NEAR);
    L(l_done);
    postamble();

    align(64);
    L(l_mask_);
    for (int i = 0; i < simd_w; ++i) dd(i < c_.n_tail ? 0xffffffffu : 0u);
    act_.emit_table(c_.alpha);
}

rnn_cell_kernel_t::rnn_cell_kernel_t(const rnn_cell_conf_t &c, std::unique_ptr<jit_kernel_base_t> gen)
    : c_(c), gen_(std::move(gen)), ker_(gen_->entry<ker_t>()) {}

status rnn_cell_kernel_t::create(std::unique_ptr<rnn_cell_kernel_t> &out, const rnn_cell_conf_t &c,
        std::string &why) {
    std::unique_ptr<jit_kernel_base_t> gen;
    if (c.level == isa::avx512_core) gen = std::make_unique<jit_rnn_cell_fwd_kernel_t<isa::avx512_core>>(c);
    else gen = std::make_unique<jit_rnn_cell_fwd_kernel_t<isa::avx2>>(c);
    const status st = gen->create(why);
    if (st != status::success) return st;
    out.reset(new rnn_cell_kernel_t(c, std::move(gen)));
    return status::success;
}

template class jit_rnn_cell_fwd_kernel_t<isa::avx512_core>;
template class jit_rnn_cell_fwd_kernel_t<isa::avx2>;

} // namespace blockdnn::impl
