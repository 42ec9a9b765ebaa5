// SPDX-License-Identifier: Apache-2.0
// What the op cases share: seeded fills, logical values, the error measure, default layouts,
// and make_case's dispatch on the op kind.
#include "driver/op_case.hpp"

#include <cmath>

#include "core/prb_parse.hpp"
#include "testing/tolerances.hpp"

namespace bdrv {

using namespace blockdnn;

namespace {

// Calls fn(offset) for every logical element of d in canonical order.
template <typename F>
void for_each_offset(const tensor_desc &d, F &&fn) {
    const int nd = d.ndims();
    dim_t idx[max_ndims] = {};
    for (dim_t k = 0, n = d.nelems(); k < n; ++k) {
        fn(d.offset(idx));
        for (int i = nd - 1; i >= 0; --i) {
            if (++idx[i] < d.dim(i)) break;
            idx[i] = 0;
        }
    }
}

} // namespace

void fill_seeded(const tensor &t, unsigned seed, float lo, float hi, bool integers) {
    std::mt19937 gen(seed);
    float *p = t.f32();
    if (integers) {
        std::uniform_int_distribution<int> u(static_cast<int>(lo), static_cast<int>(hi));
        for_each_offset(t.desc(), [&](dim_t o) { p[o] = static_cast<float>(u(gen)); });
    } else {
        std::uniform_real_distribution<float> u(lo, hi);
        for_each_offset(t.desc(), [&](dim_t o) { p[o] = u(gen); });
    }
}

std::vector<float> logical_values(const tensor &t) {
    std::vector<float> v;
    v.reserve(static_cast<std::size_t>(t.desc().nelems()));
    const float *p = t.f32();
    for_each_offset(t.desc(), [&](dim_t o) { v.push_back(p[o]); });
    return v;
}

double max_err(const std::vector<float> &got, const std::vector<float> &want) { return tol::rel_err(got, want); }

format_tag act_layout(const std::string &word, int ndims, isa level) {
    if (word != "any") return impl::parse_tag(word, ndims);
    if (level == isa::scalar || ndims < 3) return impl::parse_tag("abx", ndims);
    return impl::parse_tag(level == isa::avx512_core ? "aBx16b" : "aBx8b", ndims);
}

std::unique_ptr<op_case_t> make_case(const spec_t &s) {
    if (auto *c = std::get_if<conv_spec_t>(&s.op)) return make_conv_case(*c);
    if (auto *b = std::get_if<bnorm_spec_t>(&s.op)) return make_bnorm_case(*b);
    if (auto *r = std::get_if<rnn_spec_t>(&s.op)) return make_rnn_case(*r);
    if (auto *p = std::get_if<pool_spec_t>(&s.op)) return make_pool_case(*p);
    return make_eltwise_case(std::get<eltwise_spec_t>(s.op));
}

} // namespace bdrv
