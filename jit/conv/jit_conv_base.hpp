// SPDX-License-Identifier: Apache-2.0
// A minimal Xbyak base for the convolution kernels: System V preamble/postamble, a constant
// pool addressed RIP-relative, W^X code pages and create() returning a status. It mirrors the
// interface of the library's jit_generator_t so the kernels can move onto it unchanged.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include <xbyak/xbyak.h>

#include "blockdnn/isa.hpp"
#include "blockdnn/status.hpp"

namespace blockdnn::impl {

class jit_conv_base_t : public Xbyak::CodeGenerator {
public:
    jit_conv_base_t(std::string name, isa level);
    ~jit_conv_base_t() override = default;
    jit_conv_base_t(const jit_conv_base_t &) = delete;
    jit_conv_base_t &operator=(const jit_conv_base_t &) = delete;

    /// Runs generate(), appends the constant pool and makes the pages read-execute. Returns
    /// success, or runtime_error with Xbyak's message in `why`. Call once.
    status create(std::string &why);

    const std::string &name() const { return name_; }
    isa isa_level() const { return isa_; }
    const std::uint8_t *code() const { return getCode(); }
    std::size_t code_size() const { return getSize(); }

    template <typename F>
    F entry() const {
        return reinterpret_cast<F>(const_cast<std::uint8_t *>(code()));
    }

    /// A 64-byte pool entry holding `value` in all 16 float lanes (a full zmm or ymm source).
    Xbyak::Address vconst(float value);
    /// A 64-byte pool entry holding `bits` in every 32-bit lane.
    Xbyak::Address vconst_u32(std::uint32_t bits);
    /// A 64-byte pool entry with the first `n` 32-bit lanes all ones and the rest zero.
    Xbyak::Address vconst_lane_mask(int n);

protected:
    virtual void generate() = 0;

    /// Pushes the callee-saved registers among `used` (rbx, rbp, r12-r15).
    void preamble(std::initializer_list<Xbyak::Reg64> used);
    /// Pops them, vzeroupper, ret.
    void postamble();

    const Xbyak::Reg64 abi_param1 = rdi;

private:
    Xbyak::Address pool_entry(const std::uint32_t (&lanes)[16]);

    std::string name_;
    isa isa_;
    std::vector<Xbyak::Reg64> saved_;
    std::vector<std::uint32_t> pool_; // 16 lanes per entry
    Xbyak::Label pool_label_;
};

} // namespace blockdnn::impl
