// SPDX-License-Identifier: Apache-2.0
// Forward convolution speed on every distinct ResNet-50 layer (benchdnn shapes_resnet_50), at
// mb 1 and 16, 1 and 2 threads, per ISA and layout, beside oneDNN in the same binary when the
// onednn_baseline option found it. Rows: conv/<isa>/mb<N>/t<T>/<layer>/{blockdnn,onednn},
// where <isa> is avx512 (nChw16c), avx2 (nChw8c), avx2_nChw16c, or avx512_nhwc / avx2_nhwc
// (channels-last src and dst, the first layer's too). Rows <layer> = resnet_50_chain run all 53
// convolutions of ResNet-50 in network order, each with its own weights (see
// run_blockdnn_chain). Counters: GFLOPS
// (2 * mb * oc * oh * ow * ic/g * kh * kw per iteration, padding taps included: the usual count
// of a convolution's work, so that these rows compare with speeds quoted that way; benchdnn and
// blockdnn-bench count only the taps inside the input, conv_desc::flops, which is up to 18% less
// on ResNet-50's 7x7 3x3 layer) and
// pct_peak against this core's FMA peak measured at start-up.
//
// Time is CPU time, because the machine is shared: 1-thread rows use the thread's CPU time,
// 2-thread rows the process's CPU time, which the counters divide by the thread count (both
// pools spin a while before they sleep, so on an idle machine this is close to wall time;
// blockdnn's threads come from set_num_threads, oneDNN's from OpenMP). The min_ms counter
// is the fastest single iteration in wall time, the least disturbed one; conv_ratio.py reads it.
//
// Each row also reports a "min" aggregate over --benchmark_repetitions: on a shared machine the
// fastest repetition is the one least disturbed. The blockdnn rows run conv_fwd as a user does
// (the ISA capped with set_max_isa, weights in the layout the op picks, format_tag::any; the
// channels-last rows create it with oihw weights it holds, see run_blockdnn);
// --desc=DESCRIPTOR (repeatable) runs those problems, at their own mb, instead of ResNet-50
// (and without the chain rows).
//
// oneDNN's ISA can be capped once per process, so its AVX2 rows need a second run:
//   bench_conv --benchmark_filter='/avx512/'            (oneDNN on AVX-512)
//   bench_conv --onednn_isa=avx2 --benchmark_filter='/avx2/'
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "bench_common.hpp"
#include "blockdnn/blockdnn.hpp"
#ifdef BLOCKDNN_BENCH_ONEDNN
#include "onednn_conv.hpp"
#endif

using namespace blockdnn;

