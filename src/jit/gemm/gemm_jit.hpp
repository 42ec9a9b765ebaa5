// SPDX-License-Identifier: Apache-2.0
// f32 GEMM with a packed right-hand side, on the brgemm microkernel: C = A * B + beta * C,
// row-major A (M x K) and C (M x N), B (K x N) packed once into column panels. The driver
// blocks for L2 (a kc x nb slice of a B panel and mc x kc of A) and splits (row chunk, panel
// group) tiles across threads. Used by the RNN's input projection and the inner product
// (src/ops/ip/ip_jit.cpp) and the unit-stride 1x1 convolution (src/ops/conv/conv_gemm.cpp).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "blockdnn/isa.hpp"
#include "blockdnn/status.hpp"
#include "core/aligned_vector.hpp"
#include "jit/brgemm/jit_brgemm_kernel.hpp"

namespace blockdnn::impl {

/// B (K x N) packed for the microkernel: div_up(N, nb) panels, each K rows of nb floats
/// (contiguous), the columns past N zero. Panel p, row k, column j is
/// packed[(p * K + k) * nb + j] = B[k][p * nb + j].
struct gemm_packed_b_t {
    std::int64_t K = 0, N = 0, nb = 0;
    std::int64_t n_panels() const { return (N + nb - 1) / nb; }
    std::int64_t size() const { return n_panels() * K * nb; }
};

/// Packs row-major B (K x N, row stride ldb) into `dst` (size() floats).
void gemm_pack_b(const gemm_packed_b_t &p, const float *B, std::int64_t ldb, float *dst);

/// Packs panels [pan_begin, pan_end) of B = BT^T into `dst` (laid out as by gemm_pack_b), where
/// BT is row-major N x K with row stride ldbt: B[k][j] = BT[j * ldbt + k] (an inner product's
/// oc x ic weights). Panels are independent, so threads may pack disjoint ranges.
void gemm_pack_b_transposed(const gemm_packed_b_t &p, const float *BT, std::int64_t ldbt, float *dst,
        std::int64_t pan_begin, std::int64_t pan_end);

/// What the kernels do to C after the last K chunk: add a bias per column (execute's `bias`),
/// then relu (x > 0 ? x : 0; NaN stays).
struct gemm_epilogue_t {
    bool bias = false;
    bool relu = false;
    bool any() const { return bias || relu; }
};

/// Cache blocking of the driver; 0 means "the driver picks".
struct gemm_blocking_t {
    std::int64_t mc = 0; ///< rows of A per tile (kept in L2)
    std::int64_t kc = 0; ///< K per microkernel call (kc x nb of B kept in L2)
    std::int64_t nb = 0; ///< panel width, a multiple of the vector width
};

class gemm_jit_t {
public:
    static constexpr std::int64_t cache_line_bytes = 64;

    /// Plans C[M x N] = A[M x K] * B + beta * C for A with row stride LDA and C with row stride
    /// LDC, and JITs its kernels (with jit = false only plans: every init_conf, no code, for
    /// acceptance checks). `nthr`: the threads execute() will mostly run on, which the panel
    /// width of few rows and streaming C are planned for (0: parallel_max_threads() now); any
    /// count gives the same results. unimplemented / runtime_error with the reason in `why`.
    static status create(std::unique_ptr<gemm_jit_t> &out, isa level, std::int64_t M, std::int64_t N, std::int64_t K,
            std::int64_t LDA, std::int64_t LDC, float beta, std::string &why, const gemm_blocking_t &blocking = {},
            bool jit = true, const gemm_epilogue_t &epilogue = {}, int nthr = 0);

