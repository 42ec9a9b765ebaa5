// SPDX-License-Identifier: Apache-2.0
// Code generation of the fused RNN forward cell, and its init_conf.
#include "ops/rnn/jit_rnn_cell_fwd_kernel.hpp"

#include "core/utils.hpp"
#include "jit/jit_eltwise_injector.hpp"

namespace blockdnn::impl {

using namespace Xbyak;

status init_conf_rnn_cell(rnn_cell_conf_t &c, isa level, rnn_cell cell, rnn_cell_part_t part, eltwise_alg activation,
        float alpha, int hb, int n_valid, std::int64_t LDG, std::int64_t LDGH, std::int64_t LDH, std::int64_t LDS,
        std::string &why) {
    if (level != isa::avx512_core && level != isa::avx2) {
        why = cat("rnn cell: no JIT kernel for isa ", to_string(level));
        return status::unimplemented;
    }
    if (cell == rnn_cell::vanilla_rnn && activation != eltwise_alg::tanh && activation != eltwise_alg::relu
            && activation != eltwise_alg::sigmoid) {
        why = cat("rnn cell: vanilla activation ", to_string(activation), " has no JIT piece");
        return status::unimplemented;
    }
    const int simd_w = simd_w_of(level);
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
    const char *part = c.part == rnn_cell_part_t::gru_part1 ? ":part1"
            : c.part == rnn_cell_part_t::gru_part2          ? ":part2"
                                                            : "";
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
void jit_rnn_cell_fwd_kernel_t<level>::act(eltwise_alg alg, float alpha, const std::vector<int> &vals, int tmp_first) {
    const int n_tmp = static_cast<int>(vals.size()) * jit_eltwise_injector_t<level>::n_vtemps(alg);
    jit_eltwise_injector_t<level>(*this, alg, alpha, 0.f, tmp_first, n_tmp, k_act).compute(vals);
}

// Registers of each cell: values first, injector temporaries after them, each commented.
template <isa level>
void jit_rnn_cell_fwd_kernel_t<level>::vanilla(int v, bool tail) {
    load_gate(vg(0), 0, v);
    act(c_.activation, c_.alpha, {0}, 1); // temps 1..3
    store_state(state_addr(reg_h_new, v), vg(0), tail);
}

template <isa level>
void jit_rnn_cell_fwd_kernel_t<level>::lstm(int v, bool tail) {
    const Vmm gi = vg(0), gf = vg(1), gc = vg(2), go = vg(3), cs = vg(4), th = vg(5);
    load_gate(gi, 0, v);
    load_gate(gf, 1, v);
    load_gate(gc, 2, v);
    load_gate(go, 3, v);
    act(eltwise_alg::sigmoid, 0.f, {0, 1, 3}, 4); // i, f, o together: temps 4..9
    act(eltwise_alg::tanh, 0.f, {2}, 4);          // c~: temps 4..6
    load_state(cs, state_addr(reg_c, v), tail);
    vmulps(gc, gc, gi);
    vfmadd231ps(gc, gf, cs); // c_t = f c_{t-1} + i c~
    store_state(state_addr(reg_c, v), gc, tail);
    vmovaps(th, gc);
    act(eltwise_alg::tanh, 0.f, {5}, 6); // temps 6..8
    vmulps(th, th, go);
    store_state(state_addr(reg_h_new, v), th, tail);
}

template <isa level>
void jit_rnn_cell_fwd_kernel_t<level>::gru_part1(int v, bool tail) {
    const Vmm u = vg(0), r = vg(1), h = vg(2);
    load_gate(u, 0, v);
    load_gate(r, 1, v);
    act(eltwise_alg::sigmoid, 0.f, {0, 1}, 3); // temps 3..6
    vmovups(gate_addr(reg_gates, 0, v), u);    // u for part 2 (padding lanes included: harmless)
    load_state(h, state_addr(reg_h_prev, v), tail);
    vmulps(r, r, h);
    store_state(state_addr(reg_rh, v), r, tail);
}

template <isa level>
void jit_rnn_cell_fwd_kernel_t<level>::gru_part2(int v, bool tail) {
    const Vmm o = vg(0), u = vg(1), h = vg(2);
    load_gate(o, 2, v);
    act(eltwise_alg::tanh, 0.f, {0}, 3); // temps 3..5
    vmovups(u, gate_addr(reg_gates, 0, v));
    load_state(h, state_addr(reg_h_prev, v), tail);
    vsubps(h, h, o);
    vfmadd213ps(h, u, o); // o + u (h_prev - o)
    store_state(state_addr(reg_h_new, v), h, tail);
}

template <isa level>
void jit_rnn_cell_fwd_kernel_t<level>::lbr_gru(int v, bool tail) {
    const Vmm u = vg(0), r = vg(1), n = vg(2), o = vg(3), h = vg(4);
    load_gate(u, 0, v, true);
    load_gate(r, 1, v, true);
    act(eltwise_alg::sigmoid, 0.f, {0, 1}, 5); // temps 5..8
    vmovups(n, gate_addr(reg_gates_h, 2, v));
    vaddps(n, n, gate_addr(reg_bias, 3, v)); // U_o h + B_u'
    load_gate(o, 2, v);                      // W_o x + B_o
    vfmadd231ps(o, r, n);
    act(eltwise_alg::tanh, 0.f, {3}, 5); // temps 5..7
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
    preamble({reg_gates, reg_gates_h, reg_bias, reg_h_prev, reg_h_new, reg_c, reg_rh, reg_rows});
    mov(reg_gates, ptr[reg_param + offsetof(rnn_cell_call_args_t, gates)]);
    mov(reg_gates_h, ptr[reg_param + offsetof(rnn_cell_call_args_t, gates_h)]);
    mov(reg_bias, ptr[reg_param + offsetof(rnn_cell_call_args_t, bias)]);
    mov(reg_h_prev, ptr[reg_param + offsetof(rnn_cell_call_args_t, h_prev)]);
    mov(reg_h_new, ptr[reg_param + offsetof(rnn_cell_call_args_t, h_new)]);
    mov(reg_c, ptr[reg_param + offsetof(rnn_cell_call_args_t, c)]);
    mov(reg_rh, ptr[reg_param + offsetof(rnn_cell_call_args_t, rh)]);
    mov(reg_rows, ptr[reg_param + offsetof(rnn_cell_call_args_t, rows)]);
    if (c_.n_tail) emit_tail_mask(*this, is_avx512, c_.n_tail, k_tail, vmm_mask(), reg_tmp32);
    Xbyak::Label l_row, l_done;
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
}

template <isa level>
std::string jit_rnn_cell_fwd_kernel_t<level>::conf_str() const {
    const char *v = is_avx512 ? "zmm" : "ymm";
    std::string s = cat("conf: ", to_string(c_), "\n");
    s += cat("loop: rows > ", c_.nv, " vectors of the panel's ", c_.n_valid, " hidden units (all gates of each)\n");
    s += "registers: rdi=call_args_t* rsi=gates rdx=gates_h rcx=bias r8=h_prev r9=h_new r10=c r11=rh rax=rows left\n";
    s += cat("vector registers: ", v, "0-", v, "5 gate values and states, the injector's temporaries after them");
    if (is_avx512) s += c_.n_tail ? ", k1 tail mask, k7 injector mask\n" : ", k7 injector mask\n";
    else s += c_.n_tail ? cat(", ", v, n_vregs - 1, " tail mask\n") : "\n";
    return s;
}

status rnn_cell_kernel_t::create(std::unique_ptr<rnn_cell_kernel_t> &out, const rnn_cell_conf_t &c, std::string &why) {
    const auto &[level, cell, part, activation, alpha, simd_w, hb, n_valid, nv, n_tail, LDG, LDGH, LDH, LDS] = c;
    std::string key = "rnn_cell_fwd|";
    append_raw(key, level, cell, part, activation, alpha, simd_w, hb, n_valid, nv, n_tail, LDG, LDGH, LDH, LDS);
    return create_cached<jit_rnn_cell_fwd_kernel_t>(out, c, key, why);
}

template class jit_rnn_cell_fwd_kernel_t<isa::avx512_core>;
template class jit_rnn_cell_fwd_kernel_t<isa::avx2>;

} // namespace blockdnn::impl
