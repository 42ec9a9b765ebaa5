// SPDX-License-Identifier: Apache-2.0
// Reference softmax along one axis, in the stable form (Goodfellow et al., Deep Learning,
// sec. 4.1): for each line of the axis, m = max(x), dst = exp(x - m) / sum(exp(x - m)).
// exp and the sum run in double; each result is rounded once. A line holding NaN gives NaN.
// Addresses come from tensor_desc offsets, so every layout works.
#include <cmath>
#include <memory>

#include "core/lazy.hpp"
#include "core/offset_table.hpp"
#include "tensor/op_check.hpp"
#include "sched/parallel.hpp"
#include "ops/softmax/softmax_impl.hpp"

namespace blockdnn::impl {

namespace {

// Offset tables of the tensors, per dim.
struct softmax_ref_tables_t {
    std::vector<dim_t> s[max_ndims], d[max_ndims];

    explicit softmax_ref_tables_t(const softmax_prb_t &p) {
        for (int k = 0; k < p.src.ndims(); ++k) {
            s[k] = dim_offsets(p.src, k);
            d[k] = dim_offsets(p.dst, k);
        }
    }
};

class softmax_fwd_ref_t final : public ref_impl_t<softmax_impl_t, softmax_prb_t, softmax_ref_tables_t> {
public:
    using ref_impl_t::ref_impl_t;

    void execute(const softmax_args_t &a) const override {
        const softmax_ref_tables_t &t = tables();
        const tensor_desc &sd = p_.src;
        const int nd = sd.ndims(), ax = p_.desc.axis;
        const dim_t L = sd.dim(ax), lines = sd.nelems() / L;
        if (p_.dst.is_blocked()) zero_padding(p_.dst, a.dst);
        parallel_for(lines, 1, [&](dim_t begin, dim_t end) {
            std::vector<double> e(static_cast<std::size_t>(L));
            for (dim_t line = begin; line < end; ++line) {
                dim_t rem = line, os = 0, od = 0;
                for (int d = nd - 1; d >= 0; --d) {
                    if (d == ax) continue;
                    const dim_t i = rem % sd.dim(d);
                    rem /= sd.dim(d);
                    os += t.s[d][i], od += t.d[d][i];
                }
                const std::vector<dim_t> &sa = t.s[ax], &da = t.d[ax];
                double m = a.src[os + sa[0]];
                for (dim_t k = 1; k < L; ++k) {
                    const double v = a.src[os + sa[k]];
                    if (std::isnan(v) || v > m) m = std::isnan(m) ? m : v;
                }
                double sum = 0;
                for (dim_t k = 0; k < L; ++k) sum += e[k] = std::exp(double(a.src[os + sa[k]]) - m);
                for (dim_t k = 0; k < L; ++k) a.dst[od + da[k]] = static_cast<float>(e[k] / sum);
            }
        });
    }
};

} // namespace

std::unique_ptr<softmax_impl_t> create_softmax_fwd_ref(const softmax_prb_t &prb) {
    return std::make_unique<softmax_fwd_ref_t>(prb);
}

} // namespace blockdnn::impl
