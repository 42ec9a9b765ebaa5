// SPDX-License-Identifier: Apache-2.0
// The packed-B GEMM driver: B packing, cache blocking, kernels per edge case, threading.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/machine_model.hpp"
#include "core/utils.hpp"
#include "sched/parallel.hpp"
#include "jit/gemm/gemm_jit.hpp"
#include "jit/isa_traits.hpp"

namespace blockdnn::impl {

namespace {

// B panel slice per microkernel call (kc x nb floats): up to this fraction of L2. The whole
// K from L2 beats K chunks sized for L1, which re-read and re-write C once per chunk
// (docs/tuning.md, "GEMM K blocking").
constexpr std::int64_t l2_b_share = 4;
// Rows of A per tile (mc x kc floats): another such fraction of L2, reused across the panels.
constexpr std::int64_t l2_a_share = 4;
// Tiles per thread when the rows alone do not give enough tiles: balance over uneven ones.
constexpr std::int64_t tiles_per_thread = 2;

// A register block's B rows (kc of them) stay in L1 for the next block of rows while they take
// at most this fraction of it; A's rows and C take the rest.
constexpr std::int64_t l1_b_share = 2;
// B streamed from L2 gets at most this fraction (num / den) of the L2 bandwidth the machine
// model gives: the stream shares it with A's rows, C and the prefetchers' misses, and FMAs
// waiting on it at its full rate stall at every late line (docs/tuning.md, "GEMM panel width").
constexpr std::int64_t l2_b_stream_num = 2, l2_b_stream_den = 3;
// Rows of a problem tall enough that its register block is the register-limited one.
constexpr std::int64_t tall = 4096;

// The panel width the kernel was tuned with: 4 zmm (6 rows x 4 = 24 accumulators) or 2 ymm
// (6 x 2 = 12).
int widest_panel_vectors(isa level) { return level == isa::avx512_core ? 4 : 2; }

// K per call: all of it while the panel slice fits its share of L2, else even chunks that do.
// `nb` is the caller's panel width or else the widest, whatever pick_nb then takes: the chunks
// set the order of each sum, which must not depend on the machine.
std::int64_t pick_kc(std::int64_t K, std::int64_t nb, std::int64_t l2_b_bytes) {
    const std::int64_t kc_max = std::max<std::int64_t>(1, l2_b_bytes / (nb * 4));
    return K <= kc_max ? std::max<std::int64_t>(K, 1) : div_up(K, div_up(K, kc_max));
}

// Cycles of one K step over N columns in panels of nb on nthr threads, as the kernel's cost
// model prices each panel's call: on one thread the sum over the panels (the last narrower when
// nb does not divide N), on more the busiest thread's share of them, each priced as the
// dearer of the two kinds (N narrower than nb: one panel of N). 0 if the kernel refuses a call.
double panels_step_cycles(isa level, std::int64_t M, std::int64_t N, std::int64_t nb, std::int64_t kc, int nthr) {
    auto call = [&](std::int64_t n) {
        brgemm_conf_t c;
        std::string ignored;
        if (init_conf_brgemm(c, level, M, n, kc, kc, nb, n, 1.f, 0.f, ignored) != status::success) return -1.0;
        return brgemm_step_cycles(c);
    };
    const double full = N >= nb ? call(nb) : 0.0, tail = N % nb ? call(N % nb) : 0.0;
    if (full < 0 || tail < 0) return 0;
    if (nthr <= 1) return static_cast<double>(N / nb) * full + tail;
    return static_cast<double>(div_up(div_up(N, nb), nthr)) * std::max(full, tail);
}

// Panels this much slower by the model than the cheapest still count as cheapest: the narrower
// one leaves more panels to share between threads.
constexpr double few_rows_cost_slack = 0.05;

// Panel width for few rows whose B does not fit the threads' L2. Each B vector then comes from
// farther away, at most about one a cycle into a core, so the block's FMAs can run at most
// min(M, pipes) a cycle; its M x ld chains of dependent FMAs keep that rate only if there are
// latency x that many of them (one row of 2 ymm has 2). Wider blocks add accumulators the
// stream cannot feed, so the width stops there: the fewest vectors that hold the chains, as
// far as the registers and N's vectors allow, and never narrower than the widest
// (docs/tuning.md, "GEMM: few rows past L2 hold the FMA latency").
std::int64_t pick_nb_past_l2(isa level, std::int64_t M, std::int64_t N) {
    const fma_unit_t &f = machine_model().fma(level);
    const int simd_w = simd_w_of(level), widest = widest_panel_vectors(level);
    // A split unit starts one 512-bit FMA per two pipes.
    const std::int64_t pipes = f.full_width ? f.pipes : std::max(1, f.pipes / 2);
    const std::int64_t chains = static_cast<std::int64_t>(f.latency) * std::min<std::int64_t>(M, pipes);
    // Registers beside the broadcast: one row reads B in its FMAs, more rows hold ld B vectors.
    const std::int64_t regs = n_vregs_of(level) - 1;
    const std::int64_t ld_fit = M == 1 ? regs : regs / (M + 1);
    const std::int64_t ld = std::min({div_up(chains, M), ld_fit, div_up(N, simd_w)});
    return std::max<std::int64_t>(widest, ld) * simd_w;
}

// Panel width for rows that fit one register block at the widest width: they read B once at
// any width, so the width only sets how many accumulators the block holds. When the widest
// holds too few for the FMA latency (1 row x 2 ymm is 2 chains of dependent FMAs, each waiting
// the latency every step), widths from the widest up to one accumulator per register are
// priced by the kernel's cost model over all of N on the threads it is planned for; the
// narrowest near the cheapest wins. The widest stays where its block keeps the FMA pipes busy
// by the model. B past the threads' L2 takes pick_nb_past_l2.
std::int64_t pick_nb_few_rows(isa level, std::int64_t M, std::int64_t N, std::int64_t K, std::int64_t kc, int nthr) {
    const int widest = widest_panel_vectors(level), simd_w = simd_w_of(level);
    const std::int64_t widest_nb = static_cast<std::int64_t>(widest) * simd_w;
    if (K * N * 4 > machine_model().blocking_l2_bytes * nthr) return pick_nb_past_l2(level, M, N);
    brgemm_conf_t rows;
    std::string ignored;
    if (init_conf_brgemm(rows, level, M, widest_nb, kc, kc, widest_nb, widest_nb, 1.f, 0.f, ignored) != status::success)
        return widest_nb;
    const double fma_bound = static_cast<double>(M * widest) / machine_model().fma(level).pipes;
    if (brgemm_step_cycles(rows) <= fma_bound * (1 + few_rows_cost_slack)) return widest_nb;
    const int ld_max = std::max<int>(widest, std::min<std::int64_t>(div_up(N, simd_w), n_vregs_of(level) - 1));
    std::vector<double> cycles(ld_max + 1, 0.0);
    double cheapest = 0;
    for (int ld = widest; ld <= ld_max; ++ld) {
        cycles[ld] = panels_step_cycles(level, M, N, static_cast<std::int64_t>(ld) * simd_w, kc, nthr);
        if (cycles[ld] > 0 && (cheapest == 0 || cycles[ld] < cheapest)) cheapest = cycles[ld];
    }
    for (int ld = widest; ld <= ld_max; ++ld)
        if (cycles[ld] > 0 && cycles[ld] <= cheapest * (1 + few_rows_cost_slack))
            return static_cast<std::int64_t>(ld) * simd_w;
    return widest_nb;
}

// Panel width: the widest, narrowed while every block of rows reads its kc B rows again from
// L2 (they overflow L1's share) faster than the model's L2 delivers them beside the block's
// FMAs; a tie keeps the wider. A narrower block holds more rows and so reads B once per more
// FMAs. M rows that fit one block read B once at any width, so M stops the narrowing there;
// rows that fit the widest block take pick_nb_few_rows. The width does not change the order of
// any sum, so it may follow the CPU's own L1d.
std::int64_t pick_nb(isa level, std::int64_t M, std::int64_t N, std::int64_t K, std::int64_t kc, int nthr) {
    const machine_model_t &m = machine_model();
    const fma_unit_t &f = m.fma(level);
    int ld = widest_panel_vectors(level);
    for (; ld > 1; --ld) {
        const std::int64_t nb = static_cast<std::int64_t>(ld) * simd_w_of(level);
        brgemm_conf_t blk;
        std::string ignored;
        if (init_conf_brgemm(blk, level, tall, nb, kc, kc, nb, nb, 1.f, 0.f, ignored) != status::success) break;
        if (M <= blk.bd_block) {
            if (ld == widest_panel_vectors(level)) return pick_nb_few_rows(level, M, N, K, kc, nthr);
            break;
        }
        const std::int64_t b_bytes = static_cast<std::int64_t>(blk.ld_block) * f.vlen_bytes;
        if (kc * b_bytes <= m.l1d_bytes / l1_b_share) break;
        // B's cycles from L2, b_bytes / (num / den x l2_bytes_per_cycle), against the FMAs'
        // cycles, fmas / pipes (twice that for a split unit), in integers so that a tie is one.
        const std::int64_t fmas = static_cast<std::int64_t>(blk.bd_block) * blk.ld_block;
        if (b_bytes * l2_b_stream_den * f.pipes
                <= l2_b_stream_num * m.l2_bytes_per_cycle * fmas * (f.full_width ? 1 : 2))
            break;
    }
    return static_cast<std::int64_t>(ld) * simd_w_of(level);
}

} // namespace

void gemm_pack_b(const gemm_packed_b_t &p, const float *B, std::int64_t ldb, float *dst) {
    for (std::int64_t pan = 0; pan < p.n_panels(); ++pan) {
        const std::int64_t n0 = pan * p.nb, nn = std::min(p.nb, p.N - n0);
        for (std::int64_t k = 0; k < p.K; ++k) {
            float *d = dst + (pan * p.K + k) * p.nb;
            std::memcpy(d, B + k * ldb + n0, nn * sizeof(float));
            std::fill(d + nn, d + p.nb, 0.f);
        }
    }
}

void gemm_pack_b_transposed(const gemm_packed_b_t &p, const float *BT, std::int64_t ldbt, float *dst,
        std::int64_t pan_begin, std::int64_t pan_end) {
    // In slices of k_tile rows of the panel: the slice's lines stay in L1 while every column
    // fills its part of them from a short contiguous run of its BT row.
    constexpr std::int64_t k_tile = 16;
    for (std::int64_t pan = pan_begin; pan < pan_end; ++pan) {
        float *panel = dst + pan * p.K * p.nb;
        for (std::int64_t k0 = 0; k0 < p.K; k0 += k_tile) {
            const std::int64_t k1 = std::min(p.K, k0 + k_tile);
            for (std::int64_t j = 0; j < p.nb; ++j) {
                const std::int64_t n = pan * p.nb + j;
                const float *row = n < p.N ? BT + n * ldbt : nullptr;
                for (std::int64_t k = k0; k < k1; ++k) panel[k * p.nb + j] = row ? row[k] : 0.f;
            }
        }
    }
}

aligned_vector<float> gemm_jit_t::pack_b_transposed(const float *BT, std::int64_t ldbt) const {
    aligned_vector<float> packed(static_cast<std::size_t>(pb_.size()));
    parallel_for(pb_.n_panels(), 1,
            [&](dim_t p0, dim_t p1) { gemm_pack_b_transposed(pb_, BT, ldbt, packed.data(), p0, p1); });
    return packed;
}

status gemm_jit_t::create(std::unique_ptr<gemm_jit_t> &out, isa level, std::int64_t M, std::int64_t N, std::int64_t K,
        std::int64_t LDA, std::int64_t LDC, float beta, std::string &why, const gemm_blocking_t &blocking, bool jit,
        const gemm_epilogue_t &epilogue, int nthr) {
    std::unique_ptr<gemm_jit_t> g(new gemm_jit_t());
    g->M_ = M, g->N_ = N, g->K_ = K, g->LDA_ = LDA, g->LDC_ = LDC, g->beta_ = beta, g->epi_ = epilogue;
    gemm_blocking_t &b = g->blk_;
    const std::int64_t l2_bytes = machine_model().blocking_l2_bytes;
    const std::int64_t widest_nb = static_cast<std::int64_t>(widest_panel_vectors(level)) * simd_w_of(level);
    // Before the blocking, whose rules divide by M, N and the panel width.
    if (M < 1 || N < 1 || K < 0) {
        why = cat("gemm: M=", M, " N=", N, " K=", K, " not supported (M and N at least 1, K at least 0)");
        return status::unimplemented;
    }
    if (blocking.nb && (blocking.nb < simd_w_of(level) || blocking.nb % simd_w_of(level) != 0)) {
        why = cat("gemm: nb=", blocking.nb, ", expected a positive multiple of ", simd_w_of(level),
                " floats (the vector width)");
        return status::unimplemented;
    }
    b.kc = blocking.kc ? std::max<std::int64_t>(1, std::min(blocking.kc, K))
                       : pick_kc(K, blocking.nb ? blocking.nb : widest_nb, l2_bytes / l2_b_share);
    const int plan_threads = nthr > 0 ? nthr : parallel_max_threads();
    b.nb = blocking.nb ? blocking.nb : pick_nb(level, M, N, K, b.kc, plan_threads);
    b.mc = blocking.mc ? blocking.mc : std::max<std::int64_t>(1, l2_bytes / l2_a_share / (b.kc * 4));
    if (!blocking.mc && b.mc < M) {
        // Whole register blocks per chunk: a chunk of 128 rows in blocks of 6 ends in a 2-row
        // block, with too few accumulators to keep the FMA pipes busy (see brgemm_init_conf.cpp)
        // and far slower per row than a full one (docs/tuning.md, "GEMM row chunks").
        // The block of a tall problem is the register-limited one (a short one balances).
        brgemm_conf_t probe;
        std::string ignored;
        if (init_conf_brgemm(probe, level, tall, std::min(b.nb, N), b.kc, LDA, b.nb, LDC, 1.f, beta, ignored)
                == status::success)
            b.mc = std::max<std::int64_t>(probe.bd_block, b.mc / probe.bd_block * probe.bd_block);
    }
    b.mc = std::min(b.mc, M);
    // A kernel's refusal names its own call's sizes (a K chunk, a row block): the GEMM's go first.
    const auto refused = [&](status st) {
        why = cat("gemm: M=", M, " N=", N, " K=", K, " LDA=", LDA, " LDC=", LDC, ": ", why);
        return st;
    };
    g->pb_ = {K, N, b.nb};
    g->n_mc_ = div_up(M, b.mc);
    g->n_kc_ = K ? div_up(K, b.kc) : 1;
    g->m_tail_ = M % b.mc;
    g->n_tail_ = N % b.nb;
    g->k_tail_ = K ? K % b.kc : 0;
    // A C that outgrows the last-level cache the threads may count on has mostly left it by the
    // time anything reads it: written once (beta 0, one K chunk), its lines may go straight to
    // memory instead of each being read in first. Rows and panels start on whole lines: a line
    // that streaming stores write in parts (panels of 8 floats, rows that start mid-line) goes
    // out in pieces, far slower. Only a C whose rows run past N (LDC > N) can end a row mid-line
    // (docs/tuning.md, "GEMM: streaming C").
    constexpr std::int64_t line_floats = cache_line_bytes / 4;
    g->stream_c_ = beta == 0.f && g->n_kc_ == 1 && LDC % line_floats == 0 && b.nb % line_floats == 0
            && M * N * 4 > llc_bytes_for(machine_model(), plan_threads);

    g->kernels_.resize(64);
    for (int mt = 0; mt < 2; ++mt)
        for (int nt = 0; nt < 2; ++nt)
            for (int kt = 0; kt < 2; ++kt)
                for (int first = 0; first < 2; ++first)
                    for (int last = 0; last < 2; ++last) {
                        if ((mt && !g->m_tail_) || (nt && !g->n_tail_) || (kt && !g->k_tail_)) continue;
                        if (!nt && N < b.nb) continue; // no full panel
                        // The tail chunk of K is the last one; it is also the first only if K < kc,
                        // which kc = min(kc, K) rules out. A single chunk is first and not a tail.
                        if (kt && first) continue;
                        if (!first && g->n_kc_ == 1) continue;
                        // The last chunk has its own kernel only with an epilogue: a single chunk
                        // is first and last, a tail chunk is last.
                        if (last && !epilogue.any()) continue;
                        if (epilogue.any() && ((g->n_kc_ == 1 && first != last) || (kt && !last))) continue;
                        if (first && last && g->n_kc_ > 1) continue;
                        const std::int64_t m = mt ? g->m_tail_ : b.mc, n = nt ? g->n_tail_ : b.nb;
                        const std::int64_t k = K == 0 ? 0 : kt ? g->k_tail_ : b.kc;
                        brgemm_conf_t c;
                        status st = init_conf_brgemm(c, level, m, n, k, LDA, b.nb, LDC, 1.f, first ? beta : 1.f, why);
                        if (st != status::success) return refused(st);
                        c.with_bias = last && epilogue.bias;
                        c.relu = last && epilogue.relu;
                        if (jit)
                            st = brgemm_kernel_t::create(
                                    g->kernels_[mt * 16 + nt * 8 + kt * 4 + first * 2 + last], c, why);
                        if (st != status::success) return refused(st);
                    }
    // The streaming twins: the same blocking, C's full vectors stored non-temporally.
    if (jit && g->stream_c_)
        for (int i = 0; i < 32; ++i)
            if (g->kernels_[i]) {
                brgemm_conf_t c = g->kernels_[i]->conf();
                c.stream_c = true;
                if (status st = brgemm_kernel_t::create(g->kernels_[32 + i], c, why); st != status::success)
                    return refused(st);
            }
    out = std::move(g);
    return status::success;
}

const brgemm_kernel_t &gemm_jit_t::kernel(
        bool m_tail, bool n_tail, bool k_tail, bool first_k, bool last_k, bool stream) const {
    return *kernels_[stream * 32 + m_tail * 16 + n_tail * 8 + k_tail * 4 + first_k * 2 + (last_k && epi_.any())];
}

void gemm_jit_t::run_tile(const float *A, const float *B_packed, float *C, const float *bias, std::int64_t m0,
        std::int64_t p0, std::int64_t p1, bool stream) const {
    const bool m_tail = m_tail_ && m0 + blk_.mc > M_;
    const std::int64_t n_panels = pb_.n_panels();
    for (std::int64_t kci = 0; kci < n_kc_; ++kci) {
        const std::int64_t k0 = kci * blk_.kc;
        const bool k_tail = k_tail_ && kci == n_kc_ - 1;
        for (std::int64_t p = p0; p < p1; ++p) {
            const bool n_tail = n_tail_ && p == n_panels - 1;
            kernel(m_tail, n_tail, k_tail, kci == 0, kci == n_kc_ - 1, stream)(A + m0 * LDA_ + k0,
                    B_packed + (p * K_ + k0) * blk_.nb, C + m0 * LDC_ + p * blk_.nb,
                    bias ? bias + p * blk_.nb : nullptr);
        }
    }
}

void gemm_jit_t::execute(
        const float *A, const float *B_packed, float *C, int max_threads, const float *bias, bool c_read_next) const {
    int nthr = parallel_max_threads();
    if (max_threads > 0) nthr = std::min(nthr, max_threads);
    const std::int64_t n_panels = pb_.n_panels();
    // Row chunks first (each keeps its A rows in L2 over all panels); panel groups only when
    // there are too few row chunks to go around.
    std::int64_t n_pg = 1;
    if (nthr > 1 && n_mc_ < tiles_per_thread * nthr) n_pg = std::min(n_panels, div_up(tiles_per_thread * nthr, n_mc_));
    // A few row chunks, the last one short, leave some threads more rows than others (196 rows
    // in chunks of 56 on 2 threads: 112 and 84). One group of panels per thread, every row
    // chunk in it, then balances better where the panels divide more evenly than the rows.
    bool by_panels = false;
    if (nthr > 1 && n_panels >= nthr && n_mc_ <= tiles_per_thread * nthr) {
        const std::int64_t rows_most = div_up(n_mc_, nthr) * blk_.mc, panels_most = div_up(n_panels, nthr);
        // rows_most / (M / nthr) against panels_most / (n_panels / nthr), cross-multiplied.
        by_panels = panels_most * M_ < rows_most * n_panels;
    }
    if (by_panels) n_pg = nthr;
    const std::int64_t n_tiles = by_panels ? n_pg : n_mc_ * n_pg;
    const bool stream = !c_read_next && streams_into(C);
    auto body = [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t t = begin; t < end; ++t) {
            const std::int64_t pg = by_panels ? t : t % n_pg;
            std::int64_t p0, p1;
            balance211(n_panels, static_cast<int>(n_pg), static_cast<int>(pg), p0, p1);
            if (by_panels)
                for (std::int64_t mi = 0; mi < n_mc_; ++mi)
                    run_tile(A, B_packed, C, bias, mi * blk_.mc, p0, p1, stream);
            else run_tile(A, B_packed, C, bias, t / n_pg * blk_.mc, p0, p1, stream);
        }
    };
    if (nthr == 1 || n_tiles == 1) body(0, n_tiles);
    else parallel_for(n_tiles, 1, body);
}

const brgemm_kernel_t &gemm_jit_t::main_kernel() const {
    // The first that exists: a full tile when M >= mc and N >= nb, else the tail one; the first
    // K chunk's kernel, else a later one.
    for (int i : {2, 3, 0, 1, 10, 11, 8, 9, 18, 19, 16, 17, 26, 27, 24, 25})
        if (kernels_[i]) return *kernels_[i];
    return *kernels_[2];
}

std::vector<const brgemm_kernel_t *> gemm_jit_t::kernels() const {
    std::vector<const brgemm_kernel_t *> v {&main_kernel()};
    for (const auto &k : kernels_)
        if (k && k.get() != v[0]) v.push_back(k.get());
    return v;
}

std::string gemm_jit_t::str() const {
    const bool has_kernels = std::any_of(kernels_.begin(), kernels_.end(), [](const auto &k) { return bool(k); });
    return cat("M", M_, "N", N_, "K", K_, " mc", blk_.mc, " kc", blk_.kc, " nb", blk_.nb, stream_c_ ? " stream_c" : "",
            " | ", has_kernels ? to_string(main_kernel().conf()) : std::string("planned only, no kernels"));
}

} // namespace blockdnn::impl
