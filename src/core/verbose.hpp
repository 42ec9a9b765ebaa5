// SPDX-License-Identifier: Apache-2.0
// BLOCKDNN_VERBOSE: one comma-separated line per executed op (level 1) and, at level 2
// ("dispatch"), one line per implementation the dispatcher skipped, with the reason.
//   blockdnn_verbose,exec,<op>,<impl>,<isa>,<problem>,<time_ms>
//   blockdnn_verbose,dispatch,<op>,<impl>,<problem>,<reason>
#pragma once

#include <chrono>
#include <string>

namespace blockdnn::impl {

/// 0 (off), 1 (exec lines) or 2 (also dispatch reasons). Read from BLOCKDNN_VERBOSE once:
/// unset, "" or "0", "1", "2", or "dispatch" for 2. Anything else counts as 0, with a warning
/// on stderr naming the value.
int verbose_level();

/// Writes "blockdnn: warning: <what>" and a newline to stderr, whole, under a lock: for
/// problems of diagnostic settings (BLOCKDNN_VERBOSE, BLOCKDNN_JIT_DUMP) that must not fail ops.
void warn(const std::string &what);

/// Writes one line (a trailing newline is added) to stdout, whole, under a lock.
void verbose_print(const std::string &line);

/// Milliseconds since an arbitrary epoch, for exec lines.
inline double now_ms() {
    using namespace std::chrono;
    return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

} // namespace blockdnn::impl
