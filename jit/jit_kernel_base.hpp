// SPDX-License-Identifier: Apache-2.0
// Phase-1 base of the brgemm and RNN cell generators, until jit_generator_t lands: System V
// prologue/epilogue, W^X code pages (Xbyak AutoGrow, then readyRE) and Xbyak errors as a status.
#pragma once

#include <string>

#include <xbyak/xbyak.h>

#include "blockdnn/isa.hpp"
#include "blockdnn/status.hpp"

namespace blockdnn::impl {

/// What the generators need to know about an ISA: the vector register type, its width in
/// floats and how many vector registers there are.
template <isa level>
struct jit_isa_traits_t;

template <>
struct jit_isa_traits_t<isa::avx512_core> {
    using Vmm = Xbyak::Zmm;
    static constexpr int simd_w = 16;
    static constexpr int n_vregs = 32;
};

template <>
struct jit_isa_traits_t<isa::avx2> {
    using Vmm = Xbyak::Ymm;
    static constexpr int simd_w = 8;
    static constexpr int n_vregs = 16;
};

/// Floats per vector register of `level` (16, 8, or 1 for scalar).
constexpr int simd_width(isa level) { return level == isa::avx512_core ? 16 : level == isa::avx2 ? 8 : 1; }
/// Vector registers of `level`.
constexpr int n_vregs(isa level) { return level == isa::avx512_core ? 32 : 16; }

class jit_kernel_base_t : public Xbyak::CodeGenerator {
public:
    explicit jit_kernel_base_t(const char *name) : Xbyak::CodeGenerator(4096, Xbyak::AutoGrow), name_(name) {}
    ~jit_kernel_base_t() override = default;
    jit_kernel_base_t(const jit_kernel_base_t &) = delete;
    jit_kernel_base_t &operator=(const jit_kernel_base_t &) = delete;

    /// Runs generate() and makes the code executable (read + execute, never writable).
    /// Returns runtime_error with Xbyak's message in `why` if generation fails.
    status create(std::string &why) {
        try {
            generate();
            readyRE();
        } catch (const Xbyak::Error &e) {
            why = std::string(name_) + ": " + e.what();
            return status::runtime_error;
        }
        return status::success;
    }

    const char *name() const { return name_; }
    /// The entry point, as a function pointer of type F.
    template <typename F>
    F entry() const {
        return reinterpret_cast<F>(const_cast<Xbyak::uint8 *>(getCode()));
    }

protected:
    virtual void generate() = 0;

    // System V: the first argument, and the callee-saved registers the kernels may use.
    const Xbyak::Reg64 abi_param1 = rdi;

    void preamble() {
        for (const Xbyak::Reg64 &r : saved_) push(r);
    }
    void postamble() {
        for (int i = n_saved - 1; i >= 0; --i) pop(saved_[i]);
        vzeroupper();
        ret();
    }

private:
    static constexpr int n_saved = 6;
    const Xbyak::Reg64 saved_[n_saved] = {rbx, rbp, r12, r13, r14, r15};
    const char *name_;
};

} // namespace blockdnn::impl
