// SPDX-License-Identifier: Apache-2.0
// What the op cases share: the error measure, default layouts and make_case's dispatch on
// the op kind (seeded fills and logical values: testing/fill.hpp).
#include "driver/op_case.hpp"

#include "core/prb_parse.hpp"
#include "testing/tolerances.hpp"

namespace bdrv {

using namespace blockdnn;

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
    if (auto *e = std::get_if<eltwise_spec_t>(&s.op)) return make_eltwise_case(*e);
    return make_softmax_case(std::get<softmax_spec_t>(s.op));
}

} // namespace bdrv
