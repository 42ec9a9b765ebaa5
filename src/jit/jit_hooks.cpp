// SPDX-License-Identifier: Apache-2.0
// The environment-driven hooks run for every generated kernel: verbose line, dump files and
// the perf map (see jit_hooks.hpp for the formats).
#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include <unistd.h>

#include "core/utils.hpp"
#include "core/verbose.hpp"
#include "jit/jit_dump.hpp"
#include "jit/jit_generator.hpp"
#include "jit/jit_hooks.hpp"

namespace blockdnn::impl {

namespace {

// unset, "" or "0": off; "1": on; anything else: off, with a warning naming it.
bool env_flag(const char *name) {
    const char *v = std::getenv(name);
    if (!v || !*v || std::strcmp(v, "0") == 0) return false;
    if (std::strcmp(v, "1") == 0) return true;
    warn(cat(name, "='", v, "' is not 0 or 1; it stays off"));
    return false;
}

void dump_hook(const jit_generator_t &k) {
    // A sequence number keeps two kernels of one name (say, two alphas) apart.
    static std::atomic<int> seq {0};
    const std::string stem = cat(k.name(), ".", to_string(k.isa_level()), ".", seq.fetch_add(1));
    std::vector<std::string> paths;
    std::string why;
    // A dump that fails must not fail the kernel: it is reported on the verbose channel, and
    // on stderr the first time when verbose output is off.
    if (dump_kernel(k, jit_dump_dir(), stem, dump_format::both, paths, why) == status::success) return;
    if (verbose_level()) {
        verbose_print(cat("blockdnn_verbose,warning,jit_dump,", why));
        return;
    }
    static std::once_flag once;
    std::call_once(once, [&] { warn(cat("BLOCKDNN_JIT_DUMP: ", why, " (later failures are not reported)")); });
}

void profile_hook(const jit_generator_t &k) {
    // perf reads "START SIZE symbol" lines in hex from /tmp/perf-<pid>.map (perf's
    // tools/perf/Documentation/jit-interface.txt). The file is opened once and appended to.
    static std::mutex m;
    static std::FILE *f = [] {
        const std::string path = cat("/tmp/perf-", static_cast<long>(getpid()), ".map");
        return std::fopen(path.c_str(), "a");
    }();
    if (!f) return;
    std::lock_guard<std::mutex> lock(m);
    std::fprintf(f, "%" PRIxPTR " %zx blockdnn:%s:%s\n", reinterpret_cast<std::uintptr_t>(k.code()), k.code_size(),
            k.name().c_str(), to_string(k.isa_level()));
    std::fflush(f);
}

} // namespace

bool jit_dump_enabled() {
    static const bool on = env_flag("BLOCKDNN_JIT_DUMP");
    return on;
}

const std::string &jit_dump_dir() {
    static const std::string dir = [] {
        const char *v = std::getenv("BLOCKDNN_JIT_DUMP_DIR");
        return std::string(v && *v ? v : ".");
    }();
    return dir;
}

bool jit_profile_enabled() {
    static const bool on = env_flag("BLOCKDNN_JIT_PROFILE");
    return on;
}

void jit_on_created(const jit_generator_t &k) {
    if (verbose_level())
        verbose_print(cat(
                "blockdnn_verbose,jit,", k.name(), ",", to_string(k.isa_level()), ",", k.code_size(), ",", k.gen_ms()));
    if (jit_dump_enabled()) dump_hook(k);
    if (jit_profile_enabled()) profile_hook(k);
}

} // namespace blockdnn::impl
