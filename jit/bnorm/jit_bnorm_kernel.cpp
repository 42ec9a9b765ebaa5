// SPDX-License-Identifier: Apache-2.0
// The one entry point that builds a batch normalization kernel from its conf.
#include "jit/bnorm/jit_bnorm_kernel.hpp"

namespace blockdnn::impl {

status create_bnorm_fwd_stats_kernel(std::unique_ptr<bnorm_kernel_t> &, const bnorm_ker_conf_t &, std::string &);
status create_bnorm_fwd_norm_kernel(std::unique_ptr<bnorm_kernel_t> &, const bnorm_ker_conf_t &, std::string &);
status create_bnorm_bwd_stats_kernel(std::unique_ptr<bnorm_kernel_t> &, const bnorm_ker_conf_t &, std::string &);
status create_bnorm_bwd_norm_kernel(std::unique_ptr<bnorm_kernel_t> &, const bnorm_ker_conf_t &, std::string &);

status create_bnorm_kernel(std::unique_ptr<bnorm_kernel_t> &ker, const bnorm_ker_conf_t &k, std::string &why) {
    using kind = bnorm_ker_conf_t::kind_t;
    switch (k.kind) {
    case kind::fwd_stats: return create_bnorm_fwd_stats_kernel(ker, k, why);
    case kind::fwd_norm: return create_bnorm_fwd_norm_kernel(ker, k, why);
    case kind::bwd_stats: return create_bnorm_bwd_stats_kernel(ker, k, why);
    case kind::bwd_norm: return create_bnorm_bwd_norm_kernel(ker, k, why);
    }
    why = "unknown bnorm kernel kind";
    return status::runtime_error;
}

} // namespace blockdnn::impl
