// SPDX-License-Identifier: Apache-2.0
// The benchdnn parser of the eltwise problem (parse_eltwise_desc, declared in
// include/blockdnn/eltwise.hpp) and the internal forms tests and kernelgen build problems
// with, on the shared pieces of src/core/prb_parse.
#include "core/prb_parse.hpp"
#include "ops/eltwise/eltwise_impl.hpp"

namespace blockdnn {

namespace impl {

eltwise_prb_t eltwise_prb_from_fields(
        const std::string &alg, float alpha, float beta, const std::string &dims, const std::string &tag) {
    eltwise_desc d;
    d.alg = eltwise_alg_from_string(alg);
    d.alpha = alpha;
    d.beta = beta;
    d.dims = parse_dims(dims);
    const format_tag t = parse_tag(tag, static_cast<int>(d.dims.size()));
    return make_eltwise_prb(d, t, t);
}

eltwise_prb_t parse_eltwise_prb(std::string_view text) {
    const char *kind = "eltwise";
    const desc_options_t o = split_options(kind, text, {"--alg", "--alpha", "--beta", "--tag"});
    const float alpha = option_float(kind, text, o, "--alpha", 0.f);
    const float beta = option_float(kind, text, o, "--beta", 0.f);
    return eltwise_prb_from_fields(o.get("--alg", "relu"), alpha, beta, o.desc, o.get("--tag", "abx"));
}

} // namespace impl

eltwise_desc parse_eltwise_desc(std::string_view text, format_tag *tag) {
    const impl::eltwise_prb_t p = impl::parse_eltwise_prb(text);
    if (tag) *tag = p.desc.tag();
    return p.op_desc();
}

} // namespace blockdnn
