// SPDX-License-Identifier: Apache-2.0
// oneDNN convolutions and softmaxes beside blockdnn's in blockdnn-bench (see baseline_onednn.hpp).
#include "driver/baseline_onednn.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

#include "driver/op_case.hpp"
#ifdef BLOCKDNN_HAVE_ONEDNN
#include "onednn_conv.hpp"
#include "onednn_softmax.hpp"
#endif

namespace bdrv {

using namespace blockdnn;

#ifdef BLOCKDNN_HAVE_ONEDNN
namespace {

// The median ms of `reps` executions, after one warm-up, of the oneDNN primitive make()
// creates; impl gets its implementation name.
template <typename Make>
double median_ms(Make &&make, int reps, std::string &impl) {
    // The two libraries' idle threads spin a while after a run (OpenMP's for up to
    // milliseconds): a pause on either side keeps one from slowing the other's timing.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    auto prim = make();
    impl = prim.impl_name();
    prim.execute();
    std::vector<double> t;
    for (int r = 0; r < reps; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        prim.execute();
        t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(t.begin(), t.end());
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return t[t.size() / 2];
}

double conv_ms(const conv_spec_t &c, isa level, int threads, int reps, std::string &impl) {
    if (!c.po.empty()) return 0;
    const int nd = c.desc.ndims;
    const format_tag st = c.stag == "any" && c.desc.ic <= 4 && c.desc.g == 1 ? act_layout("abx", nd, level)
                                                                             : act_layout(c.stag, nd, level);
    return median_ms(
            [&] { return bench::onednn_conv_t(c.desc, st, act_layout(c.dtag, nd, level), threads); }, reps, impl);
}

double softmax_ms(const softmax_spec_t &s, isa level, int threads, int reps, std::string &impl) {
    const format_tag tag = act_layout(s.tag, static_cast<int>(s.desc.dims.size()), level);
    // oneDNN's side takes plain layouts only (its memory desc from blockdnn's strides).
    if (tensor_desc(s.desc.dims, tag).is_blocked()) return 0;
    return median_ms([&] { return bench::onednn_softmax_t(s.desc, tag, s.inplace, threads); }, reps, impl);
}

} // namespace

baseline_t onednn_baseline(const std::vector<isa> &isas, std::string &why) {
    if (isas.empty() || isas.front() == isa::scalar) {
        why = "the oneDNN baseline runs beside the avx512 or avx2 rows only";
        return {};
    }
    const isa level = isas.front();
    if (level == isa::avx2 && !bench::onednn_conv_t::cap_isa_avx2()) {
        why = "oneDNN refused the avx2 cap";
        return {};
    }
    if (level == isa::avx512_core && !bench::onednn_conv_t::has_avx512()) {
        why = "oneDNN does not run AVX-512 code here";
        return {};
    }
    return [level](const spec_t &s, isa row_isa, int threads, int reps, std::string &impl) -> double {
        if (row_isa != level) return 0;
        if (const auto *c = std::get_if<conv_spec_t>(&s.op)) return conv_ms(*c, level, threads, reps, impl);
        if (const auto *m = std::get_if<softmax_spec_t>(&s.op)) return softmax_ms(*m, level, threads, reps, impl);
        return 0;
    };
}
#else
baseline_t onednn_baseline(const std::vector<isa> &, std::string &why) {
    why = "this blockdnn-bench was built without oneDNN (meson option onednn_baseline; Debian libdnnl-dev)";
    return {};
}
#endif

} // namespace bdrv
