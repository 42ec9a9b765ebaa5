// SPDX-License-Identifier: Apache-2.0
// Forward binary add throughput beside oneDNN's, one thread. Rows:
//   binary/<isa>/<shape>  binary_fwd (add) with dispatch capped at <isa>: avx512_core and avx2
//                         give the JIT kernel, scalar the reference; labelled with impl_name()
//   binary/onednn/<shape> oneDNN 2.x's binary (algorithm::binary_add) at its best ISA, the same
//                         layouts (nChw16c as oneDNN's own nChw16c) and data; labelled with its
//                         impl_info_str(). Only when the baseline is built (-Donednn_baseline)
// Shapes, <src0 layout>:<dims>+<src1 layout>:<dims> (dst: src0's layout and dims):
//   nchw:8x64x56x56+nchw:8x64x56x56        residual add, plain
//   nChw16c:8x64x56x56+nChw16c:8x64x56x56  residual add, channel-blocked
//   nhwc:8x64x56x56+nhwc:1x64x1x1          per-channel bias, channels last
//   nchw:8x64x56x56+nchw:1x64x1x1          per-channel bias, plain
//   nChw16c:8x64x56x56+nchw:1x64x1x1       per-channel bias on blocked, the bias plain
//   nhwc:8x3x224x224+nhwc:1x3x1x1          image normalization, 3 channels last
//   nchw:1x64x7x7+nchw:1x64x1x1            per-channel bias on a small image: the cost of an
//                                          execute() around little work
// src0, src1 and dst are separate tensors; src0 and src1 hold the same seeded values in
// [-8, 8) at each logical index in every row of a shape, whatever the layout. One thread
// (set_num_threads(1); oneDNN's OpenMP at omp_set_num_threads(1)), timed in CPU time, with the
// "min" aggregate for --benchmark_repetitions. After timing, a row whose dst differs anywhere
// from src0 + src1 computed in double and rounded to float (which is what one IEEE float add
// gives) ends with an error naming the first such element.
// Counters: `elems` is dst elements per second; `bytes` is src0, src1 (its own size: a
// broadcast src1 is read once from memory) and dst per second (1024-based).
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

struct operand_t {
    format_tag tag;
    dims_t dims;
};
struct shape_t {
    const char *name;
    operand_t src0, src1; // dst: src0's
};
const dims_t act = {8, 64, 56, 56}, bias = {1, 64, 1, 1};
const shape_t shapes[] = {
        {"nchw:8x64x56x56+nchw:8x64x56x56", {format_tag::nchw, act}, {format_tag::nchw, act}},
        {"nChw16c:8x64x56x56+nChw16c:8x64x56x56", {format_tag::nChw16c, act}, {format_tag::nChw16c, act}},
        {"nhwc:8x64x56x56+nhwc:1x64x1x1", {format_tag::nhwc, act}, {format_tag::nhwc, bias}},
        {"nchw:8x64x56x56+nchw:1x64x1x1", {format_tag::nchw, act}, {format_tag::nchw, bias}},
        {"nChw16c:8x64x56x56+nchw:1x64x1x1", {format_tag::nChw16c, act}, {format_tag::nchw, bias}},
        {"nhwc:8x3x224x224+nhwc:1x3x1x1", {format_tag::nhwc, {8, 3, 224, 224}}, {format_tag::nhwc, {1, 3, 1, 1}}},
        {"nchw:1x64x7x7+nchw:1x64x1x1", {format_tag::nchw, {1, 64, 7, 7}}, {format_tag::nchw, bias}},
};

// Calls f(idx, i) for every logical index of `dims`, i its place in row-major logical order.
template <class F>
void for_each_index(const dims_t &dims, F f) {
    dim_t n = 1;
    for (dim_t d : dims) n *= d;
    dim_t idx[max_ndims] = {};
    const int nd = static_cast<int>(dims.size());
    for (dim_t i = 0; i < n; ++i) {
        f(static_cast<const dim_t *>(idx), i);
        for (int k = nd - 1; k >= 0 && ++idx[k] == dims[k]; --k) idx[k] = 0;
    }
}

// Values in row-major logical order, uniform in [-8, 8) from a fixed seed per dims and operand:
// made once, scattered into every row's tensors through their layouts.
const std::vector<float> &logical_values(const dims_t &dims, int operand) {
    static std::map<std::pair<dims_t, int>, std::vector<float>> cache;
    auto it = cache.find({dims, operand});
    if (it != cache.end()) return it->second;
    dim_t n = 1;
    for (dim_t d : dims) n *= d;
    std::vector<float> v(static_cast<std::size_t>(n));
    std::mt19937 gen(20240611 + operand);
    std::uniform_real_distribution<float> u(-8.f, 8.f);
    for (float &x : v) x = u(gen);
    return cache.emplace(std::make_pair(dims, operand), std::move(v)).first->second;
}

// Writes operand `which` (0: src0, 1: src1) of `o` into p, laid out as o's layout says; the
// padding, if any, zero.
void fill(const operand_t &o, int which, float *p) {
    const tensor_desc d(o.dims, o.tag);
    std::memset(p, 0, d.size_bytes());
    const std::vector<float> &v = logical_values(o.dims, which);
    for_each_index(o.dims, [&](const dim_t *idx, dim_t i) { p[d.offset(idx)] = v[static_cast<std::size_t>(i)]; });
}

