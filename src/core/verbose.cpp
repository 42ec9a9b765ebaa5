// SPDX-License-Identifier: Apache-2.0
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "core/verbose.hpp"

namespace blockdnn::impl {

int verbose_level() {
    static const int level = [] {
        const char *env = std::getenv("BLOCKDNN_VERBOSE");
        if (!env || !*env || std::strcmp(env, "0") == 0) return 0;
        if (std::strcmp(env, "dispatch") == 0 || std::strcmp(env, "2") == 0) return 2;
        if (std::strcmp(env, "1") == 0) return 1;
        // A diagnostic switch must not fail the ops it watches; say so once instead.
        warn(std::string("BLOCKDNN_VERBOSE='") + env + "' is not 0, 1, 2 or dispatch; verbose output is off");
        return 0;
    }();
    return level;
}

void warn(const std::string &what) {
    static std::mutex m;
    std::lock_guard<std::mutex> lock(m);
    std::fprintf(stderr, "blockdnn: warning: %s\n", what.c_str());
    std::fflush(stderr);
}

void verbose_print(const std::string &line) {
    static std::mutex m;
    std::lock_guard<std::mutex> lock(m);
    std::fwrite(line.data(), 1, line.size(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
}

} // namespace blockdnn::impl
