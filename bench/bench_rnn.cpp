// SPDX-License-Identifier: Apache-2.0
// RNN forward (inference), one layer, left to right: LSTM, GRU, linear-before-reset GRU and
// vanilla RNN (tanh) on the shapes, 1 and 2 threads, beside oneDNN's RNN primitive in the
// same binary when the baseline is built. Rows differ in one path element:
//   rnn/<isa>/t<threads>/<cell>/l1t<T>mb<mb>sic<C>/{blockdnn,onednn}
// Both sides are created (and their weights packed / reordered) outside the timed loop; the
// timed call is one execute, through blockdnn's public API (rnn_fwd with its weights given at
// creation, threads from set_num_threads) and oneDNN's primitive. GFLOPS counts the GEMM FLOPs (2 x T x mb x gates x dhc x (slc + sic)).
// One-thread rows are timed in CPU time (robust to other processes on a shared machine),
// two-thread rows in wall time. rnn_create/... rows time blockdnn's creation (JIT + packing).
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "bench_common.hpp"
#include "blockdnn/stream.hpp"
#include "core/utils.hpp"
#include "blockdnn/rnn.hpp"

using namespace blockdnn;
using blockdnn::impl::cat;

namespace {

struct shape_t {
    std::int64_t t, mb, c;
    std::string name() const { return cat("l1t", t, "mb", mb, "sic", c); }
};
const shape_t shapes[] = {{50, 64, 512}, {100, 1, 128}, {100, 10, 10}, {100, 1, 10}};
const rnn_cell cells[] = {rnn_cell::lstm, rnn_cell::gru, rnn_cell::lbr_gru, rnn_cell::vanilla_rnn};
const char *cell_row_name(rnn_cell k) { return k == rnn_cell::vanilla_rnn ? "rnn" : to_string(k); }

// The problem as the op validates it: sic and dic filled in, and its tensors' descriptors.
struct prb_t {
    rnn_desc desc;
    std::int64_t n_gates = 0, n_bias_gates = 0;
    tensor_desc src_layer, states, wei_layer, wei_iter, bias, dst_layer;
};

prb_t make_prb(rnn_cell cell, const shape_t &s) {
    rnn_desc d;
    d.cell = cell;
    d.t = s.t, d.mb = s.mb, d.slc = d.dhc = s.c;
    const rnn_fwd op(d); // only its descriptors are read
    return {op.desc(), rnn_n_gates(cell), rnn_n_bias_gates(cell), op.src_layer_desc(), op.src_iter_desc(),
            op.weights_layer_desc(), op.weights_iter_desc(), op.bias_desc(), op.dst_layer_desc()};
}

// Inputs in [-1, 1), weights ~ 1 / sqrt(fan-in): realistic, unsaturated dynamics.
struct data_t {
    std::vector<float> src, src_iter, src_iter_c, wl, wi, bias, dst, dst_iter, dst_iter_c;
    explicit data_t(const prb_t &prb) {
        const rnn_desc &p = prb.desc;
        std::mt19937 gen(1);
        std::uniform_real_distribution<float> u(-1.f, 1.f);
        auto fill = [&](std::vector<float> &v, std::int64_t n, float scale) {
            v.resize(n);
            for (float &x : v) x = scale * u(gen);
        };
        const std::int64_t G = prb.n_gates, H = p.dhc;
        fill(src, p.t * p.mb * p.slc, 1.f);
        fill(src_iter, p.mb * H, 1.f);
        fill(src_iter_c, p.mb * H, 1.f);
        fill(wl, p.slc * G * H, 1.f / std::sqrt(static_cast<float>(p.slc)));
        fill(wi, H * G * H, 1.f / std::sqrt(static_cast<float>(H)));
        fill(bias, prb.n_bias_gates * H, 0.1f);
        dst.assign(p.t * p.mb * H, 0.f);
        dst_iter.assign(p.mb * H, 0.f);
        dst_iter_c.assign(p.mb * H, 0.f);
    }
};

bool skip_isa(benchmark::State &state, isa level) {
    if (detected_isa() >= level) return false;
    state.SkipWithError((std::string(to_string(level)) + " not available").c_str());
    return true;
}

// The JIT's blocking: the line of impl_info() after the name and the problem ("" for ref).
std::string blocking(const rnn_fwd &op) {
    const std::string info = op.impl_info();
    const std::size_t a = info.find('\n'), b = a == std::string::npos ? a : info.find('\n', a + 1);
    return b == std::string::npos ? "" : info.substr(b + 1, info.find('\n', b + 1) - b - 1);
}

// The public API, as a user calls it: rnn_fwd created with its weights (packed then, once),
// the library's thread count set first, the ISA capped at `level`.
void run_blockdnn(benchmark::State &state, isa level, prb_t p, int nthr) {
    if (skip_isa(state, level)) return;
    set_num_threads(nthr);
    set_max_isa(level);
    data_t d(p);
    const rnn_desc &dd = p.desc;
    const bool lstm = dd.cell == rnn_cell::lstm;
    auto wrap = [](const tensor_desc &td, std::vector<float> &v) { return tensor(td, v.data()); };
    const rnn_fwd op(dd, wrap(p.wei_layer, d.wl), wrap(p.wei_iter, d.wi), wrap(p.bias, d.bias));
    rnn_fwd_args a;
    a.src_layer = wrap(p.src_layer, d.src);
    a.src_iter = wrap(p.states, d.src_iter);
    if (lstm) a.src_iter_c = wrap(p.states, d.src_iter_c);
    a.dst_layer = wrap(p.dst_layer, d.dst);
    a.dst_iter = wrap(p.states, d.dst_iter);
    if (lstm) a.dst_iter_c = wrap(p.states, d.dst_iter_c);
    for (auto _ : state) {
        op.execute(a);
        benchmark::ClobberMemory();
    }
    state.SetLabel(cat(op.impl_name(), " ", blocking(op)));
    bench::set_flop_counters(state, p.desc.flops(), level, nthr);
    reset_max_isa();
    reset_num_threads();
}

// rnn_fwd created with its weights, on one thread: the plan, the kernels (from the kernel
// cache after the first) and the packing.
void run_create(benchmark::State &state, isa level, prb_t p) {
    if (skip_isa(state, level)) return;
    set_num_threads(1);
    set_max_isa(level);
    data_t d(p);
    const tensor wl(p.wei_layer, d.wl.data()), wi(p.wei_iter, d.wi.data()), bias(p.bias, d.bias.data());
    for (auto _ : state) {
        const rnn_fwd op(p.desc, wl, wi, bias);
        benchmark::DoNotOptimize(&op);
    }
    reset_max_isa();
    reset_num_threads();
}

#ifdef BLOCKDNN_BENCH_ONEDNN
void run_onednn(benchmark::State &state, isa level, prb_t prb, int nthr) {
    if (!bench::onednn_use_isa(state, level)) return;
    omp_set_num_threads(nthr);
    using namespace dnnl;
    using tag = memory::format_tag;
    using dt = memory::data_type;
    dnnl::engine eng(dnnl::engine::kind::cpu, 0);
    dnnl::stream strm(eng);
    const rnn_desc &p = prb.desc;
    const memory::dim T = p.t, N = p.mb, C = p.dhc, G = prb.n_gates, Gb = prb.n_bias_gates;
    const memory::desc src_md({T, N, C}, dt::f32, tag::tnc), dst_md({T, N, C}, dt::f32, tag::tnc);
    const memory::desc st_md({1, 1, N, C}, dt::f32, tag::ldnc), bias_md({1, 1, Gb, C}, dt::f32, tag::ldgo);
    const memory::desc wl_plain({1, 1, C, G, C}, dt::f32, tag::ldigo), wi_plain({1, 1, C, G, C}, dt::f32, tag::ldigo);
    const memory::desc wl_any({1, 1, C, G, C}, dt::f32, tag::any), wi_any({1, 1, C, G, C}, dt::f32, tag::any);
    const auto fwd = prop_kind::forward_inference;
    const auto dir = dnnl::rnn_direction::unidirectional_left2right;
    dnnl::primitive prim;
    memory::desc wl_md, wi_md;
    switch (p.cell) {
    case rnn_cell::lstm: {
        lstm_forward::primitive_desc pd(
                lstm_forward::desc(fwd, dir, src_md, st_md, st_md, wl_any, wi_any, bias_md, dst_md, st_md, st_md), eng);
        wl_md = pd.weights_layer_desc(), wi_md = pd.weights_iter_desc(), prim = lstm_forward(pd);
        break;
    }
    case rnn_cell::gru: {
        gru_forward::primitive_desc pd(
                gru_forward::desc(fwd, dir, src_md, st_md, wl_any, wi_any, bias_md, dst_md, st_md), eng);
        wl_md = pd.weights_layer_desc(), wi_md = pd.weights_iter_desc(), prim = gru_forward(pd);
        break;
    }
    case rnn_cell::lbr_gru: {
        lbr_gru_forward::primitive_desc pd(
                lbr_gru_forward::desc(fwd, dir, src_md, st_md, wl_any, wi_any, bias_md, dst_md, st_md), eng);
        wl_md = pd.weights_layer_desc(), wi_md = pd.weights_iter_desc(), prim = lbr_gru_forward(pd);
        break;
    }
    case rnn_cell::vanilla_rnn: {
        vanilla_rnn_forward::primitive_desc pd(vanilla_rnn_forward::desc(fwd, algorithm::eltwise_tanh, dir, src_md,
                                                       st_md, wl_any, wi_any, bias_md, dst_md, st_md),
                eng);
        wl_md = pd.weights_layer_desc(), wi_md = pd.weights_iter_desc(), prim = vanilla_rnn_forward(pd);
        break;
    }
    }
    data_t d(prb);
    memory src(src_md, eng, d.src.data()), dst(dst_md, eng, d.dst.data());
    memory src_iter(st_md, eng, d.src_iter.data()), src_iter_c(st_md, eng, d.src_iter_c.data());
    memory dst_iter(st_md, eng, d.dst_iter.data()), dst_iter_c(st_md, eng, d.dst_iter_c.data());
    memory bias(bias_md, eng, d.bias.data());
    memory wl_user(wl_plain, eng, d.wl.data()), wi_user(wi_plain, eng, d.wi.data());
    bench::onednn_buffers_t buffers; // its packed weights on memory placed as blockdnn's are
    memory wl = buffers.make(wl_md, eng), wi = buffers.make(wi_md, eng);
    reorder(wl_user, wl).execute(strm, wl_user, wl);
    reorder(wi_user, wi).execute(strm, wi_user, wi);
    strm.wait();
    std::unordered_map<int, memory> args = {{DNNL_ARG_SRC_LAYER, src}, {DNNL_ARG_SRC_ITER, src_iter},
            {DNNL_ARG_WEIGHTS_LAYER, wl}, {DNNL_ARG_WEIGHTS_ITER, wi}, {DNNL_ARG_BIAS, bias}, {DNNL_ARG_DST_LAYER, dst},
            {DNNL_ARG_DST_ITER, dst_iter}};
    if (p.cell == rnn_cell::lstm) {
        args[DNNL_ARG_SRC_ITER_C] = src_iter_c;
        args[DNNL_ARG_DST_ITER_C] = dst_iter_c;
    }
    for (auto _ : state) {
        prim.execute(strm, args);
        strm.wait();
    }
    state.SetLabel(cat("oneDNN ", dnnl_version()->major, ".", dnnl_version()->minor, ".", dnnl_version()->patch));
    bench::set_flop_counters(state, prb.desc.flops(), level, nthr);
}
#endif

void register_all() {
    for (isa level : {isa::avx512_core, isa::avx2})
        for (int nthr : {1, 2})
            for (rnn_cell cell : cells)
                for (const shape_t &s : shapes) {
                    const prb_t p = make_prb(cell, s);
                    const std::string path = cat("rnn/", level == isa::avx512_core ? "avx512" : "avx2", "/t", nthr, "/",
                            cell_row_name(cell), "/", s.name(), "/");
                    bench::register_threaded_row(path + "blockdnn", nthr, run_blockdnn, level, p, nthr);
#ifdef BLOCKDNN_BENCH_ONEDNN
                    bench::register_threaded_row(path + "onednn", nthr, run_onednn, level, p, nthr);
#endif
                    if (nthr == 1)
                        benchmark::RegisterBenchmark(cat("rnn_create/", level == isa::avx512_core ? "avx512" : "avx2",
                                                             "/", cell_row_name(cell), "/", s.name(), "/blockdnn")
                                                             .c_str(),
                                run_create, level, p)
                                ->Unit(benchmark::kMicrosecond);
                }
}

} // namespace

int main(int argc, char **argv) { return bench::bench_main(argc, argv, register_all, bench::add_peak_context); }
