// SPDX-License-Identifier: Apache-2.0
// zero_padding: for each padded dim, every index whose coordinate on that dim lies past the
// logical size. With one inner block those elements come in contiguous runs (the tail of the
// last block), one run per combination of the other coordinates, at offsets linear in them.
#include <algorithm>
#include <cstring>

#include "sched/parallel.hpp"
#include "tensor/padding.hpp"

namespace blockdnn::impl {

bool has_padding(const tensor_desc &d) {
    for (int k = 0; k < d.ndims(); ++k)
        if (d.padded_dim(k) != d.dim(k)) return true;
    return false;
}

namespace {

// Zeros the `len` floats at p in 4-float stores, the last ending at p + len (overlapping the
// one before): a tail of 15 takes 4 stores, where a memset call per run costs more than the
// run (docs/tuning.md, "Pooling between layouts", has the zero padding's figures).
inline void zero_run(float *p, dim_t len) {
    static constexpr float zeros[4] = {};
    if (len < 4) {
        for (dim_t l = 0; l < len; ++l) p[l] = 0.f;
        return;
    }
    for (dim_t l = 0; l + 4 < len; l += 4) std::memcpy(p + l, zeros, sizeof zeros);
    std::memcpy(p + len - 4, zeros, sizeof zeros);
}

// One inner block, on dim pd (the only dim it can pad): the padding is the tail [dim, padded)
// of pd's last block, a run for each combination of the other dims' indices. The runs' offsets
// step by fixed strides, so the walk is an odometer over those dims, split evenly over the
// threads (an activation of mb 1 has all its runs in one image).
void zero_block_tails(const tensor_desc &d, int pd, float *data) {
    const int nd = d.ndims();
    dim_t idx[max_ndims] = {};
    idx[pd] = d.dim(pd);
    const dim_t base = d.offset(idx), len = d.padded_dim(pd) - d.dim(pd);
    dim_t size[max_ndims], stride[max_ndims]; // the other dims, outermost first
    int m = 0;
    dim_t runs = 1;
    for (int k = 0; k < nd; ++k) {
        if (k == pd) continue;
        const dim_t st = d.stride(k); // not blocked: its elements' distance
        runs *= d.dim(k);
        if (m > 0 && stride[m - 1] == st * d.dim(k)) { // merged with the dim before it (h, w)
            size[m - 1] *= d.dim(k);
            stride[m - 1] = st;
            continue;
        }
        stride[m] = st;
        size[m++] = d.dim(k);
    }
    if (m == 0) { // pd is the only dim: one run
        size[0] = 1;
        stride[0] = 0;
        m = 1;
    }
    parallel_for(runs, 256, [&](dim_t b, dim_t e) {
        dim_t at[max_ndims], off = base, rest = b;
        for (int j = m - 1; j >= 0; --j) {
            at[j] = rest % size[j];
            rest /= size[j];
            off += at[j] * stride[j];
        }
        for (dim_t r = b; r < e;) {
            // Along the innermost (merged) dim the runs are evenly spaced.
            const dim_t n = std::min(e - r, size[m - 1] - at[m - 1]), st = stride[m - 1];
            for (dim_t i = 0; i < n; ++i) zero_run(data + off + i * st, len);
            r += n;
            at[m - 1] += n - 1;
            off += (n - 1) * st;
            for (int j = m - 1; j >= 0; --j) {
                off += stride[j];
                if (++at[j] < size[j]) break;
                off -= stride[j] * size[j];
                at[j] = 0;
            }
        }
    });
}

} // namespace

void zero_padding(const tensor_desc &d, float *data) {
    const int nd = d.ndims();
    if (d.inner_nblks() == 1) {
        for (int pd = 0; pd < nd; ++pd)
            if (d.padded_dim(pd) != d.dim(pd)) zero_block_tails(d, pd, data);
        return;
    }
    // Two inner blocks (weights): element by element, for each padded dim.
    for (int pd = 0; pd < nd; ++pd) {
        if (d.padded_dim(pd) == d.dim(pd)) continue;
        // Split the work over the outermost other dim.
        const int outer = pd == 0 ? (nd > 1 ? 1 : 0) : 0;
        const dim_t n_outer = outer == pd ? 1 : d.padded_dim(outer);
        parallel_for(n_outer, 1, [&](dim_t b, dim_t e) {
            dim_t idx[max_ndims] = {};
            for (dim_t o = b; o < e; ++o) {
                // Odometer over the dims other than outer, pd over its tail only.
                for (int k = 0; k < nd; ++k) idx[k] = 0;
                if (outer != pd) idx[outer] = o;
                idx[pd] = d.dim(pd);
                while (true) {
                    data[d.offset(idx)] = 0.f;
                    int k = nd - 1;
                    for (; k >= 0; --k) {
                        if (k == outer && outer != pd) continue;
                        if (k == pd) {
                            if (++idx[k] < d.padded_dim(k)) break;
                            idx[k] = d.dim(k);
                            continue;
                        }
                        if (++idx[k] < d.padded_dim(k)) break;
                        idx[k] = 0;
                    }
                    if (k < 0) break;
                }
            }
        });
    }
}

} // namespace blockdnn::impl
