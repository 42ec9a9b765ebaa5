// SPDX-License-Identifier: Apache-2.0
// benchdnn dims and tags (see prb_parse.hpp).
#include <cctype>

#include "common/prb_parse.hpp"
#include "common/utils.hpp"

namespace blockdnn::impl {

dims_t parse_dims(const std::string &text) {
    dims_t dims;
    std::size_t i = 0;
    while (i < text.size()) {
        if (!std::isdigit(static_cast<unsigned char>(text[i])))
            fail(status::invalid_arguments, "dims '", text, "': expected a number at position ", i);
        dim_t v = 0;
        for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
            if (v > (dim_t(1) << 50)) fail(status::invalid_arguments, "dims '", text, "': number too large");
            v = v * 10 + (text[i] - '0');
        }
        if (v <= 0) fail(status::invalid_arguments, "dims '", text, "': dims[", dims.size(), "] = ", v, " must be positive");
        dims.push_back(v);
        if (i == text.size()) break;
        if (text[i] == 'x') {
            ++i;
            continue;
        }
        if (text[i] == 'n' || (text[i] == '_' && i + 1 < text.size() && text[i + 1] == 'n')) break; // a name
        fail(status::invalid_arguments, "dims '", text, "': unexpected '", text[i], "' at position ", i);
    }
    if (dims.empty()) fail(status::invalid_arguments, "dims '", text, "': no dims");
    if (static_cast<int>(dims.size()) > max_ndims)
        fail(status::invalid_arguments, "dims '", text, "': ", dims.size(), " dims, at most ", max_ndims);
    return dims;
}

format_tag parse_tag(const std::string &text, int ndims) {
    using ft = format_tag;
    auto pick = [&](ft t1, ft t2, ft t3, ft t4, ft t5) {
        const ft v[] = {t1, t2, t3, t4, t5}; // for ndims 1..5
        return ndims >= 1 && ndims <= 5 ? v[ndims - 1] : ft::undef;
    };
    ft t = ft::undef;
    if (text == "abx") t = pick(ft::x, ft::nc, ft::ncw, ft::nchw, ft::ncdhw);
    else if (text == "axb") t = pick(ft::undef, ft::nc, ft::nwc, ft::nhwc, ft::ndhwc);
    else if (text == "aBx8b") t = pick(ft::undef, ft::undef, ft::nCw8c, ft::nChw8c, ft::nCdhw8c);
    else if (text == "aBx16b") t = pick(ft::undef, ft::undef, ft::nCw16c, ft::nChw16c, ft::nCdhw16c);
    else t = format_tag_from_string(text); // throws naming the tag if unknown
    if (t == ft::undef || ndims_of(t) != ndims)
        fail(status::invalid_arguments, "tag '", text, "' does not describe ", ndims, " dims");
    return t;
}

} // namespace blockdnn::impl
