// SPDX-License-Identifier: Apache-2.0
// Kernel dumps: raw code bytes and a disassembly headed by the kernel's conf. The one code path
// behind both tools/kernelgen and BLOCKDNN_JIT_DUMP.
#pragma once

#include <string>
#include <vector>

#include "blockdnn/status.hpp"

namespace blockdnn::impl {

class jit_generator_t;

enum class dump_format { asm_text, bin, both };

/// True if the library was built with a disassembler (Zydis). Without one, disassemble()
/// gives the header and a note on disassembling the .bin with objdump.
bool have_disassembler();

/// Text of the kernel: a header of `;` comment lines (name, ISA, code and pool bytes, then
/// every line of conf_str()), one line per instruction (offset, bytes, Intel syntax, made by
/// Zydis with explicit operand sizes), then the constant pool as 32-bit words.
std::string disassemble(const jit_generator_t &k);

/// Writes `dir/stem.bin` (code and pool, as executed) and/or `dir/stem.asm` (disassemble()),
/// appending the paths written to `paths`. Returns runtime_error with the path and reason in
/// `why` if a file cannot be written.
status dump_kernel(const jit_generator_t &k, const std::string &dir, const std::string &stem, dump_format fmt,
        std::vector<std::string> &paths, std::string &why);

} // namespace blockdnn::impl
