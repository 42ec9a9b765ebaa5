// SPDX-License-Identifier: Apache-2.0
// A small Xbyak base for the batch normalization kernels until the library's jit_generator_t
// lands, with the same interface: System V prologue/epilogue over the registers a kernel
// uses, a RIP-relative constant pool after the code, W^X (AutoGrow buffer, read-execute once
// generated) and create() returning a status. Also the ISA traits the bnorm kernels share.
#pragma once

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <vector>

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

class jit_bnorm_base_t : public Xbyak::CodeGenerator {
public:
    jit_bnorm_base_t(std::string name, isa level)
        : Xbyak::CodeGenerator(4096, Xbyak::AutoGrow), name_(std::move(name)), isa_(level) {}
    ~jit_bnorm_base_t() override = default;
    jit_bnorm_base_t(const jit_bnorm_base_t &) = delete;
    jit_bnorm_base_t &operator=(const jit_bnorm_base_t &) = delete;

    /// Runs generate(), emits the constant pool and makes the code read-execute. Returns
    /// runtime_error with Xbyak's message in `why` if generation fails. Call once.
    status create(std::string &why) {
        try {
            generate();
            align(64);
            L(pool_label_);
            for (std::uint8_t b : pool_) db(b);
            readyRE(); // resolves labels; AutoGrow pages become read-execute (NOTES: W^X)
            return status::success;
        } catch (const Xbyak::Error &e) {
            why = name_ + ": Xbyak: " + e.what();
            return status::runtime_error;
        }
    }

    const std::string &name() const { return name_; }
    isa isa_level() const { return isa_; }
    const std::uint8_t *code() const { return getCode(); }
    std::size_t code_size() const { return getSize(); }
    virtual std::string conf_str() const = 0;

    template <typename F>
    F entry() const {
        return reinterpret_cast<F>(const_cast<std::uint8_t *>(code()));
    }

    /// A pool entry holding `bits` in every 32-bit lane of one vector of the ISA.
    Xbyak::Address vconst_u32(std::uint32_t bits) {
        const int vlen = isa_ == isa::avx512_core ? 64 : 32;
        std::uint32_t lanes[16];
        for (int i = 0; i < vlen / 4; ++i) lanes[i] = bits;
        return pool_data(lanes, static_cast<std::size_t>(vlen));
    }
    /// A pool entry holding `bytes` raw bytes, aligned to 64.
    Xbyak::Address pool_data(const void *data, std::size_t bytes) {
        std::size_t off = 0;
        for (; off + bytes <= pool_.size(); off += 64)
            if (std::memcmp(pool_.data() + off, data, bytes) == 0) break;
        if (off + bytes > pool_.size()) {
            off = (pool_.size() + 63) / 64 * 64;
            pool_.resize(off + bytes);
            std::memcpy(pool_.data() + off, data, bytes);
        }
        return ptr[rip + pool_label_ + static_cast<int>(off)];
    }

protected:
    virtual void generate() = 0;

    /// Pushes the callee-saved registers among `used`; postamble pops them, vzeroupper, ret.
    void preamble(std::initializer_list<Xbyak::Reg64> used) {
        saved_.clear();
        for (const Xbyak::Reg64 &r : used)
            for (int idx : {3, 5, 12, 13, 14, 15}) // rbx, rbp, r12-r15
                if (r.getIdx() == idx) {
                    push(r);
                    saved_.push_back(r);
                }
    }
    void postamble() {
        for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) pop(*it);
        vzeroupper(); // no AVX-SSE transition penalty in the caller
        ret();
    }

    const Xbyak::Reg64 abi_param1 = rdi;

private:
    std::string name_;
    isa isa_;
    std::vector<Xbyak::Reg64> saved_;
    std::vector<std::uint8_t> pool_;
    Xbyak::Label pool_label_;
};

} // namespace blockdnn::impl
