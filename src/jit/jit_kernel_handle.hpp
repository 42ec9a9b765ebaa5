// SPDX-License-Identifier: Apache-2.0
// The handle an op holds for one generated kernel (brgemm, the RNN cell): the conf the kernel
// was made for, its code (shared through the process-wide kernel cache) and its entry point,
// called with one pointer to the kernel's argument struct.
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "blockdnn/status.hpp"
#include "jit/jit_generator.hpp"
#include "jit/jit_kernel_cache.hpp"

namespace blockdnn::impl {

/// Base of the handle `handle_t` of kernels with conf `conf_t` (which names the ISA in
/// `level`) and argument struct `args_t`. handle_t adds the call operators and befriends this
/// base, which builds it (create_cached).
template <typename handle_t, typename conf_t, typename args_t>
class jit_kernel_handle_t {
public:
    const conf_t &conf() const { return c_; }
    /// The generated code (kernelgen, the ABI test).
    const jit_generator_t &generator() const { return *gen_; }

protected:
    jit_kernel_handle_t(const conf_t &c, kernel_ptr gen) : c_(c), gen_(std::move(gen)), ker_(gen_->entry<ker_t>()) {}

    /// One call of the kernel.
    void call(const args_t &args) const { ker_(&args); }

    /// The handle for `c`: the code from the process-wide kernel cache under `key` (which
    /// names every field that shapes the code), or a new kernel_t<c.level>(c) generated on a
    /// miss. runtime_error / out_of_memory with the reason in `why` if generation fails.
    template <template <isa> class kernel_t>
    static status create_cached(
            std::unique_ptr<handle_t> &out, const conf_t &c, const std::string &key, std::string &why) {
        kernel_ptr k;
        const status st = kernel_cache().get(
                key,
                [&]() -> std::unique_ptr<jit_generator_t> {
                    if (c.level == isa::avx512_core) return std::make_unique<kernel_t<isa::avx512_core>>(c);
                    return std::make_unique<kernel_t<isa::avx2>>(c);
                },
                k, why);
        if (st != status::success) return st;
        out.reset(new handle_t(c, std::move(k)));
        return status::success;
    }

private:
    using ker_t = void (*)(const args_t *);
    conf_t c_;
    kernel_ptr gen_;
    ker_t ker_;
};

} // namespace blockdnn::impl
