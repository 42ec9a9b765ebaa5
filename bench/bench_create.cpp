// SPDX-License-Identifier: Apache-2.0
// Creation time of ops. First a forward convolution, per ISA (avx512: nChw16c, avx2: nChw8c)
// for a 3x3 and a 1x1 layer of ResNet-50 at mb 1, with bias, one thread, beside oneDNN when the
// baseline is built. Rows: create/conv/<isa>/<what>/<layer>/{blockdnn,onednn}, <what> being
// - jit_gen_cold: JIT generation, nothing cached. blockdnn: the kernels a conv_fwd creation
//   generates with the kernel cache off (capacity 0), timed by their own clock (gen_ms: generate,
//   constant pool, page protection; the time the BLOCKDNN_VERBOSE jit line prints), summed: the
//   direct kernel, and on AVX2 confs with src_prefetch_last_group its twin without prefetches
//   (counter kernels). oneDNN: convolution_forward(primitive_desc) with its primitive cache off,
//   which generates its kernels (the primitive descriptor is made outside the timing).
// - cached: a whole creation through the public API, the kernel already in the cache (one
//   creation of the same problem before the timing). blockdnn: conv_fwd(desc, src, any, dst),
//   the table's dispatch and init_conf included. oneDNN: primitive_desc then primitive, the
//   latter from its primitive cache. This is the fair comparison of the two libraries' creation
//   paths.
// - uncached: the same whole creation with the caches off (blockdnn's kernel cache at capacity
//   0, oneDNN's primitive cache at 0): what the first creation of a new shape costs.
// Beside them, cached rows of the other ops whose kernels the cache holds, each against oneDNN's
// primitive cache (descriptor, primitive_desc, then primitive):
// create/<op>/<isa>/cached/<problem>/{blockdnn,onednn}, <op> being ip (inner_product_fwd,
// ResNet-50's classifier at mb 1: nc src and dst, oi weights, bias; brgemm kernels), bnorm
// (bnorm_fwd, training, src and dst in the row's blocked layout) or eltwise (eltwise_fwd, relu,
// the row's blocked layout). Google Benchmark appends /manual_time to every row's name.
// The blockdnn jit_gen_cold rows' code_bytes counter is the kernels' size, code and constants.
// Time is wall time of the creation alone (the op's destruction is not timed); the min_us
// counter is the fastest iteration, the least disturbed on a shared machine, and the "min"
// aggregate the fastest repetition's mean (--benchmark_repetitions=N).
//
// oneDNN's ISA is fixed per process, so its AVX2 rows need a run of their own:
//   bench_create --benchmark_filter='/avx512/'    bench_create --benchmark_filter='/avx2/'
#include <algorithm>
#include <chrono>
#include <memory>
#include <string>

#include <benchmark/benchmark.h>

#include "bench_common.hpp"
#include "blockdnn/blockdnn.hpp"
#include "jit/jit_kernel_cache.hpp"

using namespace blockdnn;
using namespace blockdnn::impl;

