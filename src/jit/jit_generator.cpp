// SPDX-License-Identifier: Apache-2.0
// jit_generator_t: ABI prologue/epilogue, the constant pool, create() and its hooks.
#include <chrono>
#include <cstring>
#include <new>

#include "core/utils.hpp"
#include "jit/isa_traits.hpp"
#include "jit/jit_generator.hpp"
#include "jit/jit_hooks.hpp"

namespace blockdnn::impl {

namespace {

// Initial code buffer, large enough for the kernels made so far: each AutoGrow doubling maps a
// new buffer, copies the code and unmaps the old one, while pages never written cost only
// address space (docs/tuning.md, "Conv creation time").
constexpr std::size_t initial_code_bytes = 256 * 1024;

bool is_callee_saved(const Xbyak::Reg64 &r) {
    using namespace Xbyak::util;
    for (const Xbyak::Reg64 &s : {rbx, rbp, r12, r13, r14, r15})
        if (s.getIdx() == r.getIdx()) return true;
    return false;
}

} // namespace

jit_generator_t::jit_generator_t(std::string name, isa level)
    : Xbyak::CodeGenerator(initial_code_bytes, Xbyak::AutoGrow), name_(std::move(name)), isa_(level) {}

jit_generator_t::~jit_generator_t() = default;

void jit_generator_t::preamble(std::initializer_list<Xbyak::Reg64> used) {
    saved_.clear();
    for (const Xbyak::Reg64 &r : used) {
        if (!is_callee_saved(r)) continue;
        bool dup = false;
        for (const Xbyak::Reg64 &s : saved_) dup = dup || s.getIdx() == r.getIdx();
        if (dup) continue;
        push(r);
        saved_.push_back(r);
    }
}

void jit_generator_t::postamble() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) pop(*it);
    vzeroupper();
    ret();
}

void jit_generator_t::droppable_prefetcht1(const Xbyak::Address &addr) {
    droppable_.push_back(static_cast<std::uint32_t>(getSize()));
    prefetcht1(addr);
}

void jit_generator_t::emit_bytes(const std::uint8_t *bytes, std::size_t n) {
    if (n <= maxSize_ - size_) {
        std::memcpy(top_ + size_, bytes, n);
        setSize(size_ + n);
        return;
    }
    for (std::size_t i = 0; i < n; ++i) db(bytes[i]); // AutoGrow maps a larger buffer
}

std::size_t jit_generator_t::pool_add(const void *data, std::size_t bytes, std::size_t align) {
    std::string key(static_cast<const char *>(data), bytes);
    key += static_cast<char>(align);
    if (auto it = dedup_.find(key); it != dedup_.end()) return it->second;
    const std::size_t off = rnd_up(static_cast<dim_t>(pool_.size()), static_cast<dim_t>(align));
    pool_.resize(off + bytes);
    std::memcpy(pool_.data() + off, data, bytes);
    dedup_.emplace(std::move(key), off);
    return off;
}

Xbyak::Address jit_generator_t::vconst_u32(std::uint32_t bits) {
    const int vlen = vlen_of(isa_);
    std::uint32_t lanes[16];
    for (int i = 0; i < vlen / 4; ++i) lanes[i] = bits;
    const std::size_t off = pool_add(lanes, vlen, vlen);
    return ptr[rip + pool_label_ + static_cast<int>(off)];
}

Xbyak::Address jit_generator_t::vconst(float value) {
    std::uint32_t bits;
    std::memcpy(&bits, &value, 4);
    return vconst_u32(bits);
}

Xbyak::Address jit_generator_t::pool_data(const void *data, std::size_t bytes) {
    const std::size_t off = pool_add(data, bytes, 64);
    return ptr[rip + pool_label_ + static_cast<int>(off)];
}

void jit_generator_t::emit_pool() {
    // Even an empty pool gets its label bound, so a kernel may take its address.
    align(64);
    insn_size_ = getSize();
    L(pool_label_);
    for (std::uint8_t b : pool_) db(b);
}

status jit_generator_t::create(std::string &why) {
    const auto t0 = std::chrono::steady_clock::now();
    try {
        generate();
        emit_pool();
        readyRE();
    } catch (const Xbyak::Error &e) {
        why = cat(name_, ":", to_string(isa_), ": Xbyak error: ", e.what());
        return e == Xbyak::ERR_CANT_ALLOC ? status::out_of_memory : status::runtime_error;
    } catch (const std::bad_alloc &) {
        why = cat(name_, ":", to_string(isa_), ": out of memory while generating");
        return status::out_of_memory;
    } catch (const std::exception &e) {
        why = cat(name_, ":", to_string(isa_), ": ", e.what());
        return status::runtime_error;
    }
    gen_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    jit_on_created(*this);
    return status::success;
}

} // namespace blockdnn::impl
