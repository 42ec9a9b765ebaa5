// SPDX-License-Identifier: Apache-2.0
// A tiny program for the environment-mode tests: the variables (BLOCKDNN_VERBOSE,
// BLOCKDNN_JIT_DUMP, BLOCKDNN_JIT_PROFILE, BLOCKDNN_KERNEL_CACHE_CAPACITY, BLOCKDNN_DENORMALS)
// are read once per process, so each mode is tested in a fresh process running this.
// Usage: jit_env_child ALG N   -> creates eltwise_fwd(ALG, 0.25, 0.75, x:N) twice, runs each
// once, prints "pid <pid>" and "impl <name>"; on blockdnn::error prints "error <what>", exits 2.
//        jit_env_child rnn T   -> the same with an LSTM rnn_fwd (t T, mb 2, 5 -> 7 channels).
//        jit_env_child bnorm C -> batch normalization of 2 x C x 5 x 5 in nChw16c: forward
// training then backward (scale and shift), each created twice and run once, same output.
//        jit_env_child tensor N -> allocates a tensor of N floats, writes and reads every one,
// prints "offset_in_2m <data address mod 2 MiB>" (BLOCKDNN_HUGE_PAGES).
//        jit_env_child denormals N -> eltwise linear with alpha = 2^-70 on N values of 2^-70,
// prints "mode <flush|keep>" and "result <dst[0] in %a>" (BLOCKDNN_DENORMALS).
#include <cmath>
#include <cstdint>
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
        if (std::string(argv[1]) == "rnn") {
            rnn_desc rd;
            rd.t = std::atol(argv[2]), rd.mb = 2, rd.slc = 5, rd.dhc = 7;
            for (int rep = 0; rep < 2; ++rep) {
                const rnn_fwd op(rd);
                const tensor src(op.src_layer_desc()), wl(op.weights_layer_desc()), wi(op.weights_iter_desc()),
                        dst(op.dst_layer_desc());
                op.execute({.src_layer = src, .weights_layer = wl, .weights_iter = wi, .dst_layer = dst});
                std::printf("impl %s\n", op.impl_name());
            }
            return 0;
        }
        if (std::string(argv[1]) == "tensor") {
            const tensor t(tensor_desc({std::atol(argv[2])}, format_tag::x));
            double sum = 0;
            for (dim_t i = 0; i < t.desc().nelems(); ++i) t.f32()[i] = 1.f;
            for (dim_t i = 0; i < t.desc().nelems(); ++i) sum += t.f32()[i];
            if (sum != static_cast<double>(t.desc().nelems())) return 3;
            std::printf("offset_in_2m %lu\n",
                    static_cast<unsigned long>(reinterpret_cast<std::uintptr_t>(t.f32()) % (2u << 20)));
            return 0;
        }
        if (std::string(argv[1]) == "denormals") {
            // 2^-70 * 2^-70 = 2^-140 is exact only as a denormal: flush makes it 0.
            const float tiny = std::ldexp(1.f, -70);
            const tensor_desc d({std::atol(argv[2])}, format_tag::x);
            const tensor t(d);
            for (dim_t i = 0; i < d.nelems(); ++i) t.f32()[i] = tiny;
            const eltwise_fwd op(eltwise_alg::linear, tiny, 0.f, d);
            op.execute(t, t);
            std::printf("mode %s\nresult %a\n", to_string(get_denormals_mode()), static_cast<double>(t.f32()[0]));
            return 0;
        }
        if (std::string(argv[1]) == "bnorm") {
            const dim_t c = std::atol(argv[2]);
            const tensor_desc d({2, c, 5, 5}, format_tag::nChw16c), cd({c}, format_tag::x);
            const tensor src(d), dst(d), ddst(d), dsrc(d), mean(cd), var(cd), scale(cd), shift(cd), ds(cd), dh(cd);
            for (dim_t i = 0; i < d.nelems_padded(); ++i)
                src.f32()[i] = ddst.f32()[i] = 0.01f * static_cast<float>(i % 97);
            for (dim_t i = 0; i < c; ++i) scale.f32()[i] = 1.f;
            const bnorm_flags f = bnorm_flags::use_scale | bnorm_flags::use_shift;
            for (int rep = 0; rep < 2; ++rep) {
                const bnorm_fwd fwd({bnorm_mode::training, d, {}, 1e-5f, f});
                fwd.execute({src, dst, mean, var, scale, shift});
                const bnorm_bwd bwd({d, {}, {}, 1e-5f, f, false});
                bwd.execute({src, ddst, dsrc, mean, var, scale, {}, ds, dh});
                std::printf("impl %s %s\n", fwd.impl_name(), bwd.impl_name());
            }
            return 0;
        }
        const tensor_desc d({std::atol(argv[2])}, format_tag::x);
        const tensor src(d), dst(d);
        for (dim_t i = 0; i < d.nelems(); ++i) src.f32()[i] = 0.01f * static_cast<float>(i) + 0.5f;
        for (int rep = 0; rep < 2; ++rep) {
            const eltwise_fwd op(eltwise_alg_from_string(argv[1]), 0.25f, 0.75f, d);
            op.execute(src, dst);
            std::printf("impl %s\n", op.impl_name());
        }
    } catch (const error &e) {
        std::printf("error %s\n", e.what());
        return 2;
    }
    return 0;
}
