// SPDX-License-Identifier: Apache-2.0
// The machine section of blockdnn-bench: CPU, ISA and machine-model lines, the FMA peaks and
// copy bandwidth that % of peak divides by, and the reorder round-trip section (nchw <->
// nChw{16,8}c).
#pragma once

#include <cstdio>
#include <vector>

#include "driver/runner.hpp"

namespace bdrv {

/// Prints the CPU and ISA lines and the machine model the init_confs read.
void print_cpu(std::FILE *out);

/// Measures one core's FMA peak on zmm and ymm (testing/fma_peak.hpp, the ISAs the CPU has) and
/// the memcpy bandwidth of `threads` threads on 64 MiB.
machine_t measure_machine(int threads);

/// GB/s (read + write) of memcpy between two buffers of `bytes` / 2 each with the pool's
/// threads: the copy rate of data that size, in cache or not, that a memory-bound op's
/// GB/s is compared with. Measured once per size.
double copy_gbps_for(double bytes);

/// The reorder section: nchw -> nChw16c / nChw8c -> nchw of `dims` at every ISA level the
/// machine has, bit-exact round trips checked, GB/s beside memcpy. Returns the failures.
int reorder_report(std::FILE *out, const std::vector<long> &dims, int reps);

} // namespace bdrv
