// SPDX-License-Identifier: Apache-2.0
// Forward softmax throughput beside oneDNN's, one thread. Rows:
//   softmax/<isa>/<shape>  softmax_fwd with dispatch capped at <isa>: avx512_core and avx2 give
//                          the JIT kernel, scalar the reference; labelled with impl_name()
//   softmax/onednn/<shape> oneDNN 2.x's softmax_forward (forward_inference) at its best ISA, the
//                          same plain layout, axis and data; labelled with its impl_info_str().
//                          Only when the baseline is built (-Donednn_baseline)
// Shapes, <layout>:<dims>:axis<k>:
//   nc:64x1000:axis1         classifier logits: 64 contiguous lines of 1000
//   nchw:8x12x128x128:axis3  attention scores: 12288 contiguous lines of 128
//   nchw:1x21x256x256:axis1  segmentation over channels: 65536 lines of 21, floats 65536 apart
//   nhwc:1x21x256x256:axis1  the same in nhwc: 65536 contiguous lines of 21
//   nc:256x2:axis1           tiny lines: 256 lines of 2
// src and dst are separate tensors; src holds the same seeded values in [-8, 8) in every row of
// a shape. One thread (set_num_threads(1); oneDNN's OpenMP at omp_set_num_threads(1)), timed in
// CPU time, with the "min" aggregate for --benchmark_repetitions. After timing, a row whose dst
// has a line not summing to 1 (within 1e-3) ends with an error.
// Counters: `elems` is elements per second; `bytes` is src read once and dst written once per
// second (8 bytes an element, 1024-based).
#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include <benchmark/benchmark.h>

#include "bench_common.hpp"
#include "blockdnn/blockdnn.hpp"

using namespace blockdnn;

namespace {

struct shape_t {
    const char *name;
    format_tag tag;
    dims_t dims;
    int axis;
};
const shape_t shapes[] = {
        {"nc:64x1000:axis1", format_tag::nc, {64, 1000}, 1},
        {"nchw:8x12x128x128:axis3", format_tag::nchw, {8, 12, 128, 128}, 3},
        {"nchw:1x21x256x256:axis1", format_tag::nchw, {1, 21, 256, 256}, 1},
        {"nhwc:1x21x256x256:axis1", format_tag::nhwc, {1, 21, 256, 256}, 1},
        {"nc:256x2:axis1", format_tag::nc, {256, 2}, 1},
};

// A shape's src values in memory order, uniform in [-8, 8) from a fixed seed: made once, copied
// into every row's src (the layouts are plain, so memory holds exactly nelems floats).
const std::vector<float> &src_values(const shape_t &s) {
    static std::map<std::string, std::vector<float>> cache;
    auto it = cache.find(s.name);
    if (it != cache.end()) return it->second;
    std::vector<float> v(static_cast<std::size_t>(tensor_desc(s.dims, s.tag).nelems()));
    std::mt19937 gen(20240611);
    std::uniform_real_distribution<float> u(-8.f, 8.f);
    for (float &x : v) x = u(gen);
    return cache.emplace(s.name, std::move(v)).first->second;
}

// True if every line of dst (plain layout: [outer][len][inner], inner = stride(axis)) sums to 1.
bool lines_sum_to_one(const tensor_desc &d, int axis, const float *dst) {
    const dim_t len = d.dim(axis), inner = d.stride(axis), outer = d.nelems() / (len * inner);
    for (dim_t o = 0; o < outer; ++o)
        for (dim_t i = 0; i < inner; ++i) {
            double sum = 0;
            for (dim_t l = 0; l < len; ++l) sum += dst[(o * len + l) * inner + i];
            if (!(std::fabs(sum - 1.0) <= 1e-3)) return false;
        }
    return true;
}

void set_counters(benchmark::State &state, const tensor_desc &d) {
    state.counters["elems"] =
            benchmark::Counter(static_cast<double>(d.nelems()), benchmark::Counter::kIsIterationInvariantRate);
    state.counters["bytes"] = benchmark::Counter(2.0 * static_cast<double>(d.size_bytes()),
            benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1024);
}

void check_dst(benchmark::State &state, const tensor_desc &d, int axis, const float *dst) {
    if (!lines_sum_to_one(d, axis, dst)) state.SkipWithError("a line of dst does not sum to 1");
}

// The public op on one thread, dispatch capped at `level`; the timed call is one execute.
void bm_softmax(benchmark::State &state, isa level, shape_t s) {
    if (bench::skip_if_missing(state, level)) return;
    set_num_threads(1);
    struct reset_threads_t {
        ~reset_threads_t() { reset_num_threads(); }
    } reset_threads;
    const bench::isa_cap_t cap(level);
    const tensor_desc d(s.dims, s.tag);
    const tensor src(d), dst(d);
    const std::vector<float> &v = src_values(s);
    std::memcpy(src.data(), v.data(), v.size() * sizeof(float));
    const softmax_fwd op(d, d, s.axis);
    state.SetLabel(op.impl_name());
    for (auto _ : state) {
        op.execute(src, dst);
        benchmark::ClobberMemory();
    }
    set_counters(state, d);
    check_dst(state, d, s.axis, dst.f32());
}

#ifdef BLOCKDNN_BENCH_ONEDNN
dnnl::memory::format_tag onednn_tag(format_tag t) {
    using ft = dnnl::memory::format_tag;
    return t == format_tag::nc ? ft::nc : t == format_tag::nchw ? ft::nchw : ft::nhwc;
}

// oneDNN's softmax_forward on one OpenMP thread, on buffers from blockdnn's allocator.
void bm_onednn(benchmark::State &state, shape_t s) {
    using namespace dnnl;
    omp_set_num_threads(1);
    const dnnl::engine eng(dnnl::engine::kind::cpu, 0);
    dnnl::stream strm(eng);
    const memory::desc md(memory::dims(s.dims.begin(), s.dims.end()), memory::data_type::f32, onednn_tag(s.tag));
    const softmax_forward::primitive_desc pd({prop_kind::forward_inference, md, s.axis}, eng);
    bench::onednn_buffers_t buffers;
    memory src = buffers.make(md, eng), dst = buffers.make(md, eng);
    const std::vector<float> &v = src_values(s);
    std::memcpy(src.get_data_handle(), v.data(), v.size() * sizeof(float));
    const softmax_forward prim(pd);
    const std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}};
    state.SetLabel(pd.impl_info_str());
    for (auto _ : state) {
        prim.execute(strm, args);
        strm.wait();
    }
    const tensor_desc d(s.dims, s.tag);
    set_counters(state, d);
    check_dst(state, d, s.axis, static_cast<const float *>(dst.get_data_handle()));
}
#endif

void register_all() {
    for (const shape_t &s : shapes) {
        for (isa level : {isa::avx512_core, isa::avx2, isa::scalar})
            bench::register_threaded_row(
                    std::string("softmax/") + to_string(level) + "/" + s.name, 1, bm_softmax, level, s);
#ifdef BLOCKDNN_BENCH_ONEDNN
        bench::register_threaded_row(std::string("softmax/onednn/") + s.name, 1, bm_onednn, s);
#endif
    }
}

} // namespace

int main(int argc, char **argv) { return bench::bench_main(argc, argv, register_all); }
