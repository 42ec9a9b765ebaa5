// SPDX-License-Identifier: Apache-2.0
// Cache sizes as Linux describes them, for CPUs whose caches the cpuinfo in use cannot read,
// where the machine model would keep its reference sizes (docs/tuning.md, "The machine
// model's caches when cpuinfo reads none").
#pragma once

#include <string>

namespace blockdnn::impl {

/// Bytes of one L1 data cache, one L2 and one L3 of a CPU, and how many logical processors
/// share that L3; 0 where unknown.
struct cache_sizes_t {
    long l1d_bytes = 0, l2_bytes = 0, l3_bytes = 0;
    int l3_processors = 0;
};

/// The caches Linux lists for one CPU under `dir` (/sys/devices/system/cpu/cpu0/cache): each
/// indexN/ holds `level` (1, 2, 3), `type` (Data, Instruction, Unified) and `size` (a count of
/// bytes with an optional K, M or G suffix: "48K"). L1 counts its Data or Unified cache, L2 and
/// L3 theirs; the L3's `shared_cpu_list` ("0-7,64-71") counts its processors. A level with no
/// such entry, or whose files are missing or do not parse, stays 0; a missing `dir` gives all
/// 0. Never throws.
cache_sizes_t read_sysfs_caches(const std::string &dir);

} // namespace blockdnn::impl
