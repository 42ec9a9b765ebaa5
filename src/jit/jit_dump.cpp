// SPDX-License-Identifier: Apache-2.0
// Kernel dumps: the disassembly (Zydis, when the build has it) and the files kernelgen and
// BLOCKDNN_JIT_DUMP write.
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#if BLOCKDNN_HAVE_ZYDIS
#include <Zydis/Zydis.h>
#endif

#include "core/utils.hpp"
#include "jit/jit_dump.hpp"
#include "jit/jit_generator.hpp"

namespace blockdnn::impl {

namespace {

std::string hex(std::uint64_t v, int width) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%0*" PRIx64, width, v);
    return buf;
}

// Pool word at byte offset `off` as "0x3f000000 (0.5)".
std::string pool_word(const std::uint8_t *pool, std::size_t pool_bytes, std::size_t off) {
    if (off + 4 > pool_bytes) return "";
    std::uint32_t u;
    float f;
    std::memcpy(&u, pool + off, 4);
    std::memcpy(&f, pool + off, 4);
    char buf[64];
    std::snprintf(buf, sizeof buf, "0x%08" PRIx32 " (%.9g)", u, static_cast<double>(f));
    return buf;
}

void append_header(std::ostringstream &os, const jit_generator_t &k) {
    os << "; kernel: " << k.name() << "\n";
    os << "; isa: " << to_string(k.isa_level()) << "\n";
    os << "; code: " << k.insn_size() << " bytes of instructions, " << k.code_size() - k.insn_size()
       << " bytes of constant pool at +0x" << hex(k.insn_size(), 4) << "\n";
    std::istringstream conf(k.conf_str());
    for (std::string line; std::getline(conf, line);) os << "; " << line << "\n";
}

void append_pool(std::ostringstream &os, const jit_generator_t &k) {
    const std::uint8_t *pool = k.code() + k.insn_size();
    const std::size_t n = k.code_size() - k.insn_size();
    if (n == 0) return;
    os << "; constant pool\n";
    // One line per 16 bytes; runs of identical lines (a broadcast entry) print once.
    std::string prev;
    for (std::size_t off = 0; off < n; off += 16) {
        std::string words;
        for (std::size_t w = off; w < off + 16 && w + 4 <= n; w += 4) {
            words += ' ';
            words.append(pool_word(pool, n, w), 0, 10);
        }
        if (words == prev) continue;
        prev = words;
        os << hex(k.insn_size() + off, 4) << ":" << words << "    ; " << pool_word(pool, n, off) << "\n";
    }
}

} // namespace

#if BLOCKDNN_HAVE_ZYDIS

bool have_disassembler() { return true; }

std::string disassemble(const jit_generator_t &k) {
    std::ostringstream os;
    append_header(os, k);
    ZydisDecoder dec;
    ZydisFormatter fmt;
    ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
    ZydisFormatterInit(&fmt, ZYDIS_FORMATTER_STYLE_INTEL);
    // Print "dword ptr" etc. on every memory operand, as objdump does, so text matches exactly.
    ZydisFormatterSetProperty(&fmt, ZYDIS_FORMATTER_PROP_FORCE_SIZE, ZYAN_TRUE);
    const std::uint8_t *code = k.code();
    const std::size_t n = k.insn_size();
    const std::uint8_t *pool = code + n;
    const std::size_t pool_bytes = k.code_size() - n;
    ZydisDecodedInstruction insn;
    ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
    for (std::size_t off = 0; off < n;) {
        if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, code + off, n - off, &insn, ops))) {
            os << hex(off, 4) << ": " << hex(code[off], 2) << "    (undecodable byte)\n";
            ++off;
            continue;
        }
        char text[256];
        ZydisFormatterFormatInstruction(&fmt, &insn, ops, insn.operand_count_visible, text, sizeof text, off, nullptr);
        std::string bytes;
        for (int b = 0; b < insn.length; ++b) bytes += hex(code[off + b], 2) + " ";
        bytes.resize(std::max<std::size_t>(bytes.size(), 33), ' ');
        os << hex(off, 4) << ": " << bytes << text;
        // Name the constant a RIP-relative operand reads.
        for (int i = 0; i < insn.operand_count_visible; ++i) {
            const ZydisDecodedOperand &o = ops[i];
            if (o.type != ZYDIS_OPERAND_TYPE_MEMORY || o.mem.base != ZYDIS_REGISTER_RIP) continue;
            const std::int64_t target = static_cast<std::int64_t>(off + insn.length) + o.mem.disp.value;
            if (target >= static_cast<std::int64_t>(n))
                os << "    ; pool+0x" << hex(target - n, 2) << " = " << pool_word(pool, pool_bytes, target - n);
        }
        os << "\n";
        off += insn.length;
    }
    append_pool(os, k);
    return os.str();
}

#else

bool have_disassembler() { return false; }

std::string disassemble(const jit_generator_t &k) {
    std::ostringstream os;
    append_header(os, k);
    os << "; built without Zydis (libzydis-dev): disassemble the .bin with\n"
       << ";   objdump -D -b binary -mi386:x86-64 -M intel --stop-address=0x" << hex(k.insn_size(), 4)
       << " <file>.bin\n";
    append_pool(os, k);
    return os.str();
}

#endif

status dump_kernel(const jit_generator_t &k, const std::string &dir, const std::string &stem, dump_format fmt,
        std::vector<std::string> &paths, std::string &why) {
    const std::string base = (dir.empty() ? std::string(".") : dir) + "/" + stem;
    auto write = [&](const std::string &path, const char *data, std::size_t size) {
        std::ofstream f(path, std::ios::binary | std::ios::trunc);
        if (f) f.write(data, static_cast<std::streamsize>(size));
        if (!f) {
            why = cat("cannot write ", path, ": ", std::strerror(errno));
            return false;
        }
        paths.push_back(path);
        return true;
    };
    if (fmt == dump_format::bin || fmt == dump_format::both) {
        if (!write(base + ".bin", reinterpret_cast<const char *>(k.code()), k.code_size()))
            return status::runtime_error;
    }
    if (fmt == dump_format::asm_text || fmt == dump_format::both) {
        const std::string text = disassemble(k);
        if (!write(base + ".asm", text.data(), text.size())) return status::runtime_error;
    }
    return status::success;
}

} // namespace blockdnn::impl
