// SPDX-License-Identifier: Apache-2.0
// jit_quiet_copy_t: byte copy of a kernel with its droppable prefetches patched to NOPs.
#include <stdexcept>

#include "core/utils.hpp"
#include "jit/jit_quiet_copy.hpp"

namespace blockdnn::impl {

namespace {

// The prefixes Xbyak may put before a legacy-encoded prefetch: REX (extended registers),
// address size and segment overrides.
bool is_prefix(std::uint8_t b) {
    return (b & 0xf0) == 0x40 || b == 0x67 || b == 0x2e || b == 0x36 || b == 0x3e || b == 0x26 || b == 0x64
            || b == 0x65;
}

// Makes the prefetch at `at` a NOP: `0F 18 /r` with r in 0..3 becomes `0F 1F /0`, the same
// ModRM operand (and so the same SIB, displacement and length).
void prefetch_to_nop(std::vector<std::uint8_t> &code, std::size_t at) {
    std::size_t i = at;
    while (i < code.size() && is_prefix(code[i])) ++i;
    const bool ok = i + 2 < code.size() && code[i] == 0x0f && code[i + 1] == 0x18 && ((code[i + 2] >> 3) & 7) <= 3
            && (code[i + 2] >> 6) != 3;
    if (!ok) throw std::runtime_error(cat("no prefetch at code offset ", at, " to make a NOP"));
    code[i + 1] = 0x1f;
    code[i + 2] = static_cast<std::uint8_t>(code[i + 2] & ~0x38);
}

} // namespace

jit_quiet_copy_t::jit_quiet_copy_t(const jit_generator_t &src)
    : jit_generator_t(src.name() + "_quiet", src.isa_level()), insns_(src.code(), src.code() + src.insn_size()),
      pool_(src.code() + src.insn_size(), src.code() + src.code_size()), nop_at_(src.droppable_prefetches()),
      conf_str_(src.conf_str() + "prefetches: the " + std::to_string(src.droppable_prefetches().size())
              + " droppable ones are NOPs in this copy\n") {}

void jit_quiet_copy_t::generate() {
    if (insns_.empty()) throw std::runtime_error("the kernel to copy was not created");
    for (std::uint32_t at : nop_at_) prefetch_to_nop(insns_, at);
    // src's instructions end at a 64-byte boundary (its pool's alignment), as these will: the
    // pool, added first to an empty one, lands at the same offset.
    emit_bytes(insns_.data(), insns_.size());
    if (!pool_.empty()) pool_data(pool_.data(), pool_.size());
}

} // namespace blockdnn::impl
