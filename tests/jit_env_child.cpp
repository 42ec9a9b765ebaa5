// SPDX-License-Identifier: Apache-2.0
// A tiny program for the environment-mode tests: the variables (BLOCKDNN_VERBOSE,
// BLOCKDNN_JIT_DUMP, BLOCKDNN_JIT_PROFILE, BLOCKDNN_KERNEL_CACHE_CAPACITY) are read once per
// process, so each mode is tested in a fresh process running this.
// Usage: jit_env_child ALG N   -> creates eltwise_fwd(ALG, 0.25, 0.75, x:N) twice, runs each
// once, prints "pid <pid>" and "impl <name>"; on blockdnn::error prints "error <what>", exits 2.
#include <cstdio>
#include <cstdlib>
#include <string>

#include <unistd.h>

#include "blockdnn/blockdnn.hpp"

using namespace blockdnn;

int main(int argc, char **argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s ALG N\n", argv[0]);
        return 1;
    }
    std::printf("pid %ld\n", static_cast<long>(getpid()));
    std::fflush(stdout);
    try {
        const tensor_desc d({std::atol(argv[2])}, format_tag::x);
        const tensor src(d), dst(d);
        for (dim_t i = 0; i < d.nelems(); ++i) src.f32()[i] = 0.01f * static_cast<float>(i) + 0.5f;
        for (int rep = 0; rep < 2; ++rep) {
            const eltwise_fwd op(eltwise_alg_from_string(argv[1]), 0.25f, 0.75f, d);
            op.execute(src, dst);
            std::printf("impl %s\n", op.impl_name().c_str());
        }
    } catch (const error &e) {
        std::printf("error %s\n", e.what());
        return 2;
    }
    return 0;
}
