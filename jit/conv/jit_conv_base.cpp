// SPDX-License-Identifier: Apache-2.0
// The minimal Xbyak base of the convolution kernels (see jit_conv_base.hpp).
#include "jit/conv/jit_conv_base.hpp"

#include <algorithm>
#include <cstring>

namespace blockdnn::impl {

jit_conv_base_t::jit_conv_base_t(std::string name, isa level)
    : Xbyak::CodeGenerator(4096, Xbyak::AutoGrow), name_(std::move(name)), isa_(level) {}

status jit_conv_base_t::create(std::string &why) {
    try {
        generate();
        // The pool follows the code; entries are 64-byte aligned for full-width loads.
        align(64);
        L(pool_label_);
        for (std::uint32_t v : pool_) dd(v);
        readyRE(); // AutoGrow: resolves labels, then flips the pages to read-execute
    } catch (const Xbyak::Error &e) {
        why = std::string(name_) + ": Xbyak error: " + e.what();
        return status::runtime_error;
    }
    return status::success;
}

void jit_conv_base_t::preamble(std::initializer_list<Xbyak::Reg64> used) {
    static const int callee_saved[] = {Xbyak::Operand::RBX, Xbyak::Operand::RBP, Xbyak::Operand::R12,
            Xbyak::Operand::R13, Xbyak::Operand::R14, Xbyak::Operand::R15};
    saved_.clear();
    for (int idx : callee_saved)
        if (std::any_of(used.begin(), used.end(), [&](const Xbyak::Reg64 &r) { return r.getIdx() == idx; }))
            saved_.push_back(Xbyak::Reg64(idx));
    for (const Xbyak::Reg64 &r : saved_) push(r);
}

void jit_conv_base_t::postamble() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) pop(*it);
    vzeroupper();
    ret();
}

Xbyak::Address jit_conv_base_t::pool_entry(const std::uint32_t (&lanes)[16]) {
    const std::size_t n = pool_.size() / 16;
    for (std::size_t e = 0; e < n; ++e)
        if (std::equal(lanes, lanes + 16, pool_.begin() + static_cast<std::ptrdiff_t>(e * 16)))
            return ptr[rip + pool_label_ + static_cast<int>(e * 64)];
    pool_.insert(pool_.end(), lanes, lanes + 16);
    return ptr[rip + pool_label_ + static_cast<int>(n * 64)];
}

Xbyak::Address jit_conv_base_t::vconst(float value) {
    std::uint32_t bits;
    std::memcpy(&bits, &value, 4);
    return vconst_u32(bits);
}

Xbyak::Address jit_conv_base_t::vconst_u32(std::uint32_t bits) {
    std::uint32_t lanes[16];
    std::fill(lanes, lanes + 16, bits);
    return pool_entry(lanes);
}

Xbyak::Address jit_conv_base_t::vconst_lane_mask(int n) {
    std::uint32_t lanes[16];
    for (int i = 0; i < 16; ++i) lanes[i] = i < n ? 0xffffffffu : 0u;
    return pool_entry(lanes);
}

} // namespace blockdnn::impl