    /// How B must be packed for execute().
    const gemm_packed_b_t &packed_b() const { return pb_; }
    /// B = BT^T packed for execute(), where BT is row-major N x K with row stride ldbt (the
    /// oc x ic weights of an inner product or a 1x1 convolution); its panels are split across
    /// threads.
    aligned_vector<float> pack_b_transposed(const float *BT, std::int64_t ldbt) const;
    const gemm_blocking_t &blocking() const { return blk_; }
    /// Whether the plan may store C non-temporally: beta 0, one K chunk, rows and panels whole
    /// cache lines apart, and C larger than the last-level cache the threads may count on
    /// (llc_bytes_for, with the threads of the creating context), so that most of it has left
    /// the cache by the time anything reads it.
    bool streams_c() const { return stream_c_; }
    /// Whether execute() streams into this C: the plan does and C starts on a cache line, so
    /// that every line is written whole.
    bool streams_into(const float *C) const {
        return stream_c_ && reinterpret_cast<std::uintptr_t>(C) % cache_line_bytes == 0;
    }

    /// Runs on up to `max_threads` threads (0: as many as parallel_for offers). The result does
    /// not depend on the thread count: every C element is the same sum in the same order.
    /// `bias` (N floats) is read when the plan's epilogue has one. C goes through the cache
    /// unless streams_into(C) and not `c_read_next` (the caller reads C again at once: an
    /// epilogue of its own). Streamed or not, C gets the same values.
    void execute(const float *A, const float *B_packed, float *C, int max_threads = 0, const float *bias = nullptr,
            bool c_read_next = false) const;

    /// "M3200N2048K512 mc128 kc512 nb64 | <kernel conf>", for verbose lines and kernelgen; a
    /// plan made with jit = false ends "| planned only, no kernels".
    std::string str() const;
    /// The kernel of a full tile (or of the partial one when there is no full one), for kernelgen.
    /// Only for plans made with jit = true.
    const brgemm_kernel_t &main_kernel() const;
    /// Every kernel of the plan (full tile first, then the edge cases), for kernelgen and tests.
    /// Only for plans made with jit = true.
    std::vector<const brgemm_kernel_t *> kernels() const;

private:
    gemm_jit_t() = default;
    // One tile: rows [m0, m0 + mc) of A and C, panels [p0, p1).
    void run_tile(const float *A, const float *B_packed, float *C, const float *bias, std::int64_t m0, std::int64_t p0,
            std::int64_t p1, bool stream) const;
    // last_k selects the kernel with the epilogue (the same as without when there is none);
    // stream the one that stores C non-temporally.
    const brgemm_kernel_t &kernel(bool m_tail, bool n_tail, bool k_tail, bool first_k, bool last_k, bool stream) const;

    std::int64_t M_ = 0, N_ = 0, K_ = 0, LDA_ = 0, LDC_ = 0;
    float beta_ = 0.f;
    gemm_epilogue_t epi_;
    gemm_blocking_t blk_;
    gemm_packed_b_t pb_;
    std::int64_t n_mc_ = 0, n_kc_ = 0, m_tail_ = 0, n_tail_ = 0, k_tail_ = 0;
    bool stream_c_ = false;
    // Indexed by (stream, m_tail, n_tail, k_tail, first_k, last_k) bits; null where that case
    // cannot occur. last_k is set only with an epilogue, stream only in a plan that streams C.
    std::vector<std::unique_ptr<brgemm_kernel_t>> kernels_;
};

/// An op's weights as the GEMM's B: its own (take), packed once, or, for any other weights an
/// execute is given, packed on that call. BT is row-major N x K with row stride ldbt, as for
/// gemm_jit_t::pack_b_transposed.
class gemm_packed_weights_t {
public:
    void take(const gemm_jit_t &g, const float *BT, std::int64_t ldbt) {
        taken_ = BT;
        packed_ = g.pack_b_transposed(BT, ldbt);
    }
    /// B for BT: the one packed by take() if BT is the taken weights, else BT packed into
    /// `scratch`.
    const float *get(const gemm_jit_t &g, const float *BT, std::int64_t ldbt, aligned_vector<float> &scratch) const {
        if (BT == taken_) return packed_.data();
        scratch = g.pack_b_transposed(BT, ldbt);
        return scratch.data();
    }

private:
    const float *taken_ = nullptr;
    aligned_vector<float> packed_;
};

} // namespace blockdnn::impl
