// SPDX-License-Identifier: Apache-2.0
// Instruction-set levels, CPU detection (through cpuinfo) and the max-ISA cap.
#pragma once

#include <string>
#include <string_view>

namespace blockdnn {

/// Instruction-set levels, lowest first. Every implementation names the lowest level it needs;
/// dispatch takes the best implementation whose level is within both the CPU and the cap.
enum class isa {
    scalar = 0,      ///< plain C++ (also what `ref` implementations need)
    avx2 = 1,        ///< AVX2 + FMA3, 16 ymm registers
    avx512_core = 2, ///< AVX-512 F + BW + DQ + VL, 32 zmm registers and opmasks
};

/// "scalar", "avx2" or "avx512_core".
const char *to_string(isa i);

/// Parses an ISA name, case-insensitively: "scalar", "avx2", "avx512_core" (or "avx512").
/// Throws `blockdnn::error` (invalid_arguments) naming the string and the accepted names.
isa isa_from_string(std::string_view name);

/// What cpuinfo reports about this machine (the caches from Linux where cpuinfo reads none).
/// Filled once, on first use.
struct cpu_features {
    std::string name; ///< processor name, e.g. "AMD EPYC 9R45" (may be empty)
    bool avx2 = false, fma = false;
    bool avx512f = false, avx512bw = false, avx512dq = false, avx512vl = false;
    bool avx512_vnni = false, avx512_bf16 = false; ///< reported for later int8/bf16 kernels
    int physical_cores = 1;                        ///< cores (not SMT threads)
    int logical_processors = 1;
    /// Per-core L1d and L2, and the L3 as the CPU reports it (a VM may report its host's):
    /// cpuinfo's, or Linux's (sysfs) where cpuinfo reads none; 0 if unknown.
    long l1d_bytes = 0, l2_bytes = 0, l3_bytes = 0;
    /// Logical processors that share one L3 (cpuinfo's count, or Linux's shared_cpu_list); 0 if
    /// unknown. A CPU with several L3s (chiplets, sockets) has l3_bytes in each.
    int l3_processors = 0;
};

/// The features of this CPU.
const cpu_features &cpu();

/// The best ISA level this CPU supports, regardless of any cap.
isa detected_isa();

/// Caps dispatch at `max` (for tests and for comparing paths on one machine). Takes
/// precedence over `BLOCKDNN_MAX_ISA`. Affects objects created afterwards; thread-safe.
/// Throws `blockdnn::error` (invalid_arguments) if max is not an isa value.
void set_max_isa(isa max);

/// Forgets a cap set with `set_max_isa`, so `BLOCKDNN_MAX_ISA` (or no cap) applies again.
void reset_max_isa();

/// The cap in force: the one from `set_max_isa`, else `BLOCKDNN_MAX_ISA`, else the highest
/// level. Throws `blockdnn::error` (invalid_arguments) if `BLOCKDNN_MAX_ISA` holds an unknown name.
isa max_isa();

/// min(detected_isa(), max_isa()): the level dispatch uses. Throws as `max_isa` does.
isa effective_isa();

/// True if implementations needing `level` may run: the CPU has it and the cap allows it.
bool isa_usable(isa level);

} // namespace blockdnn
