// SPDX-License-Identifier: Apache-2.0
// The JIT eltwise driver: gets the kernels from the cache at creation, splits the tensor's
// memory into chunks over threads at execution, and re-zeroes blocked-layout padding.
#include <algorithm>
#include <cstdint>

#include "core/machine_model.hpp"
#include "sched/parallel.hpp"
#include "core/utils.hpp"
#include "ops/eltwise/eltwise_conf.hpp"
#include "ops/eltwise/jit_eltwise_fwd_kernel.hpp"
#include "jit/isa_traits.hpp"
#include "ops/eltwise/eltwise_impl.hpp"
#include "tensor/padding.hpp"

namespace blockdnn::impl {

namespace {

// Floats per kernel call: 64 KiB of src, a multiple of every ur * simd_w, big enough to
// amortize the call and small enough to balance threads.
constexpr dim_t chunk_floats = 16384;

// Streaming stores pay off once src and dst together overflow the last-level cache that the
// threads count on (llc_bytes_for: cpuinfo's L3 may be a whole host's). Then dst would be
// evicted before anyone reads it, and a regular store also reads the line first.
bool wants_stream_stores(const tensor_desc &d) {
    return 2 * d.size_bytes() > static_cast<std::size_t>(llc_bytes_for(machine_model(), parallel_max_threads()));
}

status get_kernel(const eltwise_prb_t &prb, isa level, bool stream, kernel_ptr &out, std::string &why) {
    eltwise_conf_t c;
    if (status st = init_conf_eltwise_fwd(c, level, prb.alg, prb.alpha, prb.beta, stream, why); st != status::success)
        return st;
    const auto &[isa_level, alg, alpha, beta, stream_stores, simd_w, ur, n_vtemps, n_vregs_used, tail_mask_vreg] = c;
    std::string key = "eltwise_fwd|";
    append_raw(key, isa_level, alg, alpha, beta, stream_stores, simd_w, ur, n_vtemps, n_vregs_used, tail_mask_vreg);
    return kernel_cache().get(
            key, [&] { return make_for_isa<jit_eltwise_fwd_kernel_t, jit_generator_t>(level, c); }, out, why);
}

class eltwise_jit_t : public eltwise_impl_t {
public:
    eltwise_jit_t(const eltwise_prb_t &p, isa level, std::vector<kernel_ptr> kernels)
        : p_(p), vlen_(vlen_of(level)), kernels_(std::move(kernels)) {}

    void execute(const eltwise_args_t &a) const override {
        const float *src = a.src;
        float *dst = a.dst;
        const dim_t n = p_.desc.nelems_padded();
        // Streaming stores need vector-aligned dst (chunks start at multiples of 64 bytes)
        // and no reuse of dst's lines, so not in place.
        const bool aligned = reinterpret_cast<std::uintptr_t>(dst) % vlen_ == 0;
        const bool stream = kernels_.size() > 1 && src != dst && aligned;
        const auto fn = kernels_[stream ? 1 : 0]->entry<eltwise_kernel_fn_t>();
        parallel_for(div_up(n, chunk_floats), 1, [&](dim_t b, dim_t e) {
            const dim_t begin = b * chunk_floats, end = std::min(n, e * chunk_floats);
            const eltwise_call_args_t args {src + begin, dst + begin, end - begin};
            fn(&args);
        });
        zero_padding(p_.desc, dst);
    }

private:
    eltwise_prb_t p_;
    int vlen_;
    std::vector<kernel_ptr> kernels_; // regular, then (large tensors) streaming stores
};

} // namespace

status eltwise_jit_kernels(const eltwise_prb_t &prb, isa level, std::vector<kernel_ptr> &out, std::string &why) {
    out.clear();
    for (bool stream : {false, true}) {
        if (stream && !wants_stream_stores(prb.desc)) break;
        kernel_ptr k;
        if (status st = get_kernel(prb, level, stream, k, why); st != status::success) return st;
        out.push_back(std::move(k));
    }
    return status::success;
}

template <isa level>
status create_eltwise_fwd_jit(const eltwise_prb_t &prb, std::unique_ptr<eltwise_impl_t> &out, std::string &why) {
    std::vector<kernel_ptr> kernels;
    if (status st = eltwise_jit_kernels(prb, level, kernels, why); st != status::success) return st;
    out = std::make_unique<eltwise_jit_t>(prb, level, std::move(kernels));
    return status::success;
}

template status create_eltwise_fwd_jit<isa::avx512_core>(
        const eltwise_prb_t &, std::unique_ptr<eltwise_impl_t> &, std::string &);
template status create_eltwise_fwd_jit<isa::avx2>(
        const eltwise_prb_t &, std::unique_ptr<eltwise_impl_t> &, std::string &);

} // namespace blockdnn::impl
