// SPDX-License-Identifier: Apache-2.0
// The eltwise problem: validation (the op's rules, each naming field and value), its text
// form, and the benchdnn-style descriptor parser used by tests, benchmarks and kernelgen.
#include <cmath>
#include <sstream>

#include "core/prb_parse.hpp"
#include "core/utils.hpp"
#include "ops/eltwise/eltwise_impl.hpp"

namespace blockdnn::impl {

std::string eltwise_prb_t::str() const {
    return cat("alg:", to_string(alg), " alpha:", alpha, " beta:", beta, " ", desc.str());
}

void check_eltwise_prb(const eltwise_prb_t &p) {
    const int a = static_cast<int>(p.alg);
    if (a < static_cast<int>(eltwise_alg::relu) || a > static_cast<int>(eltwise_alg::linear))
        fail(status::invalid_arguments, "eltwise_fwd: alg = ", a, " is not an eltwise_alg");
    if (p.desc.ndims() == 0) fail(status::invalid_arguments, "eltwise_fwd: desc is empty (ndims = 0)");
    if (!std::isfinite(p.alpha)) fail(status::invalid_arguments, "eltwise_fwd: alpha = ", p.alpha, " is not finite");
    if (!std::isfinite(p.beta)) fail(status::invalid_arguments, "eltwise_fwd: beta = ", p.beta, " is not finite");
    if (p.alg == eltwise_alg::clip && p.alpha > p.beta)
        fail(status::invalid_arguments, "eltwise_fwd: clip lower bound alpha = ", p.alpha,
                " exceeds upper bound beta = ", p.beta);
}

namespace {

float parse_float(const std::string &key, const std::string &v) {
    std::size_t used = 0;
    float f = 0;
    try {
        f = std::stof(v, &used);
    } catch (const std::exception &) {
        used = 0;
    }
    if (used == 0 || used != v.size()) fail(status::invalid_arguments, "eltwise descriptor: ", key, "='", v, "' is not a number");
    return f;
}

} // namespace

eltwise_prb_t parse_eltwise_desc(const std::string &text) {
    std::istringstream in(text);
    std::string alg = "relu", tag = "abx", dims;
    float alpha = 0.f, beta = 0.f;
    for (std::string tok; in >> tok;) {
        const std::size_t eq = tok.find('=');
        const std::string key = tok.substr(0, eq), val = eq == std::string::npos ? "" : tok.substr(eq + 1);
        if (key == "--alg") alg = val;
        else if (key == "--alpha") alpha = parse_float(key, val);
        else if (key == "--beta") beta = parse_float(key, val);
        else if (key == "--tag") tag = val;
        else if (tok.rfind("--", 0) == 0)
            fail(status::invalid_arguments, "eltwise descriptor: unknown option '", tok,
                    "'; expected --alg=, --alpha=, --beta=, --tag= and dims");
        else if (!dims.empty())
            fail(status::invalid_arguments, "eltwise descriptor: two dims, '", dims, "' and '", tok, "'");
        else dims = tok;
    }
    if (dims.empty()) fail(status::invalid_arguments, "eltwise descriptor '", text, "': no dims (e.g. 8x16x56x56)");
    eltwise_prb_t p;
    p.alg = eltwise_alg_from_string(alg);
    p.alpha = alpha;
    p.beta = beta;
    const dims_t d = parse_dims(dims);
    p.desc = tensor_desc(d, parse_tag(tag, static_cast<int>(d.size())));
    check_eltwise_prb(p);
    return p;
}

} // namespace blockdnn::impl
