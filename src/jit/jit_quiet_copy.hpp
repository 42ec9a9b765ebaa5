// SPDX-License-Identifier: Apache-2.0
// A kernel's quiet twin made by copying its code and turning its droppable prefetches into
// NOPs, instead of generating the kernel a second time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "jit/jit_generator.hpp"

namespace blockdnn::impl {

/// The code of a created kernel `src` with every prefetch in src.droppable_prefetches() made a
/// NOP of the same length: `0F 18 /r` (prefetchnta, t0, t1, t2) becomes `0F 1F /0` (the
/// multi-byte NOP) on the same memory operand, prefixes kept. All other bytes, the constant
/// pool included, keep their offsets, so the copy computes what src computes as long as src's
/// code refers only to itself: jumps and RIP-relative operands within its code and pool, no
/// `call` to a function, no absolute address of a label, no RIP-relative data outside it
/// (those would point where src's code lies). Generation copies and patches bytes instead of
/// emitting instructions again (docs/tuning.md, "Conv creation time", has the cost).
///
/// create() fails with runtime_error if src was not created or a recorded offset does not hold
/// a prefetch.
class jit_quiet_copy_t final : public jit_generator_t {
public:
    /// Copies what it needs from `src` (which must be created); src may die afterwards.
    explicit jit_quiet_copy_t(const jit_generator_t &src);

    /// src's conf, and a line saying its prefetches are NOPs here.
    std::string conf_str() const override { return conf_str_; }

protected:
    void generate() override;

private:
    std::vector<std::uint8_t> insns_; // src's instructions, patched by generate()
    std::vector<std::uint8_t> pool_;  // src's constant pool
    std::vector<std::uint32_t> nop_at_;
    std::string conf_str_;
};

} // namespace blockdnn::impl