// "" if dst (in src0's layout) is src0 + src1 everywhere, else the first element that is not.
std::string check_dst(const shape_t &s, const float *dst) {
    const tensor_desc dd(s.src0.dims, s.src0.tag);
    const std::vector<float> &a = logical_values(s.src0.dims, 0), &b = logical_values(s.src1.dims, 1);
    const int nd = static_cast<int>(s.src0.dims.size());
    std::string bad;
    for_each_index(s.src0.dims, [&](const dim_t *idx, dim_t i) {
        if (!bad.empty()) return;
        dim_t j = 0; // src1's logical place: its broadcast dims at index 0
        for (int k = 0; k < nd; ++k) j = j * s.src1.dims[k] + (s.src1.dims[k] == 1 ? 0 : idx[k]);
        const float want = static_cast<float>(static_cast<double>(a[i]) + static_cast<double>(b[j]));
        const float got = dst[dd.offset(idx)];
        if (got != want)
            bad = "dst[" + std::to_string(i) + "] = " + std::to_string(got) + ", not " + std::to_string(want);
    });
    return bad;
}

void set_counters(benchmark::State &state, const shape_t &s) {
    const tensor_desc d0(s.src0.dims, s.src0.tag), d1(s.src1.dims, s.src1.tag);
    state.counters["elems"] =
            benchmark::Counter(static_cast<double>(d0.nelems()), benchmark::Counter::kIsIterationInvariantRate);
    state.counters["bytes"] = benchmark::Counter(2.0 * static_cast<double>(d0.size_bytes()) + d1.size_bytes(),
            benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1024);
}

void end_row(benchmark::State &state, const shape_t &s, const float *dst) {
    set_counters(state, s);
    if (const std::string bad = check_dst(s, dst); !bad.empty()) state.SkipWithError(bad.c_str());
}

// The public op on one thread, dispatch capped at `level`; the timed call is one execute.
void bm_binary(benchmark::State &state, isa level, shape_t s) {
    if (bench::skip_if_missing(state, level)) return;
    set_num_threads(1);
    struct reset_threads_t {
        ~reset_threads_t() { reset_num_threads(); }
    } reset_threads;
    const bench::isa_cap_t cap(level);
    const tensor_desc d0(s.src0.dims, s.src0.tag), d1(s.src1.dims, s.src1.tag);
    const tensor src0(d0), src1(d1), dst(d0);
    fill(s.src0, 0, src0.f32());
    fill(s.src1, 1, src1.f32());
    const binary_fwd op(binary_alg::add, d0, d1, d0);
    state.SetLabel(op.impl_name());
    for (auto _ : state) {
        op.execute(src0, src1, dst);
        benchmark::ClobberMemory();
    }
    end_row(state, s, dst.f32());
}

#ifdef BLOCKDNN_BENCH_ONEDNN
dnnl::memory::desc onednn_md(const operand_t &o) {
    using ft = dnnl::memory::format_tag;
    const ft tag = o.tag == format_tag::nchw ? ft::nchw : o.tag == format_tag::nhwc ? ft::nhwc : ft::nChw16c;
    return {dnnl::memory::dims(o.dims.begin(), o.dims.end()), dnnl::memory::data_type::f32, tag};
}

// oneDNN's binary_add on one OpenMP thread, on buffers from blockdnn's allocator, filled
// through blockdnn's layouts of the same names (the same memory order as oneDNN's).
void bm_onednn(benchmark::State &state, shape_t s) {
    using namespace dnnl;
    omp_set_num_threads(1);
    const dnnl::engine eng(dnnl::engine::kind::cpu, 0);
    dnnl::stream strm(eng);
    const memory::desc md0 = onednn_md(s.src0), md1 = onednn_md(s.src1);
    if (md0.get_size() != tensor_desc(s.src0.dims, s.src0.tag).size_bytes()
            || md1.get_size() != tensor_desc(s.src1.dims, s.src1.tag).size_bytes()) {
        state.SkipWithError("oneDNN's tensor sizes differ from blockdnn's");
        return;
    }
    const binary::primitive_desc pd({algorithm::binary_add, md0, md1, md0}, eng);
    bench::onednn_buffers_t buffers;
    memory src0 = buffers.make(md0, eng), src1 = buffers.make(md1, eng), dst = buffers.make(md0, eng);
    fill(s.src0, 0, static_cast<float *>(src0.get_data_handle()));
    fill(s.src1, 1, static_cast<float *>(src1.get_data_handle()));
    const binary prim(pd);
    const std::unordered_map<int, memory> args = {{DNNL_ARG_SRC_0, src0}, {DNNL_ARG_SRC_1, src1}, {DNNL_ARG_DST, dst}};
    state.SetLabel(pd.impl_info_str());
    for (auto _ : state) {
        prim.execute(strm, args);
        strm.wait();
    }
    end_row(state, s, static_cast<const float *>(dst.get_data_handle()));
}
#endif

void register_all() {
    for (const shape_t &s : shapes) {
        for (isa level : {isa::avx512_core, isa::avx2, isa::scalar})
            bench::register_threaded_row(
                    std::string("binary/") + to_string(level) + "/" + s.name, 1, bm_binary, level, s);
#ifdef BLOCKDNN_BENCH_ONEDNN
        bench::register_threaded_row(std::string("binary/onednn/") + s.name, 1, bm_onednn, s);
#endif
    }
}

} // namespace

int main(int argc, char **argv) { return bench::bench_main(argc, argv, register_all); }
