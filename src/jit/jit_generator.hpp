// SPDX-License-Identifier: Apache-2.0
// The one base of every JIT kernel: an Xbyak::CodeGenerator with the System V ABI
// (preamble/postamble), a constant pool addressed RIP-relative, W^X code pages, direct
// encodings of the few VEX instructions a conv kernel repeats, and create(), which turns
// generation into a status and runs the verbose, dump and profile hooks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include <xbyak/xbyak.h>

#include "blockdnn/isa.hpp"
#include "blockdnn/status.hpp"

namespace blockdnn::impl {

/// Base of all kernels. A kernel derives from it, takes its conf in the constructor (and
/// nothing else), and emits code in generate(); the caller then calls create() once.
///
/// Code memory: Xbyak's AutoGrow buffer, read-write while generating; create() flips it to
/// read-execute (readyRE), so pages are never writable and executable at once. The memory is
/// freed by the destructor.
///
/// Constants: vconst() hands out a memory operand into a pool emitted after the code (in the
/// same read-only pages) and addressed RIP-relative, so kernels need no pointer register for
/// constants. Each entry is one full vector (vlen bytes, aligned), so it can be any
/// instruction's full-width memory source on either ISA.
class jit_generator_t : public Xbyak::CodeGenerator {
public:
    jit_generator_t(std::string name, isa level);
    ~jit_generator_t() override;
    jit_generator_t(const jit_generator_t &) = delete;
    jit_generator_t &operator=(const jit_generator_t &) = delete;

    /// Runs generate(), emits the constant pool and makes the code read-execute, measuring the
    /// time taken; then prints the BLOCKDNN_VERBOSE jit line, writes the BLOCKDNN_JIT_DUMP files
    /// and the BLOCKDNN_JIT_PROFILE perf-map entry. Returns success, or runtime_error (an Xbyak
    /// error, e.g. a bad operand combination) / out_of_memory with the reason in `why`.
    /// No exception leaves it. Call once.
    status create(std::string &why);

    /// Kernel name, e.g. "jit_eltwise_fwd_gelu_tanh"; with isa() it names dumps and perf symbols.
    const std::string &name() const { return name_; }
    isa isa_level() const { return isa_; }
    /// Entry point and bytes of code plus constant pool (valid after a successful create()).
    const std::uint8_t *code() const { return getCode(); }
    std::size_t code_size() const { return getSize(); }
    /// Bytes of instructions; the constant pool starts at this offset.
    std::size_t insn_size() const { return insn_size_; }
    /// Milliseconds create() took (generation, pool, protection change).
    double gen_ms() const { return gen_ms_; }
    /// The conf this kernel was generated from and its register assignment, one item per
    /// line; heads kernelgen's and BLOCKDNN_JIT_DUMP's disassembly.
    virtual std::string conf_str() const = 0;

    /// A pool entry holding `value` in every lane of one vector. Public so that injectors
    /// (code pieces appended into a host kernel) can place their constants in the host's pool.
    Xbyak::Address vconst(float value);
    /// A pool entry holding the bit pattern `bits` in every 32-bit lane of one vector.
    Xbyak::Address vconst_u32(std::uint32_t bits);
    /// A pool entry holding `bytes` raw bytes, aligned to 64 (lookup tables, tail masks).
    Xbyak::Address pool_data(const void *data, std::size_t bytes);

    /// Code offsets of the prefetches emitted by droppable_prefetcht1(), in emission order: the
    /// instructions a quiet copy of this kernel (jit_quiet_copy_t) turns into NOPs.
    const std::vector<std::uint32_t> &droppable_prefetches() const { return droppable_; }

    /// The entry point as a function pointer type.
    template <typename F>
    F entry() const {
        return reinterpret_cast<F>(const_cast<std::uint8_t *>(code()));
    }

protected:
    /// Emits the kernel. May throw Xbyak::Error; create() catches it.
    virtual void generate() = 0;

    /// Function entry: pushes the callee-saved registers (rbx, rbp, r12-r15) among `used`,
    /// the kernel's whole general-purpose register table. Other registers are ignored.
    void preamble(std::initializer_list<Xbyak::Reg64> used);
    /// Function exit: pops what preamble pushed, vzeroupper (leaves the upper vector state
    /// clean, so SSE code after the kernel pays no transition penalty), ret.
    void postamble();

    /// prefetcht1 [addr], recorded in droppable_prefetches(): a kernel that runs with and without
    /// some of its prefetches emits those this way and gets the quiet twin by copying (which
    /// needs code that refers only to itself, see jit_quiet_copy_t).
    void droppable_prefetcht1(const Xbyak::Address &addr);

    /// Appends `n` raw bytes to the code: one copy where the buffer has room, unlike Xbyak's
    /// db(), which checks the room byte by byte.
    void emit_bytes(const std::uint8_t *bytes, std::size_t n);

    /// vfmadd231ps x1, x2, x3; vbroadcastss x, [base + disp]; vmovups x, [base + disp] and
    /// vmovups [base + disp], x: the bytes Xbyak would emit, written here where VEX can name the
    /// registers (xmm or ymm 0-15, no EVEX attribute, a base below 16) and by Xbyak otherwise.
    /// An unrolled AVX2 conv kernel is nearly all these four, and Xbyak builds and walks a
    /// general operand for each, tens of times the cost of writing the bytes. Xbyak stays the
    /// encoder: these four forms are the one exception, and a test holds them to its bytes.
    void fast_vfmadd231ps(const Xbyak::Xmm &x1, const Xbyak::Xmm &x2, const Xbyak::Xmm &x3);
    void fast_vbroadcastss(const Xbyak::Xmm &x, const Xbyak::Reg64 &base, int disp);
    void fast_vmovups(const Xbyak::Xmm &x, const Xbyak::Reg64 &base, int disp);
    void fast_vmovups(const Xbyak::Reg64 &base, int disp, const Xbyak::Xmm &x);

    /// The first System V integer argument (a pointer to the kernel's call_args_t).
    const Xbyak::Reg64 abi_param1 = rdi;

private:
    // Appends a VEX instruction (W0) with register x in ModRM.reg, no second source and the
    // memory operand [base + disp], where VEX can name x and base; else returns false and
    // appends nothing, for the caller to hand the instruction to Xbyak.
    bool vex_base_disp(int map, int pp, std::uint8_t opcode, const Xbyak::Xmm &x, const Xbyak::Reg64 &base, int disp);
    std::size_t pool_add(const void *data, std::size_t bytes, std::size_t align);
    void emit_pool();

    std::string name_;
    isa isa_;
    std::vector<Xbyak::Reg64> saved_;          // pushed by preamble, in push order
    std::vector<std::uint8_t> pool_;           // bytes of the constant pool
    std::map<std::string, std::size_t> dedup_; // pool bytes -> offset, so equal entries share
    Xbyak::Label pool_label_;
    std::vector<std::uint32_t> droppable_; // code offsets, see droppable_prefetches()
    std::size_t insn_size_ = 0;
    double gen_ms_ = 0;
};

} // namespace blockdnn::impl
