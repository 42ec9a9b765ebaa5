// SPDX-License-Identifier: Apache-2.0
// A small Xbyak base for the batch normalization kernels: System V prologue/epilogue, W^X
// (AutoGrow buffer, read-execute once generated) and the ISA helpers the kernels share
// (vector type, tail loads/stores, broadcast constants). The library's jit_generator_t replaces
// the ABI and W^X parts when it lands; the helpers stay.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include <xbyak/xbyak.h>

#include "blockdnn/isa.hpp"
#include "blockdnn/status.hpp"

namespace blockdnn::impl {

/// Vector type and width per (isa, Vmm): avx512_core with Zmm (16 lanes) or Ymm (8 lanes,
/// for 8c layouts, still with opmasks and 32 registers), avx2 with Ymm (8 lanes, 16 registers,
/// tails through vmaskmovps).
template <isa isa_v, typename Vmm>
struct bnorm_isa_traits_t {
    static_assert(isa_v == isa::avx512_core || isa_v == isa::avx2, "JIT bnorm needs avx2 or avx512_core");
    static_assert(isa_v == isa::avx512_core || std::is_same_v<Vmm, Xbyak::Ymm>, "avx2 has no zmm");
    static constexpr int simd_w = std::is_same_v<Vmm, Xbyak::Zmm> ? 16 : 8;
    static constexpr int n_vregs = isa_v == isa::avx512_core ? 32 : 16;
    static constexpr bool has_opmask = isa_v == isa::avx512_core;
};

/// Base of every bnorm kernel. Subclasses emit code in generate(); create() runs it and makes
/// the buffer executable. No Xbyak exception leaves create().
class jit_bnorm_base_t : public Xbyak::CodeGenerator {
public:
    explicit jit_bnorm_base_t(const char *name)
        : Xbyak::CodeGenerator(4096, Xbyak::AutoGrow), name_(name) {}
    ~jit_bnorm_base_t() override = default;

    /// Generates the code. runtime_error (with Xbyak's message in `why`) if Xbyak fails.
    status create(std::string &why) {
        try {
            generate();
            readyRE(); // resolves labels and turns the pages read-execute (see NOTES: W^X)
            code_ = getCode();
            return status::success;
        } catch (const Xbyak::Error &e) {
            why = std::string(name_) + ": Xbyak: " + e.what();
            return status::runtime_error;
        }
    }

    const char *name() const { return name_; }
    /// The generated entry point (valid after a successful create()).
    const std::uint8_t *code() const { return code_; }
    std::size_t code_size() const { return getSize(); }

protected:
    virtual void generate() = 0;

    // System V: the first argument, and the callee-saved registers the prologue keeps.
    const Xbyak::Reg64 abi_param1 = rdi;
    static constexpr int n_saved = 6;

    void preamble() {
        const Xbyak::Reg64 *regs = saved_regs();
        for (int i = 0; i < n_saved; ++i) push(regs[i]);
    }
    void postamble() {
        const Xbyak::Reg64 *regs = saved_regs();
        for (int i = n_saved - 1; i >= 0; --i) pop(regs[i]);
        vzeroupper(); // avoids the AVX-SSE transition penalty in the caller
        ret();
    }

private:
    const Xbyak::Reg64 *saved_regs() const {
        static const Xbyak::Reg64 regs[n_saved] = {rbx, rbp, r12, r13, r14, r15};
        return regs;
    }

    const char *name_;
    const std::uint8_t *code_ = nullptr;
};

} // namespace blockdnn::impl
