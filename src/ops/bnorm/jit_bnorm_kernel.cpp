// SPDX-License-Identifier: Apache-2.0
// The one entry point that makes a batch normalization kernel generator from its conf.
#include "ops/bnorm/jit_bnorm_kernel.hpp"

namespace blockdnn::impl {

std::unique_ptr<jit_generator_t> make_bnorm_fwd_stats_kernel(const bnorm_ker_conf_t &k);
std::unique_ptr<jit_generator_t> make_bnorm_fwd_norm_kernel(const bnorm_ker_conf_t &k);
std::unique_ptr<jit_generator_t> make_bnorm_bwd_stats_kernel(const bnorm_ker_conf_t &k);
std::unique_ptr<jit_generator_t> make_bnorm_bwd_norm_kernel(const bnorm_ker_conf_t &k);

std::unique_ptr<jit_generator_t> make_bnorm_kernel(const bnorm_ker_conf_t &k) {
    using kind = bnorm_ker_conf_t::kind_t;
    switch (k.kind) {
    case kind::fwd_stats: return make_bnorm_fwd_stats_kernel(k);
    case kind::fwd_norm: return make_bnorm_fwd_norm_kernel(k);
    case kind::bwd_stats: return make_bnorm_bwd_stats_kernel(k);
    case kind::bwd_norm: return make_bnorm_bwd_norm_kernel(k);
    }
    return nullptr;
}

} // namespace blockdnn::impl
