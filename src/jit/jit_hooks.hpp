// SPDX-License-Identifier: Apache-2.0
// What happens when a kernel has been generated, driven by environment variables:
//   BLOCKDNN_VERBOSE=1      blockdnn_verbose,jit,<kernel name>,<isa>,<code bytes>,<gen_ms>
//   BLOCKDNN_JIT_DUMP=1     <name>.<isa>.<seq>.bin and .asm in BLOCKDNN_JIT_DUMP_DIR (default ".")
//   BLOCKDNN_JIT_PROFILE=1  "<start> <size> blockdnn:<name>:<isa>" in /tmp/perf-<pid>.map
// Each variable is read once per process.
#pragma once

#include <string>

namespace blockdnn::impl {

class jit_generator_t;

/// Runs the hooks above for a kernel that create() has just finished.
void jit_on_created(const jit_generator_t &k);

/// True if BLOCKDNN_JIT_DUMP is set to a non-empty value other than "0".
bool jit_dump_enabled();
/// The dump directory: BLOCKDNN_JIT_DUMP_DIR, or "." if unset.
const std::string &jit_dump_dir();
/// True if BLOCKDNN_JIT_PROFILE is set to a non-empty value other than "0".
bool jit_profile_enabled();

} // namespace blockdnn::impl
