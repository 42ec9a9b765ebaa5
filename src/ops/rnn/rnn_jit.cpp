// SPDX-License-Identifier: Apache-2.0
// The JIT RNN forward driver: kernels at creation, then layers, directions and steps (the loop
// nest and the threading are described in rnn_jit.hpp).
#include <algorithm>
#include <cstring>

#include <thread>

#include <immintrin.h>

#include "sched/parallel.hpp"
#include "core/utils.hpp"
#include "ops/rnn/rnn_jit.hpp"

namespace blockdnn::impl {

// Pause-loop iterations a thread waits for the previous phase before yielding its core: longer
// than a typical step, far shorter than a time slice (docs/tuning.md, "RNN spin before yield").
constexpr int spin_before_yield = 2000;

// Everything one layer-direction pass needs, resolved once per pass.
struct rnn_fwd_jit_t::pass_t {
    const float *h_init; // h_{-1}: [mb][dhc]
    float *out;          // h_t of every step: [t][mb][dhc]
    float *gates;        // [t][mb][Np]
    float *gates_h;      // lbr_gru: [mb][Np]
    float *c, *rh;       // [mb][dhc]
    const float *wi, *bias;
    bool reverse;
};

// Runs every init_conf, each followed by its kernel, then allocates the scratch.
status rnn_fwd_jit_t::create(std::unique_ptr<rnn_fwd_jit_t> &out, const rnn_prb_t &prb, isa level, std::string &why,
        const rnn_fwd_jit_threads_t &thr) {
    std::unique_ptr<rnn_fwd_jit_t> r(new rnn_fwd_jit_t());
    r->p_ = prb;
    const rnn_desc &p = prb.desc;
    r->src_ntc_ = p.src_layer_tag == format_tag::ntc;
    r->dst_ntc_ = p.dst_layer_tag == format_tag::ntc;
    r->wl_ldgoi_ = p.weights_layer_tag == format_tag::ldgoi;
    r->wi_ldgoi_ = p.weights_iter_tag == format_tag::ldgoi;
    rnn_fwd_jit_threads_t t = thr;
    if (t.nthr <= 0) t.nthr = parallel_max_threads();
    r->nthr_ = t.nthr;
    rnn_fwd_jit_conf_t &c = r->c_;
    status st = init_conf_rnn_fwd_jit(c, prb, level, t, why);
    if (st != status::success) return st;

    // The input projection of all steps; the same plan serves every layer (slc = dhc past the
    // first). Its panels are the driver's best (W is packed for them), not the steps' pw.
    st = gemm_jit_t::create(r->gemm_, level, p.t * p.mb, c.Np, p.slc, p.slc, c.Np, 0.f, why, {}, true, {}, t.nthr);
    if (st != status::success) return st;

    for (int part = 0; part < c.n_parts; ++part) {
        st = brgemm_kernel_t::create(r->iter_ker_[part], c.step_brgemm[part], why);
        if (st != status::success) return st;
    }

    const bool gru = p.cell == rnn_cell::gru;
    const int last_valid = static_cast<int>(p.dhc - (c.n_panels - 1) * c.hb);
    for (int part = 0; part < c.n_parts; ++part)
        for (int last = 0; last < 2; ++last) {
            if (last && last_valid == c.hb) continue;                     // the last panel is full: same kernel
            if (!last && c.n_panels == 1 && last_valid != c.hb) continue; // no full panel
            const rnn_cell_part_t kind = !gru ? rnn_cell_part_t::full
                    : part == 0               ? rnn_cell_part_t::gru_part1
                                              : rnn_cell_part_t::gru_part2;
            rnn_cell_conf_t cc;
            st = init_conf_rnn_cell(cc, level, p.cell, kind, p.activation, p.alpha, c.hb, last ? last_valid : c.hb,
                    c.Np, c.Np, p.dhc, p.dhc, why);
            if (st != status::success) return st;
            st = rnn_cell_kernel_t::create(r->cell_ker_[part][last], cc, why);
            if (st != status::success) return st;
        }
    r->alloc_scratch(r->scratch_);
    out = std::move(r);
    return status::success;
}

const rnn_cell_kernel_t &rnn_fwd_jit_t::cell_kernel(int part, bool last_panel) const {
    // Only one of the two exists when every panel is full, or when the only panel is partial.
    const auto &k = cell_ker_[part];
    return last_panel ? (k[1] ? *k[1] : *k[0]) : (k[0] ? *k[0] : *k[1]);
}

void rnn_fwd_jit_t::alloc_scratch(scratch_t &s) const {
    const rnn_desc &d = p_.desc;
    const std::int64_t T = d.t, MB = d.mb, H = d.dhc;
    s.gates.assign(T * MB * c_.Np, 0.f);
    if (d.cell == rnn_cell::lbr_gru) s.gates_h.assign(MB * c_.Np, 0.f);
    // Layer outputs: two per direction (ping-pong between layers); none for a single-layer,
    // single-direction tnc problem, which writes dst_layer directly.
    const bool direct = !dst_ntc_ && p_.n_dirs == 1;
    const std::int64_t n_states = direct && d.l == 1 ? 0 : 2 * p_.n_dirs;
    for (std::int64_t i = 0; i < n_states; ++i) s.states[i].assign(T * MB * H, 0.f);
    if (src_ntc_) s.src_tnc.assign(T * MB * d.slc, 0.f);
    s.c.assign(MB * H, 0.f);
    if (d.cell == rnn_cell::gru) s.rh.assign(MB * H, 0.f);
    s.zeros.assign(MB * H, 0.f);
}

void rnn_fwd_jit_t::run_unit(const pass_t &ps, std::int64_t step, int part, std::int64_t panel) const {
    const rnn_desc &d = p_.desc;
    const std::int64_t T = d.t, MB = d.mb, H = d.dhc;
    const std::int64_t t = ps.reverse ? T - 1 - step : step;
    const std::int64_t t_prev = ps.reverse ? t + 1 : t - 1;
    const float *h_prev = step == 0 ? ps.h_init : ps.out + t_prev * MB * H;
    float *gates_t = ps.gates + t * MB * c_.Np;
    const std::int64_t col = panel * c_.pw, h0 = panel * c_.hb;
    const float *wi = ps.wi + panel * H * c_.pw;
    // Part 0: all gates (GRU: u and r) into gates_t (lbr_gru: gates_h, as r multiplies U_o h
    // alone); part 1, GRU's candidate: U_o (r * h_{t-1}), the panel's third gate block.
    const std::int64_t first = c_.part_col(part), cw = c_.call_n[part];
    const float *h = part == 0 ? h_prev : ps.rh;
    float *dst = (d.cell == rnn_cell::lbr_gru ? ps.gates_h : gates_t) + col;
    for (std::int64_t j = first; j < first + c_.part_n[part]; j += cw) (*iter_ker_[part])(h, wi + j * H, dst + j);
    rnn_cell_call_args_t a;
    a.gates = gates_t + col;
    a.gates_h = ps.gates_h ? ps.gates_h + col : nullptr;
    a.bias = ps.bias + panel * p_.n_bias_gates * c_.hb;
    a.h_prev = h_prev + h0;
    a.h_new = ps.out + t * MB * H + h0;
    a.c = ps.c + h0;
    a.rh = ps.rh ? ps.rh + h0 : nullptr;
    a.rows = MB;
    cell_kernel(part, panel == c_.n_panels - 1)(a);
}

void rnn_fwd_jit_t::run_steps(const pass_t &ps) const {
    const std::int64_t T = p_.desc.t, np = c_.n_panels;
    const int parts = c_.n_parts;
    // The plan's threads, or fewer on a stream with a smaller thread budget than at creation.
    const int nthr = std::min(c_.max_threads, parallel_max_threads());
    if (nthr <= 1) {
        for (std::int64_t s = 0; s < T; ++s)
            for (int part = 0; part < parts; ++part)
                for (std::int64_t pan = 0; pan < np; ++pan) run_unit(ps, s, part, pan);
        return;
    }
    // Units in (step, part, panel) order. A thread takes the next unit and waits until every
    // unit of the previous (step, part) phase is done: those were all taken before it, by
    // threads that are running them, so the wait always ends whoever runs what.
    struct alignas(64) counter_t {
        std::atomic<std::int64_t> v {0};
    };
    counter_t next, done;
    const std::int64_t total = T * parts * np;
    auto worker = [&] {
        for (;;) {
            const std::int64_t u = next.v.fetch_add(1, std::memory_order_relaxed);
            if (u >= total) return;
            const std::int64_t phase = u / np;
            // Acquire: the previous phase's h_t (and r h) written by other threads is visible.
            // Spin briefly (a step is microseconds), then yield: on a busy machine the thread
            // being waited for may have lost its core.
            for (int spins = 0; done.v.load(std::memory_order_acquire) < phase * np; ++spins) {
                if (spins < spin_before_yield) _mm_pause();
                else std::this_thread::yield();
            }
            run_unit(ps, phase / parts, static_cast<int>(phase % parts), u % np);
            // Release: this unit's outputs are visible to whoever sees the count.
            done.v.fetch_add(1, std::memory_order_release);
        }
    };
    parallel_for(nthr, 1, [&](std::int64_t b, std::int64_t e) {
        for (std::int64_t i = b; i < e; ++i) worker();
    });
}

void rnn_fwd_jit_t::run_layer(const rnn_args_t &mem, const packed_t &pk, scratch_t &s, std::int64_t lay,
        std::int64_t dir, const float *src, float *out) const {
    const rnn_desc &d = p_.desc;
    const std::int64_t T = d.t, MB = d.mb, H = d.dhc, D = p_.n_dirs;
    const std::int64_t ld = lay * D + dir;
    gemm_->execute(src, pk.wl[ld].data(), s.gates.data(), nthr_);
    if (d.cell == rnn_cell::lstm) {
        if (mem.src_iter_c) std::memcpy(s.c.data(), mem.src_iter_c + ld * MB * H, MB * H * sizeof(float));
        else std::fill(s.c.begin(), s.c.end(), 0.f);
    }
    pass_t ps;
    ps.h_init = mem.src_iter ? mem.src_iter + ld * MB * H : s.zeros.data();
    ps.out = out;
    ps.gates = s.gates.data();
    ps.gates_h = s.gates_h.empty() ? nullptr : s.gates_h.data();
    ps.c = s.c.data();
    ps.rh = s.rh.empty() ? nullptr : s.rh.data();
    ps.wi = pk.wi[ld].data();
    ps.bias = pk.bias[ld].data();
    ps.reverse = d.direction == rnn_direction::r2l || dir == 1;
    run_steps(ps);
    const std::int64_t t_last = ps.reverse ? 0 : T - 1;
    if (mem.dst_iter) std::memcpy(mem.dst_iter + ld * MB * H, out + t_last * MB * H, MB * H * sizeof(float));
    if (mem.dst_iter_c && d.cell == rnn_cell::lstm)
        std::memcpy(mem.dst_iter_c + ld * MB * H, s.c.data(), MB * H * sizeof(float));
}

void rnn_fwd_jit_t::copy_out(const rnn_args_t &mem, const float *const outs[2]) const {
    const rnn_desc &d = p_.desc;
    const std::int64_t T = d.t, MB = d.mb, H = d.dhc, dlc = p_.dlc;
    const bool sum = d.direction == rnn_direction::bi_sum;
    for (std::int64_t t = 0; t < T; ++t)
        for (std::int64_t n = 0; n < MB; ++n) {
            float *dst = mem.dst_layer + (dst_ntc_ ? n * T + t : t * MB + n) * dlc;
            const float *a = outs[0] + (t * MB + n) * H;
            if (sum) {
                const float *b = outs[1] + (t * MB + n) * H;
                for (std::int64_t o = 0; o < H; ++o) dst[o] = a[o] + b[o];
                continue;
            }
            std::memcpy(dst, a, H * sizeof(float));
            if (p_.n_dirs == 2) std::memcpy(dst + H, outs[1] + (t * MB + n) * H, H * sizeof(float));
        }
}

void rnn_fwd_jit_t::execute(const rnn_args_t &mem) const {
    // The object's scratch serves one execute at a time; a concurrent one gets its own.
    std::unique_lock<std::mutex> lock(scratch_mutex_, std::try_to_lock);
    scratch_t local;
    if (!lock.owns_lock()) alloc_scratch(local);
    scratch_t &s = lock.owns_lock() ? scratch_ : local;
    // Weights given now are packed for this call; otherwise those of take_weights().
    const packed_t *pk = &packed_;
    if (mem.wei_layer) {
        pack(s.weights, mem.wei_layer, mem.wei_iter, mem.bias);
        pk = &s.weights;
    }

    const rnn_desc &d = p_.desc;
    const std::int64_t T = d.t, MB = d.mb, D = p_.n_dirs, L = d.l;
    const float *src0 = mem.src_layer;
    if (src_ntc_) {
        for (std::int64_t t = 0; t < T; ++t)
            for (std::int64_t n = 0; n < MB; ++n)
                std::memcpy(s.src_tnc.data() + (t * MB + n) * d.slc, mem.src_layer + (n * T + t) * d.slc,
                        d.slc * sizeof(float));
        src0 = s.src_tnc.data();
    }
    const bool direct = !dst_ntc_ && D == 1;
    const float *outs[2] = {nullptr, nullptr};
    for (std::int64_t dir = 0; dir < D; ++dir) {
        const float *in = src0;
        for (std::int64_t lay = 0; lay < L; ++lay) {
            float *out = lay == L - 1 && direct ? mem.dst_layer : s.states[2 * dir + lay % 2].data();
            run_layer(mem, *pk, s, lay, dir, in, out);
            in = out;
        }
        outs[dir] = in;
    }
    if (!direct) copy_out(mem, outs);
}

std::string rnn_fwd_jit_t::str() const {
    std::string s = cat(to_string(p_), "\n", to_string(c_), "\nlayer gemm: ", gemm_->str());
    for (int part = 0; part < c_.n_parts; ++part)
        s += cat("\nstep brgemm ", part, ": ", to_string(iter_ker_[part]->conf()));
    for (int part = 0; part < c_.n_parts; ++part)
        for (int last = 0; last < 2; ++last)
            if (cell_ker_[part][last])
                s += cat("\ncell ", part, last ? " (last panel)" : "", ": ", to_string(cell_ker_[part][last]->conf()));
    return s;
}

template <isa level>
status create_rnn_fwd_jit(const rnn_prb_t &p, std::unique_ptr<rnn_impl_t> &out, std::string &why) {
    std::unique_ptr<rnn_fwd_jit_t> r;
    const status st = rnn_fwd_jit_t::create(r, p, level, why);
    if (st == status::success) out = std::move(r);
    return st;
}

template status create_rnn_fwd_jit<isa::avx512_core>(const rnn_prb_t &, std::unique_ptr<rnn_impl_t> &, std::string &);
template status create_rnn_fwd_jit<isa::avx2>(const rnn_prb_t &, std::unique_ptr<rnn_impl_t> &, std::string &);

} // namespace blockdnn::impl