namespace {

const char *const layers[] = {
        "mb1ic64ih56oc64oh56kh3ph1",  // ResNet-50 res2a_branch2b
        "mb1ic256ih56oc64oh56kh1ph0", // ResNet-50 res2b_branch2a
};

struct variant_t {
    const char *name; // row path element
    isa level;
    format_tag act; // src and dst
};
const variant_t variants[] = {
        {"avx512", isa::avx512_core, format_tag::nChw16c},
        {"avx2", isa::avx2, format_tag::nChw8c},
};

conv_desc desc_of(const char *layer) {
    conv_desc p = parse_conv_desc(layer);
    p.with_bias = true;
    return p;
}

// The kernel cache at capacity 0 (every get generates) while it lives.
struct kernel_cache_off_t {
    kernel_cache_off_t() : capacity_(kernel_cache().capacity()) { kernel_cache().set_capacity(0); }
    ~kernel_cache_off_t() { kernel_cache().set_capacity(capacity_); }
    kernel_cache_off_t(const kernel_cache_off_t &) = delete;
    kernel_cache_off_t &operator=(const kernel_cache_off_t &) = delete;

private:
    std::size_t capacity_;
};

// Runs make() once per iteration, timing it alone (what it returns is destroyed outside the
// timing), and sets the min_us counter.
template <typename F>
void time_creations(benchmark::State &state, F &&make) {
    double best = 1e30;
    for (auto _ : state) {
        const auto t0 = std::chrono::steady_clock::now();
        auto made = make();
        const auto t1 = std::chrono::steady_clock::now();
        benchmark::DoNotOptimize(made);
        const double s = std::chrono::duration<double>(t1 - t0).count();
        state.SetIterationTime(s);
        best = std::min(best, s);
    }
    state.counters["min_us"] = best * 1e6;
}

bool skip_unavailable(benchmark::State &state, isa level) {
    if (detected_isa() >= level) return false;
    state.SkipWithError((std::string(to_string(level)) + " not available").c_str());
    return true;
}

std::unique_ptr<conv_fwd> create_blockdnn(const conv_desc &p, const variant_t &v) {
    return std::make_unique<conv_fwd>(p, v.act, format_tag::any, v.act);
}

void run_create_blockdnn(benchmark::State &state, const char *layer, variant_t v, bool cached) {
    if (skip_unavailable(state, v.level)) return;
    const conv_desc p = desc_of(layer);
    const bench::isa_cap_t cap(v.level);
    const std::string want = std::string("jit:") + to_string(v.level);
    const std::unique_ptr<conv_fwd> first = create_blockdnn(p, v); // fills the cache
    if (first->impl_name() != want)
        return state.SkipWithError(("the op runs " + std::string(first->impl_name())).c_str());
    std::unique_ptr<kernel_cache_off_t> off;
    if (!cached) off = std::make_unique<kernel_cache_off_t>();
    time_creations(state, [&] { return create_blockdnn(p, v); });
    state.SetLabel(first->impl_name());
}

// The other ops' cached rows: the op, its row name and its problem.
enum class other_kind_t { ip, bnorm, eltwise };
struct other_op_t {
    other_kind_t kind;
    const char *name;
    const char *problem;
};
const other_op_t other_ops[] = {{other_kind_t::ip, "ip", "mb1ic2048oc1000"},
        {other_kind_t::bnorm, "bnorm", "mb16ic64ih56"}, {other_kind_t::eltwise, "eltwise", "16x64x56x56"}};

// A row's problem, parsed once outside the timing (the field of its kind): the inner product
// with bias; bnorm's src in the row's layout; eltwise's dims.
struct other_prb_t {
    other_kind_t kind;
    inner_product_desc ip;
    bnorm_desc bnorm;
    dims_t dims;
};

other_prb_t parse_other(const other_op_t &o, const variant_t &v) {
    other_prb_t p {o.kind, {}, {}, {}};
    switch (o.kind) {
    case other_kind_t::ip:
        p.ip = parse_ip_desc(o.problem);
        p.ip.with_bias = true;
        break;
    case other_kind_t::bnorm:
        p.bnorm = parse_bnorm_desc(o.problem);
        p.bnorm.src = tensor_desc(p.bnorm.src.dims(), data_type::f32, v.act);
        break;
    case other_kind_t::eltwise: p.dims = parse_eltwise_desc(o.problem).dims; break;
    }
    return p;
}

// A shared_ptr: it deletes the op as what it was made (primitive's destructor is protected).
std::shared_ptr<const primitive> create_other_blockdnn(const other_prb_t &p, const variant_t &v) {
    switch (p.kind) {
    case other_kind_t::ip:
        return std::make_shared<const inner_product_fwd>(p.ip, format_tag::nc, format_tag::oi, format_tag::nc);
    case other_kind_t::bnorm: return std::make_shared<const bnorm_fwd>(p.bnorm);
    case other_kind_t::eltwise:
        return std::make_shared<const eltwise_fwd>(
                eltwise_alg::relu, 0.f, 0.f, tensor_desc(p.dims, data_type::f32, v.act));
    }
    return nullptr;
}

void run_other_blockdnn(benchmark::State &state, other_op_t o, variant_t v) {
    if (skip_unavailable(state, v.level)) return;
    const other_prb_t p = parse_other(o, v);
    const bench::isa_cap_t cap(v.level);
    const std::shared_ptr<const primitive> first = create_other_blockdnn(p, v); // fills the cache
    // A JIT implementation at the row's ISA (jit:avx2, gemm:avx2), not the reference.
    const std::string impl = first->impl_name(), isa_suffix = std::string(":") + to_string(v.level);
    if (!impl.ends_with(isa_suffix)) return state.SkipWithError(("the op runs " + impl).c_str());
    time_creations(state, [&] { return create_other_blockdnn(p, v); });
    state.SetLabel(impl);
}

void run_gen_blockdnn(benchmark::State &state, const char *layer, variant_t v) {
    if (skip_unavailable(state, v.level)) return;
    const conv_desc p = desc_of(layer);
    const bench::isa_cap_t cap(v.level);
    const kernel_cache_off_t off;
    double best = 1e30;
    std::size_t bytes = 0, kernels = 0;
    for (auto _ : state) {
        const kernel_recorder_t rec;
        const std::unique_ptr<conv_fwd> conv = create_blockdnn(p, v);
        double ms = 0;
        bytes = 0;
        for (const kernel_ptr &k : rec.kernels()) {
            ms += k->gen_ms();
            bytes += k->code_size();
        }
        kernels = rec.kernels().size();
        state.SetIterationTime(ms * 1e-3);
        best = std::min(best, ms * 1e-3);
    }
    state.counters["min_us"] = best * 1e6;
    state.counters["kernels"] = static_cast<double>(kernels);
    state.counters["code_bytes"] = static_cast<double>(bytes);
}

#ifdef BLOCKDNN_BENCH_ONEDNN
// oneDNN's tag of a row's activation layout.
dnnl::memory::format_tag onednn_act(const variant_t &v) {
    return v.act == format_tag::nChw16c ? dnnl::memory::format_tag::nChw16c : dnnl::memory::format_tag::nChw8c;
}

// oneDNN's primitive descriptor for a row: src and dst in the row's layout, weights any.
dnnl::convolution_forward::primitive_desc onednn_pd(const dnnl::engine &eng, const conv_desc &p, const variant_t &v) {
    using namespace dnnl;
    const memory::format_tag act = onednn_act(v);
    const memory::desc sd({p.mb, p.ic, p.ih, p.iw}, memory::data_type::f32, act);
    const memory::desc dd({p.mb, p.oc, p.oh, p.ow}, memory::data_type::f32, act);
    const memory::desc wd({p.oc, p.ic, p.kh, p.kw}, memory::data_type::f32, memory::format_tag::any);
    const memory::desc bd({p.oc}, memory::data_type::f32, memory::format_tag::x);
    const convolution_forward::desc d(prop_kind::forward_inference, algorithm::convolution_direct, sd, wd, bd, dd,
            {p.sh, p.sw}, {p.dh, p.dw}, {p.ph, p.pw}, {p.ph_r, p.pw_r});
    return convolution_forward::primitive_desc(d, eng);
}

// oneDNN's primitive cache at capacity 0 while it lives.
struct onednn_cache_off_t {
    onednn_cache_off_t() : capacity_(dnnl::get_primitive_cache_capacity()) { dnnl::set_primitive_cache_capacity(0); }
    ~onednn_cache_off_t() { dnnl::set_primitive_cache_capacity(capacity_); }
    onednn_cache_off_t(const onednn_cache_off_t &) = delete;
    onednn_cache_off_t &operator=(const onednn_cache_off_t &) = delete;

private:
    int capacity_;
};

void run_gen_onednn(benchmark::State &state, const char *layer, variant_t v) {
    if (!bench::onednn_use_isa(state, v.level)) return;
    omp_set_num_threads(1);
    const dnnl::engine eng(dnnl::engine::kind::cpu, 0);
    const auto pd = onednn_pd(eng, desc_of(layer), v);
    const onednn_cache_off_t off;
    time_creations(state, [&] { return dnnl::convolution_forward(pd); });
    state.SetLabel(pd.impl_info_str());
}

void run_create_onednn(benchmark::State &state, const char *layer, variant_t v, bool cached) {
    if (!bench::onednn_use_isa(state, v.level)) return;
    omp_set_num_threads(1);
    const dnnl::engine eng(dnnl::engine::kind::cpu, 0);
    const conv_desc p = desc_of(layer);
    const auto pd = onednn_pd(eng, p, v);
    const dnnl::convolution_forward first(pd); // fills the cache
    std::unique_ptr<onednn_cache_off_t> off;
    if (!cached) off = std::make_unique<onednn_cache_off_t>();
    time_creations(state, [&] { return dnnl::convolution_forward(onednn_pd(eng, p, v)); });
    state.SetLabel(pd.impl_info_str());
}

// oneDNN's primitive for the other ops' rows: descriptor, primitive_desc, then the primitive
// (from its cache), as a user creates one.
dnnl::primitive create_other_onednn(const dnnl::engine &eng, const other_prb_t &p, const variant_t &v) {
    using namespace dnnl;
    using dt = memory::data_type;
    using tag = memory::format_tag;
    switch (p.kind) {
    case other_kind_t::ip: {
        const inner_product_desc &d = p.ip;
        const inner_product_forward::desc od(prop_kind::forward_inference, memory::desc({d.mb, d.ic}, dt::f32, tag::nc),
                memory::desc({d.oc, d.ic}, dt::f32, tag::oi), memory::desc({d.oc}, dt::f32, tag::x),
                memory::desc({d.mb, d.oc}, dt::f32, tag::nc));
        return inner_product_forward(inner_product_forward::primitive_desc(od, eng));
    }
    case other_kind_t::bnorm: {
        const dims_t dims = p.bnorm.src.dims();
        const memory::desc md(memory::dims(dims.begin(), dims.end()), dt::f32, onednn_act(v));
        const batch_normalization_forward::desc od(
                prop_kind::forward_training, md, p.bnorm.epsilon, normalization_flags::none);
        return batch_normalization_forward(batch_normalization_forward::primitive_desc(od, eng));
    }
    case other_kind_t::eltwise: {
        const memory::desc md(memory::dims(p.dims.begin(), p.dims.end()), dt::f32, onednn_act(v));
        const eltwise_forward::desc od(prop_kind::forward_inference, algorithm::eltwise_relu, md, 0.f, 0.f);
        return eltwise_forward(eltwise_forward::primitive_desc(od, eng));
    }
    }
    return {};
}

// The implementation a oneDNN primitive runs.
std::string onednn_impl(const dnnl::primitive &prim) {
    const char *s = nullptr;
    dnnl_primitive_desc_query(prim.get_primitive_desc(), dnnl_query_impl_info_str, 0, &s);
    return s ? s : "?";
}

void run_other_onednn(benchmark::State &state, other_op_t o, variant_t v) {
    if (!bench::onednn_use_isa(state, v.level)) return;
    omp_set_num_threads(1);
    const dnnl::engine eng(dnnl::engine::kind::cpu, 0);
    const other_prb_t p = parse_other(o, v);
    const dnnl::primitive first = create_other_onednn(eng, p, v); // fills the cache
    time_creations(state, [&] { return create_other_onednn(eng, p, v); });
    state.SetLabel(onednn_impl(first));
}
#endif

void register_all() {
    auto reg = [](const std::string &name, auto fn, auto... args) {
        bench::with_min(benchmark::RegisterBenchmark(name.c_str(), fn, args...))
                ->UseManualTime()
                ->Unit(benchmark::kMicrosecond);
    };
    for (const variant_t &v : variants)
        for (const char *layer : layers) {
            const std::string path = std::string("create/conv/") + v.name + "/";
            const std::string l = std::string("/") + layer + "/";
            reg(path + "jit_gen_cold" + l + "blockdnn", run_gen_blockdnn, layer, v);
            reg(path + "cached" + l + "blockdnn", run_create_blockdnn, layer, v, true);
            reg(path + "uncached" + l + "blockdnn", run_create_blockdnn, layer, v, false);
#ifdef BLOCKDNN_BENCH_ONEDNN
            reg(path + "jit_gen_cold" + l + "onednn", run_gen_onednn, layer, v);
            reg(path + "cached" + l + "onednn", run_create_onednn, layer, v, true);
            reg(path + "uncached" + l + "onednn", run_create_onednn, layer, v, false);
#endif
        }
    for (const variant_t &v : variants)
        for (const other_op_t &o : other_ops) {
            const std::string row = std::string("create/") + o.name + "/" + v.name + "/cached/" + o.problem + "/";
            reg(row + "blockdnn", run_other_blockdnn, o, v);
#ifdef BLOCKDNN_BENCH_ONEDNN
            reg(row + "onednn", run_other_onednn, o, v);
#endif
        }
}

} // namespace

int main(int argc, char **argv) { return bench::bench_main(argc, argv, register_all); }
