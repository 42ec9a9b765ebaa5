// SPDX-License-Identifier: Apache-2.0
// jit_generator_t: ABI prologue/epilogue, the constant pool, direct VEX encodings, create()
// and its hooks.
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

// A vector register VEX can name: xmm or ymm 0-15, with no mask, zeroing or rounding.
bool vex_names(const Xbyak::Xmm &x) { return (x.isXMM() || x.isYMM()) && !x.hasEvex() && !x.hasZero(); }

// VEX's opcode maps and implied prefixes, as its fields encode them.
constexpr int map_0f = 1, map_0f38 = 2;
constexpr int pp_none = 0, pp_66 = 1;

// Appends to `code` the VEX prefix (W0) of an instruction whose ModRM.reg holds register r,
// ModRM.rm register or base b (no index), and second source v (0 where there is none, which
// VEX writes as 1111): the two-byte form where it can say all of that (map 0F and b below 8),
// as Xbyak chooses, else the three-byte form.
std::size_t put_vex(std::uint8_t *code, int map, int pp, int r, int b, int v, bool ymm) {
    const int rvlp = (r & 8 ? 0 : 0x80) | (~v & 15) << 3 | (ymm ? 4 : 0) | pp;
    if (map == map_0f && !(b & 8)) {
        code[0] = 0xc5;
        code[1] = static_cast<std::uint8_t>(rvlp);
        return 2;
    }
    code[0] = 0xc4;
    code[1] = static_cast<std::uint8_t>((r & 8 ? 0 : 0x80) | 0x40 | (b & 8 ? 0 : 0x20) | map);
    code[2] = static_cast<std::uint8_t>(rvlp & 0x7f);
    return 3;
}

// Appends to `code` ModRM (and SIB and displacement) for register r and the memory operand
// [b + disp], b a 64-bit register: no displacement where it is 0, unless b is rbp or r13 (whose
// mod 00 means something else); one signed byte where it fits; else four.
std::size_t put_modrm_base_disp(std::uint8_t *code, int r, int b, int disp) {
    const int mod = disp == 0 && (b & 7) != 5 ? 0 : disp >= -128 && disp <= 127 ? 1 : 2;
    std::size_t n = 0;
    code[n++] = static_cast<std::uint8_t>(mod << 6 | (r & 7) << 3 | (b & 7));
    if ((b & 7) == 4) code[n++] = 0x24; // rsp and r12 as a base need a SIB byte, with no index
    if (mod == 1) code[n++] = static_cast<std::uint8_t>(disp);
    if (mod == 2)
        for (int i = 0; i < 4; ++i) code[n++] = static_cast<std::uint8_t>(static_cast<std::uint32_t>(disp) >> (8 * i));
    return n;
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

void jit_generator_t::fast_vfmadd231ps(const Xbyak::Xmm &x1, const Xbyak::Xmm &x2, const Xbyak::Xmm &x3) {
    const bool same_kind = x1.getKind() == x2.getKind() && x1.getKind() == x3.getKind();
    if (!same_kind || !vex_names(x1) || !vex_names(x2) || !vex_names(x3)) {
        vfmadd231ps(x1, x2, x3);
        return;
    }
    std::uint8_t code[5];
    const int r = x1.getIdx(), b = x3.getIdx();
    std::size_t n = put_vex(code, map_0f38, pp_66, r, b, x2.getIdx(), x1.isYMM());
    code[n++] = 0xb8;
    code[n++] = static_cast<std::uint8_t>(0xc0 | (r & 7) << 3 | (b & 7));
    emit_bytes(code, n);
}

void jit_generator_t::fast_vbroadcastss(const Xbyak::Xmm &x, const Xbyak::Reg64 &base, int disp) {
    if (!vex_base_disp(map_0f38, pp_66, 0x18, x, base, disp)) vbroadcastss(x, ptr[base + disp]);
}

void jit_generator_t::fast_vmovups(const Xbyak::Xmm &x, const Xbyak::Reg64 &base, int disp) {
    if (!vex_base_disp(map_0f, pp_none, 0x10, x, base, disp)) vmovups(x, ptr[base + disp]);
}

void jit_generator_t::fast_vmovups(const Xbyak::Reg64 &base, int disp, const Xbyak::Xmm &x) {
    if (!vex_base_disp(map_0f, pp_none, 0x11, x, base, disp)) vmovups(ptr[base + disp], x);
}

bool jit_generator_t::vex_base_disp(
        int map, int pp, std::uint8_t opcode, const Xbyak::Xmm &x, const Xbyak::Reg64 &base, int disp) {
    if (!vex_names(x) || base.getIdx() >= 16) return false;
    std::uint8_t code[11];
    const int r = x.getIdx(), b = base.getIdx();
    std::size_t n = put_vex(code, map, pp, r, b, 0, x.isYMM());
    code[n++] = opcode;
    n += put_modrm_base_disp(code + n, r, b, disp);
    emit_bytes(code, n);
    return true;
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
