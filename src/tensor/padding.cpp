// SPDX-License-Identifier: Apache-2.0
// zero_padding: for each padded dim, every index whose coordinate on that dim lies past the
// logical size. With one inner block those elements come in contiguous runs (the tail of the
// last block), one run per combination of the other coordinates.
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

void zero_padding(const tensor_desc &d, float *data) {
    const int nd = d.ndims();
    for (int pd = 0; pd < nd; ++pd) {
        if (d.padded_dim(pd) == d.dim(pd)) continue;
        const dim_t tail = d.padded_dim(pd) - d.dim(pd);
        // With one inner block the tail [dim, padded_dim) of the last block is contiguous.
        const bool runs = d.inner_nblks() == 1;
        // Split the work over the outermost other dim.
        const int outer = pd == 0 ? (nd > 1 ? 1 : 0) : 0;
        const dim_t n_outer = outer == pd ? 1 : d.padded_dim(outer);
        parallel_for(n_outer, 1, [&](dim_t b, dim_t e) {
            dim_t idx[max_ndims] = {};
            for (dim_t o = b; o < e; ++o) {
                // Odometer over the dims other than pd and outer; pd runs over its tail unless
                // runs covers it in one memset.
                for (int k = 0; k < nd; ++k) idx[k] = 0;
                if (outer != pd) idx[outer] = o;
                idx[pd] = d.dim(pd);
                while (true) {
                    if (runs) std::memset(data + d.offset(idx), 0, tail * sizeof(float));
                    else data[d.offset(idx)] = 0.f;
                    int k = nd - 1;
                    for (; k >= 0; --k) {
                        if (k == outer && outer != pd) continue;
                        if (k == pd) {
                            if (runs) continue;
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
