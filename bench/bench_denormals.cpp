// SPDX-License-Identifier: Apache-2.0
// What denormal weights cost: each op twice in one binary, with weights of ordinary size and
// with every weight a denormal (1e-39, as a trained model's underflowed weights), on one thread.
//   <op>/<isa>/normal_weights     weights drawn from [-0.05, 0.05)
//   <op>/<isa>/denormal_weights   every weight +-1e-39 (eltwise, which has no weights: every input)
// ops: conv (ResNet-50's res2a_branch2b, mb 1: 64 -> 64, 3x3 on 56x56), inner_product (its fc,
// mb 16: 2048 -> 1000), bnorm_inference and bnorm_training (mb 1, 64 x 56 x 56, nChw16c; the
// scale is the weight), lstm (t 10, mb 16, 256 -> 256), eltwise_tanh (64K floats).
// Under the default denormals mode (flush) a denormal_weights row should take the time of its
// twin; BLOCKDNN_DENORMALS=keep shows what the core's denormal handling costs without it.
// Compare twins run interleaved and repeated, e.g.
//   bench_denormals --benchmark_repetitions=5 --benchmark_enable_random_interleaving=true
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <random>
#include <string>

#include <benchmark/benchmark.h>

#include "bench_common.hpp"
#include "blockdnn/blockdnn.hpp"

using namespace blockdnn;

namespace {

enum class weights_kind { normal, denormal };

// Seeded values: uniform in [-0.05, 0.05), or +-1e-39 with random signs.
void fill(const tensor &t, weights_kind kind, unsigned seed) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> u(-0.05f, 0.05f);
    const dim_t n = t.desc().nelems_padded();
    for (dim_t i = 0; i < n; ++i) {
        const float x = u(gen);
        t.f32()[i] = kind == weights_kind::normal ? x : std::copysign(1e-39f, x);
    }
}

tensor filled(const tensor_desc &d, weights_kind kind, unsigned seed) {
    const tensor t(d);
    fill(t, kind, seed);
    return t;
}

/// One op with its tensors: run() executes it once.
using run_fn = std::function<void()>;

run_fn make_conv(weights_kind w) {
    conv_desc d;
    d.ic = d.oc = 64, d.ih = d.iw = 56, d.kh = d.kw = 3, d.ph = d.pw = d.ph_r = d.pw_r = 1;
    d.with_bias = true;
    d.infer_dst_dims();
    const tensor wei = filled(tensor_desc(d.wei_dims(false), format_tag::oihw), w, 1);
    const tensor bia = filled(tensor_desc(d.bia_dims(), format_tag::x), weights_kind::normal, 2);
    auto op = std::make_shared<conv_fwd>(d, format_tag::nChw16c, wei, bia, format_tag::nChw16c);
    const tensor src = filled(op->src_desc(), weights_kind::normal, 3), dst(op->dst_desc());
    return [=] { op->execute(src, dst); };
}

run_fn make_ip(weights_kind w) {
    inner_product_desc d;
    d.mb = 16, d.ic = 2048, d.oc = 1000, d.with_bias = true;
    const tensor wei = filled(tensor_desc(d.wei_dims(), format_tag::oi), w, 1);
    const tensor bia = filled(tensor_desc(d.bia_dims(), format_tag::x), weights_kind::normal, 2);
    auto op = std::make_shared<inner_product_fwd>(d, format_tag::nc, wei, bia);
    const tensor src = filled(tensor_desc(d.src_dims(), format_tag::nc), weights_kind::normal, 3);
    const tensor dst(tensor_desc(d.dst_dims(), format_tag::nc));
    return [=] { op->execute(src, dst); };
}

run_fn make_bnorm(weights_kind w, bnorm_mode mode) {
    const tensor_desc sd({1, 64, 56, 56}, format_tag::nChw16c), cd({64}, format_tag::x);
    auto op = std::make_shared<bnorm_fwd>(
            bnorm_desc {mode, sd, {}, 1e-5f, bnorm_flags::use_scale | bnorm_flags::use_shift});
    const tensor src = filled(sd, weights_kind::normal, 3), dst(sd);
    const tensor mean = filled(cd, weights_kind::normal, 4), var(cd), scale = filled(cd, w, 1);
    const tensor shift = filled(cd, weights_kind::normal, 2);
    for (dim_t c = 0; c < 64; ++c) var.f32()[c] = 1.f;
    return [=] { op->execute({src, dst, mean, var, scale, shift}); };
}

run_fn make_lstm(weights_kind w) {
    rnn_desc d;
    d.cell = rnn_cell::lstm, d.t = 10, d.mb = 16, d.slc = d.dhc = 256;
    const tensor wl = filled(rnn_fwd(d).weights_layer_desc(), w, 1);
    const tensor wi = filled(rnn_fwd(d).weights_iter_desc(), w, 5);
    auto op = std::make_shared<rnn_fwd>(d, wl, wi);
    const tensor src = filled(op->src_layer_desc(), weights_kind::normal, 3), dst(op->dst_layer_desc());
    return [=] { op->execute({.src_layer = src, .dst_layer = dst}); };
}

run_fn make_tanh(weights_kind w) {
    const tensor_desc d({64 * 1024}, format_tag::x);
    auto op = std::make_shared<eltwise_fwd>(eltwise_alg::tanh, 0.f, 0.f, d);
    const tensor src = filled(d, w, 1), dst(d);
    return [=] { op->execute(src, dst); };
}

void bm_op(benchmark::State &state, isa level, const std::function<run_fn(weights_kind)> &make, weights_kind w) {
    if (detected_isa() < level) {
        state.SkipWithError((std::string(to_string(level)) + " not on this CPU").c_str());
        return;
    }
    set_num_threads(1);
    set_max_isa(level);
    const run_fn run = make(w);
    run(); // JIT, first touch
    for (auto _ : state) {
        run();
        benchmark::ClobberMemory();
    }
    state.SetLabel(std::string("denormals ") + to_string(get_denormals_mode()));
    reset_max_isa();
    reset_num_threads();
}

void register_all() {
    const std::pair<const char *, std::function<run_fn(weights_kind)>> ops[] = {
            {"conv", make_conv},
            {"inner_product", make_ip},
            {"bnorm_inference", [](weights_kind w) { return make_bnorm(w, bnorm_mode::inference); }},
            {"bnorm_training", [](weights_kind w) { return make_bnorm(w, bnorm_mode::training); }},
            {"lstm", make_lstm},
            {"eltwise_tanh", make_tanh},
    };
    for (const auto &[name, make] : ops)
        for (isa level : {isa::avx512_core, isa::avx2})
            for (weights_kind w : {weights_kind::normal, weights_kind::denormal}) {
                const std::string row = std::string(name) + "/" + (level == isa::avx2 ? "avx2" : "avx512") + "/"
                        + (w == weights_kind::normal ? "normal_weights" : "denormal_weights");
                benchmark::RegisterBenchmark(row.c_str(), bm_op, level, make, w)
                        ->Unit(benchmark::kMicrosecond)
                        ->UseRealTime();
            }
}

} // namespace

int main(int argc, char **argv) {
    try {
        (void)get_denormals_mode(); // a bad BLOCKDNN_DENORMALS: say so once, not from every row
    } catch (const error &e) {
        std::fprintf(stderr, "bench_denormals: %s\n", e.what());
        return 2;
    }
    return bench::bench_main(argc, argv, register_all);
}