namespace {

// benchdnn shapes_resnet_50, the distinct layers (mb is set per row).
const char *const resnet_50[] = {
        "g1mb50ic3ih224iw224oc64oh112ow112kh7kw7sh2sw2ph3pw3n\"conv1\"",
        "mb50ic64ih56oc256oh56kh1ph0n\"res2a_branch1\"",
        "mb50ic64ih56oc64oh56kh1ph0n\"res2a_branch2a\"",
        "mb50ic64ih56oc64oh56kh3ph1n\"res2a_branch2b\"",
        "mb50ic256ih56oc64oh56kh1ph0n\"res2b_branch2a\"",
        "g1mb50ic256ih56iw56oc512oh28ow28kh1kw1sh2sw2ph0pw0n\"res3a_branch1\"",
        "g1mb50ic256ih56iw56oc128oh28ow28kh1kw1sh2sw2ph0pw0n\"res3a_branch2a\"",
        "mb50ic128ih28oc128oh28kh3ph1n\"res3a_branch2b\"",
        "mb50ic128ih28oc512oh28kh1ph0n\"res3a_branch2c\"",
        "mb50ic512ih28oc128oh28kh1ph0n\"res3b_branch2a\"",
        "g1mb50ic512ih28iw28oc1024oh14ow14kh1kw1sh2sw2ph0pw0n\"res4a_branch1\"",
        "g1mb50ic512ih28iw28oc256oh14ow14kh1kw1sh2sw2ph0pw0n\"res4a_branch2a\"",
        "mb50ic256ih14oc256oh14kh3ph1n\"res4a_branch2b\"",
        "mb50ic256ih14oc1024oh14kh1ph0n\"res4a_branch2c\"",
        "mb50ic1024ih14oc256oh14kh1ph0n\"res4b_branch2a\"",
        "g1mb50ic1024ih14iw14oc2048oh7ow7kh1kw1sh2sw2ph0pw0n\"res5a_branch1\"",
        "g1mb50ic1024ih14iw14oc512oh7ow7kh1kw1sh2sw2ph0pw0n\"res5a_branch2a\"",
        "mb50ic512ih7oc512oh7kh3ph1n\"res5a_branch2b\"",
        "mb50ic512ih7oc2048oh7kh1ph0n\"res5a_branch2c\"",
        "mb50ic2048ih7oc512oh7kh1ph0n\"res5b_branch2a\"",
};

// ResNet-50's 53 convolutions in network order, as names of the distinct layers above:
// conv1, then per stage a first block (branch1, branch2a, branch2b, branch2c) and `blocks` - 1
// more (branch2a, branch2b, branch2c). res2a_branch2c has res2a_branch1's shape, which stands
// for it in the list above.
std::vector<std::string> resnet_50_chain_names() {
    struct stage_t {
        const char *branch1, *first_2a, *branch2b, *branch2c, *next_2a;
        int blocks;
    };
    const stage_t stages[] = {
            {"res2a_branch1", "res2a_branch2a", "res2a_branch2b", "res2a_branch1", "res2b_branch2a", 3},
            {"res3a_branch1", "res3a_branch2a", "res3a_branch2b", "res3a_branch2c", "res3b_branch2a", 4},
            {"res4a_branch1", "res4a_branch2a", "res4a_branch2b", "res4a_branch2c", "res4b_branch2a", 6},
            {"res5a_branch1", "res5a_branch2a", "res5a_branch2b", "res5a_branch2c", "res5b_branch2a", 3},
    };
    std::vector<std::string> v {"conv1"};
    for (const stage_t &st : stages) {
        v.insert(v.end(), {st.branch1, st.first_2a, st.branch2b, st.branch2c});
        for (int b = 1; b < st.blocks; ++b) v.insert(v.end(), {st.next_2a, st.branch2b, st.branch2c});
    }
    return v;
}

// The chain's problems at this mb, with bias.
std::vector<conv_desc> resnet_50_chain(dim_t mb) {
    std::vector<conv_desc> v;
    for (const std::string &want : resnet_50_chain_names())
        for (const char *d : resnet_50) {
            std::string name;
            conv_desc p = parse_conv_desc(d, &name);
            if (name != want) continue;
            p.mb = mb;
            p.with_bias = true;
            v.push_back(p);
            break;
        }
    return v;
}

struct variant_t {
    const char *name; // row path element
    isa level;
    int blk; // channels per block of src and dst; 0: channels-last
};
const variant_t variants[] = {
        {"avx512", isa::avx512_core, 16},
        {"avx2", isa::avx2, 8},
        {"avx2_nChw16c", isa::avx2, 16},
        {"avx512_nhwc", isa::avx512_core, 0},
        {"avx2_nhwc", isa::avx2, 0},
};

format_tag act_tag(int ndims, int blk) {
    if (blk == 0) return ndims == 3 ? format_tag::nwc : ndims == 4 ? format_tag::nhwc : format_tag::ndhwc;
    if (blk == 16) return ndims == 3 ? format_tag::nCw16c : ndims == 4 ? format_tag::nChw16c : format_tag::nCdhw16c;
    return ndims == 3 ? format_tag::nCw8c : ndims == 4 ? format_tag::nChw8c : format_tag::nCdhw8c;
}

double flops_of(const conv_desc &p) {
    return 2.0 * p.mb * p.oc * p.od * p.oh * p.ow * (p.ic / p.g) * p.kd * p.kh * p.kw;
}

void set_counters(benchmark::State &state, double flop, isa level, int nthr) {
    // Rates divide by CPU time, which for nthr threads is nthr times the parallel time.
    const double f = flop * nthr;
    state.counters["GFLOPS"] = benchmark::Counter(f * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
    state.counters["pct_peak"] = benchmark::Counter(
            100.0 * f / (bench::fma_peak_flops(level) * nthr), benchmark::Counter::kIsIterationInvariantRate);
    state.counters["nthr"] = nthr;
    // Constants per row, so that scripts can turn any aggregate time into GFLOP/s and % peak.
    state.counters["gflop"] = flop * 1e-9;
    state.counters["peak_gflops"] = bench::fma_peak_flops(level) * nthr * 1e-9;
}

// Runs `run` once per benchmark iteration; returns the fastest iteration's wall time in ms
// (the min_ms counter).
template <typename F>
double time_iterations(benchmark::State &state, F &&run) {
    double best = 1e30;
    for (auto _ : state) {
        const auto t0 = std::chrono::steady_clock::now();
        run();
        benchmark::ClobberMemory();
        best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    return best;
}

// The activation layouts of a row: as the variant says; a blocked variant's first layer
// reads the network's plain input.
std::pair<format_tag, format_tag> tags_of(const conv_desc &p, const variant_t &v) {
    const format_tag act = act_tag(p.ndims, v.blk);
    const format_tag plain = p.ndims == 3 ? format_tag::ncw : p.ndims == 4 ? format_tag::nchw : format_tag::ncdhw;
    return {p.ic <= 4 && v.blk ? plain : act, act};
}

// blockdnn's JIT convolution for a row, created for weights in the layout it reads best (as
// a user who reorders them once passes them), or, given `held` weights and bias, created with
// them (the op holds them). Null, with the reason in `why`, if the ISA or the JIT kernels do
// not take the problem.
std::unique_ptr<conv_fwd> make_blockdnn_conv(
        const conv_desc &p, const variant_t &v, std::string &why, const std::pair<tensor, tensor> *held = nullptr) {
    if (detected_isa() < v.level) {
        why = std::string(to_string(v.level)) + " not available";
        return nullptr;
    }
    const auto [stag, dtag] = tags_of(p, v);
    const bench::isa_cap_t cap(v.level);
    auto conv = held ? std::make_unique<conv_fwd>(p, stag, held->first, held->second, dtag)
                     : std::make_unique<conv_fwd>(p, stag, format_tag::any, dtag);
    const std::string name = conv->impl_name(), want = std::string("jit:") + to_string(v.level);
    if (name != want && name.rfind(want + ":", 0) != 0) {
        why = "no " + want + " kernel takes the problem (" + name + ")";
        return nullptr;
    }
    return conv;
}

// The label of a row: the implementation and its conf on one line.
std::string label_of(const conv_fwd &conv) {
    std::string s = conv.impl_info();
    std::replace(s.begin(), s.end(), '\n', ' ');
    return s;
}

void fill(const tensor &t, int mod, float step) {
    for (dim_t i = 0; i < t.desc().nelems_padded(); ++i) t.f32()[i] = static_cast<float>(i % mod) * step;
}

// Channels-last rows create the op with oihw weights it holds, as a PyTorch module in
// channels_last hands them over once: a unit-stride 1x1 then runs on the GEMM
// (jit:<isa>:gemm_1x1), which takes held weights only. Blocked rows pass their weights per call.
void run_blockdnn(benchmark::State &state, conv_desc p, variant_t v, int nthr) {
    std::string why;
    std::pair<tensor, tensor> held;
    if (v.blk == 0) {
        held.first = tensor(tensor_desc(p.wei_dims(p.g > 1), p.g > 1 ? format_tag::goihw : format_tag::oihw));
        held.second = tensor(tensor_desc(p.bia_dims(), format_tag::x));
        fill(held.first, 5, 0.125f);
        for (dim_t i = 0; i < p.oc; ++i) held.second.f32()[i] = 0.5f;
    }
    const std::unique_ptr<conv_fwd> conv = make_blockdnn_conv(p, v, why, v.blk == 0 ? &held : nullptr);
    if (!conv) {
        state.SkipWithError(why.c_str());
        return;
    }
    const tensor src(conv->src_desc()), dst(conv->dst_desc()), wei(conv->wei_desc()), bia(conv->bia_desc());
    fill(src, 7, 0.25f);
    fill(wei, 5, 0.125f);
    for (dim_t i = 0; i < p.oc; ++i) bia.f32()[i] = 0.5f;
    set_num_threads(nthr);
    const double best = time_iterations(state, [&] {
        if (conv->holds_weights()) conv->execute(src, dst);
        else conv->execute(src, wei, bia, dst);
    });
    set_counters(state, flops_of(p), v.level, nthr);
    state.counters["min_ms"] = best;
    state.SetLabel(label_of(*conv));
}

#ifdef BLOCKDNN_BENCH_ONEDNN
// Why oneDNN has no row for this variant in this process, or null.
const char *onednn_skip_reason(const variant_t &v) {
    if (detected_isa() < v.level)
        return v.level == isa::avx512_core ? "avx512_core not available" : "avx2 not available";
    if (v.blk == 16 && v.level == isa::avx2) return "oneDNN 2.6 has no AVX2 kernel for nChw16c (it runs its reference)";
    if ((v.level == isa::avx512_core) != bench::onednn_conv_t::has_avx512())
        return v.level == isa::avx2 ? "oneDNN runs AVX-512 here: rerun with --onednn_isa=avx2"
                                    : "oneDNN is capped at AVX2 in this run";
    return nullptr;
}

void run_onednn(benchmark::State &state, conv_desc p, variant_t v, int nthr) {
    if (const char *why = onednn_skip_reason(v)) {
        state.SkipWithError(why);
        return;
    }
    const auto [stag, dtag] = tags_of(p, v);
    bench::onednn_conv_t conv(p, stag, dtag, nthr);
    const double best = time_iterations(state, [&] { conv.execute(); });
    set_counters(state, flops_of(p), v.level, nthr);
    state.counters["min_ms"] = best;
    state.SetLabel(conv.impl_name());
}
#endif

// The values of a chain layer's weights and bias: a fixed pattern in [-1, 0.875] (oneDNN's
// baseline fills its buffers with it too). Weights are scaled by 1 / (ic/g * kd * kh * kw),
// so that the weights of one output add up to at most 1 in magnitude: an output is at most
// the largest input plus its bias in magnitude, whatever the layout the pattern is laid out
// in, the ISA or the minibatch, and 53 layers from inputs of at most 1.5 stay below 55. (A
// variance-keeping scale, 1 / sqrt(0.375 * fan-in), keeps the scale only on average over
// random weights, and a fixed pattern is not random.) The bias, the same pattern, 16 in 17
// values at least 1/8 in magnitude, keeps the activations away from zero. Timing asks for
// normal floats: subnormal ones are slow on some cores, and vanishing or overflowing
// activations would time different data in the two libraries.
float chain_pattern(dim_t i) { return static_cast<float>((i * 13) % 17) * 0.125f - 1.f; }

float chain_wei_scale(const conv_desc &p) {
    return static_cast<float>(1.0 / static_cast<double>(p.ic / p.g * p.kd * p.kh * p.kw));
}

// Chain rows that failed (unfit output, or a layer the ISA has and no kernel takes), not
// skipped for an ISA: main exits 1 if there are any, so that a test running them fails.
int g_failed_chains = 0;

double chain_flops(const std::vector<conv_desc> &layers) {
    double f = 0;
    for (const conv_desc &p : layers) f += flops_of(p);
    return f;
}

// Why a chain's output (n floats) is unfit for the timing just made, or null: values that
// are not finite, subnormal, or all below 1e-3 in magnitude.
const char *chain_values_problem(const float *x, dim_t n) {
    float peak = 0;
    for (dim_t i = 0; i < n; ++i) {
        const int k = std::fpclassify(x[i]);
        if (k == FP_NAN || k == FP_INFINITE) return "the chain's output is not finite";
        if (k == FP_SUBNORMAL) return "the chain's output has subnormal values";
        peak = std::max(peak, std::fabs(x[i]));
    }
    return peak < 1e-3f ? "the chain's output vanished" : nullptr;
}

// "53 layers: a x17, b x36": the implementations of a chain's layers, with their counts.
std::string chain_label(const std::vector<std::string> &impls) {
    std::map<std::string, int> count;
    for (const std::string &s : impls) ++count[s];
    std::string out = std::to_string(impls.size()) + " layers:";
    for (const auto &[name, n] : count) out += " " + name + " x" + std::to_string(n) + ",";
    out.pop_back();
    return out;
}

// The two activation buffers a chain passes through, `floats` each, filled.
std::array<tensor, 2> chain_activations(dim_t floats) {
    std::array<tensor, 2> act = {
            tensor(tensor_desc({floats}, format_tag::x)), tensor(tensor_desc({floats}, format_tag::x))};
    for (const tensor &t : act) fill(t, 7, 0.25f);
    return act;
}

// The end of a chain row: an error if its output (n floats at `out`) is unfit for the timing
// just made, else the counters and a label of the layers' implementations.
void finish_chain(benchmark::State &state, const std::vector<conv_desc> &layers, isa level, int nthr, double best_ms,
        const float *out, dim_t n, const std::vector<std::string> &impls) {
    if (const char *why = chain_values_problem(out, n)) {
        state.SkipWithError(why);
        ++g_failed_chains;
        return;
    }
    set_counters(state, chain_flops(layers), level, nthr);
    state.counters["min_ms"] = best_ms;
    state.SetLabel(chain_label(impls));
}

// ResNet-50's 53 convolutions run one after another, each with its own weights and bias (so
// weights come from memory as in a real forward pass), the activations passing through two
// buffers in turn: layer i reads one and writes the other. The buffer a layer reads holds the
// previous layer's output, in cache as far as its size allows, read as this layer's src
// shape (the shapes of consecutive layers need not match; only the time is of interest).
void run_blockdnn_chain(benchmark::State &state, dim_t mb, variant_t v, int nthr) {
    const std::vector<conv_desc> layers = resnet_50_chain(mb);
    std::vector<std::unique_ptr<conv_fwd>> convs;
    std::vector<tensor> wei, bia; // per layer, in its op's layouts
    std::vector<std::string> impls;
    dim_t act_floats = 0, out_floats = 0;
    for (const conv_desc &p : layers) {
        std::string why;
        convs.push_back(make_blockdnn_conv(p, v, why));
        if (!convs.back()) {
            state.SkipWithError(why.c_str());
            g_failed_chains += detected_isa() >= v.level;
            return;
        }
        const conv_fwd &conv = *convs.back();
        wei.emplace_back(conv.wei_desc());
        const tensor &w = wei.back();
        const float scale = chain_wei_scale(p);
        for (dim_t i = 0; i < w.desc().nelems_padded(); ++i) w.f32()[i] = chain_pattern(i) * scale;
        bia.emplace_back(conv.bia_desc());
        for (dim_t i = 0; i < p.oc; ++i) bia.back().f32()[i] = chain_pattern(i);
        impls.push_back(conv.impl_name());
        act_floats = std::max({act_floats, conv.src_desc().nelems_padded(), conv.dst_desc().nelems_padded()});
        out_floats = conv.dst_desc().nelems_padded();
    }
    const std::array<tensor, 2> act = chain_activations(act_floats);
    // Each layer reads the buffer the previous one wrote, through tensors of its own shapes.
    std::vector<tensor> src, dst;
    for (std::size_t i = 0; i < convs.size(); ++i) {
        src.emplace_back(convs[i]->src_desc(), act[i % 2].data());
        dst.emplace_back(convs[i]->dst_desc(), act[(i + 1) % 2].data());
    }
    set_num_threads(nthr);
    const double best = time_iterations(state, [&] {
        for (std::size_t i = 0; i < convs.size(); ++i) convs[i]->execute(src[i], wei[i], bia[i], dst[i]);
    });
    finish_chain(state, layers, v.level, nthr, best, act[convs.size() % 2].f32(), out_floats, impls);
}

#ifdef BLOCKDNN_BENCH_ONEDNN
void run_onednn_chain(benchmark::State &state, dim_t mb, variant_t v, int nthr) {
    if (const char *why = onednn_skip_reason(v)) {
        state.SkipWithError(why);
        return;
    }
    const std::vector<conv_desc> layers = resnet_50_chain(mb);
    std::vector<std::unique_ptr<bench::onednn_conv_t>> convs;
    std::vector<std::string> impls;
    std::size_t act_bytes = 0;
    for (const conv_desc &p : layers) {
        const auto [stag, dtag] = tags_of(p, v);
        convs.push_back(std::make_unique<bench::onednn_conv_t>(p, stag, dtag, nthr, false));
        convs.back()->scale_weights(chain_wei_scale(p));
        impls.push_back(convs.back()->impl_name());
        act_bytes = std::max({act_bytes, convs.back()->src_bytes(), convs.back()->dst_bytes()});
    }
    const dim_t act_floats = static_cast<dim_t>(act_bytes / 4);
    const std::array<tensor, 2> act = chain_activations(act_floats);
    const double best = time_iterations(state, [&] {
        for (std::size_t i = 0; i < convs.size(); ++i) convs[i]->execute(act[i % 2].f32(), act[(i + 1) % 2].f32());
    });
    const dim_t out_floats = static_cast<dim_t>(convs.back()->dst_bytes() / 4);
    finish_chain(state, layers, v.level, nthr, best, act[convs.size() % 2].f32(), out_floats, impls);
}
#endif

double min_of(const std::vector<double> &v) { return v.empty() ? 0 : *std::min_element(v.begin(), v.end()); }

std::vector<std::string> g_descs; // --desc=DESCRIPTOR rows instead of ResNet-50 (mb as given)

template <typename Arg>
using row_fn = void (*)(benchmark::State &, Arg, variant_t, int);

#ifdef BLOCKDNN_BENCH_ONEDNN
constexpr row_fn<conv_desc> onednn_layer_row = run_onednn;
constexpr row_fn<dim_t> onednn_chain_row = run_onednn_chain;
#else
constexpr row_fn<conv_desc> onednn_layer_row = nullptr;
constexpr row_fn<dim_t> onednn_chain_row = nullptr;
#endif

// Registers row + "blockdnn" and, when oneDNN is built in, row + "onednn".
template <typename Arg>
void register_row(
        const std::string &row, row_fn<Arg> blockdnn_fn, row_fn<Arg> onednn_fn, Arg a, const variant_t &v, int nthr) {
    std::vector<benchmark::internal::Benchmark *> rows {
            benchmark::RegisterBenchmark((row + "blockdnn").c_str(), blockdnn_fn, a, v, nthr)};
    if (onednn_fn) rows.push_back(benchmark::RegisterBenchmark((row + "onednn").c_str(), onednn_fn, a, v, nthr));
    for (auto *r : rows) {
        r->Unit(benchmark::kMillisecond)->ComputeStatistics("min", min_of);
        if (nthr > 1) r->MeasureProcessCPUTime();
    }
}

void register_all() {
    std::vector<std::string> descs = g_descs;
    if (descs.empty()) descs.assign(std::begin(resnet_50), std::end(resnet_50));
    auto prefix = [](const variant_t &v, int mb, int nthr) {
        return std::string("conv/") + v.name + "/mb" + std::to_string(mb) + "/t" + std::to_string(nthr) + "/";
    };
    for (const variant_t &v : variants)
        for (int mb : {1, 16})
            for (int nthr : {1, 2})
                for (const std::string &d : descs) {
                    std::string name;
                    conv_desc p = parse_conv_desc(d, &name);
                    if (g_descs.empty()) p.mb = mb;
                    else if (mb != 1) continue;
                    if (name.empty()) name = d;
                    p.with_bias = true;
                    register_row<conv_desc>(
                            prefix(v, mb, nthr) + name + "/", run_blockdnn, onednn_layer_row, p, v, nthr);
                }
    if (!g_descs.empty()) return;
    if (const std::size_t n = resnet_50_chain(1).size(); n != 53) {
        std::fprintf(stderr, "bench_conv: the ResNet-50 chain has %zu layers, not 53\n", n);
        std::exit(1);
    }
    for (const variant_t &v : variants)
        for (int mb : {1, 16})
            for (int nthr : {1, 2})
                register_row<dim_t>(
                        prefix(v, mb, nthr) + "resnet_50_chain/", run_blockdnn_chain, onednn_chain_row, mb, v, nthr);
}

} // namespace

int main(int argc, char **argv) {
    // Our own flag, taken out before Google Benchmark parses the rest.
    std::vector<char *> args;
    for (int i = 0; i < argc; ++i) {
        if (std::strncmp(argv[i], "--desc=", 7) == 0) {
            g_descs.push_back(argv[i] + 7);
            continue;
        }
        if (std::strcmp(argv[i], "--onednn_isa=avx2") == 0) {
#ifdef BLOCKDNN_BENCH_ONEDNN
            if (!bench::onednn_conv_t::cap_isa_avx2()) return 1;
#endif
            continue;
        }
        args.push_back(argv[i]);
    }
    const int rc = bench::bench_main(static_cast<int>(args.size()), args.data(), register_all, [] {
        benchmark::AddCustomContext("fma_peak_gflops_zmm", std::to_string(bench::fma_peak_gflops(isa::avx512_core)));
        benchmark::AddCustomContext("fma_peak_gflops_ymm", std::to_string(bench::fma_peak_gflops(isa::avx2)));
    });
    if (rc != 0) return rc;
    if (g_failed_chains > 0) {
        std::fprintf(stderr, "bench_conv: %d resnet_50_chain row%s failed\n", g_failed_chains,
                g_failed_chains == 1 ? "" : "s");
        return 1;
    }
    return 0;
}
