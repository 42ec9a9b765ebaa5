// SPDX-License-Identifier: Apache-2.0
// The denormals mode in force: the API's choice, else BLOCKDNN_DENORMALS, else flush. How ops
// apply it is src/core/fp_env.hpp's.
#include "blockdnn/denormals.hpp"

#include <atomic>
#include <cstdlib>
#include <string>

#include "blockdnn/status.hpp"
#include "core/utils.hpp"

namespace blockdnn {

namespace {

// -1: no mode set through the API.
std::atomic<int> api_mode {-1};

struct denormals_env_t {
    denormals_mode mode = denormals_mode::flush;
    std::string error; // a value that is not flush or keep
};

const denormals_env_t &denormals_env() {
    static const denormals_env_t env = [] {
        denormals_env_t e;
        const char *v = std::getenv("BLOCKDNN_DENORMALS");
        if (!v || !*v || std::string(v) == "flush") return e;
        if (std::string(v) == "keep") e.mode = denormals_mode::keep;
        else e.error = impl::cat("BLOCKDNN_DENORMALS: '", v, "' is not flush or keep");
        return e;
    }();
    return env;
}

} // namespace

const char *to_string(denormals_mode m) { return m == denormals_mode::keep ? "keep" : "flush"; }

void set_denormals_mode(denormals_mode m) {
    const int v = static_cast<int>(m);
    if (m != denormals_mode::flush && m != denormals_mode::keep)
        impl::fail(
                status::invalid_arguments, "set_denormals_mode: mode = ", v, " is not a denormals_mode (flush, keep)");
    api_mode.store(v, std::memory_order_relaxed);
}

void reset_denormals_mode() { api_mode.store(-1, std::memory_order_relaxed); }

denormals_mode get_denormals_mode() {
    const int v = api_mode.load(std::memory_order_relaxed);
    if (v >= 0) return static_cast<denormals_mode>(v);
    const denormals_env_t &env = denormals_env();
    if (!env.error.empty()) impl::fail(status::invalid_arguments, env.error);
    return env.mode;
}

} // namespace blockdnn
