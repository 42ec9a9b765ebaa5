// SPDX-License-Identifier: Apache-2.0
// Reference binary op: dst[idx] = post_ops(src0[idx] (+|*) src1[idx with broadcast dims at 0]),
// one f32 operation per element (correctly rounded). Addresses come from tensor_desc offsets,
// so every layout works; src1's table for a broadcast dim holds its one offset at every index.
#include <memory>

#include "ops/binary/binary_impl.hpp"
#include "core/lazy.hpp"
#include "core/offset_table.hpp"
#include "tensor/op_check.hpp"
#include "sched/parallel.hpp"
#include "core/post_ops_ref.hpp"

namespace blockdnn::impl {

namespace {

// Offset tables of the tensors, per dim.
struct binary_fwd_ref_tables_t {
    std::vector<dim_t> s0[max_ndims], s1[max_ndims], d[max_ndims];

    explicit binary_fwd_ref_tables_t(const binary_prb_t &p) {
        for (int k = 0; k < p.dst.ndims(); ++k) {
            s0[k] = dim_offsets(p.src0, k);
            d[k] = dim_offsets(p.dst, k);
            s1[k] = dim_offsets(p.src1, k);
            s1[k].resize(static_cast<std::size_t>(p.dst.dim(k)), s1[k][0]); // broadcast dim: repeat its offset
        }
    }
};

class binary_fwd_ref_t final : public ref_impl_t<binary_impl_t, binary_prb_t, binary_fwd_ref_tables_t> {
public:
    using ref_impl_t::ref_impl_t;

    void execute(const binary_args_t &a) const override {
        const binary_fwd_ref_tables_t &t = tables();
        const tensor_desc &dd = p_.dst;
        const int nd = dd.ndims();
        if (dd.is_blocked()) zero_padding(dd, a.dst); // logical elements only are read below
        // Rows: every index of the leading dims; the last dim runs inside.
        const dim_t W = dd.dim(nd - 1), rows = dd.nelems() / W;
        parallel_for(rows, 1, [&](dim_t begin, dim_t end) {
            dim_t idx[max_ndims] = {};
            for (dim_t r = begin; r < end; ++r) {
                dim_t rem = r, o0 = 0, o1 = 0, od = 0;
                for (int d = nd - 2; d >= 0; --d) {
                    idx[d] = rem % dd.dim(d);
                    rem /= dd.dim(d);
                    o0 += t.s0[d][idx[d]], o1 += t.s1[d][idx[d]], od += t.d[d][idx[d]];
                }
                const int l = nd - 1;
                for (dim_t x = 0; x < W; ++x) {
                    const float v0 = a.src0[o0 + t.s0[l][x]], v1 = a.src1[o1 + t.s1[l][x]];
                    const float r0 = p_.desc.alg == binary_alg::add ? v0 + v1 : v0 * v1;
                    float &out = a.dst[od + t.d[l][x]];
                    out = apply_post_ops_ref(p_.po, r0, out);
                }
            }
        });
    }
};

} // namespace

std::unique_ptr<binary_impl_t> create_binary_fwd_ref(const binary_prb_t &prb) {
    return std::make_unique<binary_fwd_ref_t>(prb);
}

} // namespace blockdnn::impl
