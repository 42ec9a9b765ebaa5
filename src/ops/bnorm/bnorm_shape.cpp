// SPDX-License-Identifier: Apache-2.0
// Parser of benchdnn's batch normalization descriptors (see bnorm_shape.hpp).
#include <cctype>
#include <cmath>
#include <cstdlib>

#include "ops/bnorm/bnorm_shape.hpp"
#include "core/utils.hpp"

namespace blockdnn::impl {

dims_t bnorm_shape_t::dims() const {
    switch (ndims) {
    case 2: return {mb, ic};
    case 3: return {mb, ic, iw};
    case 4: return {mb, ic, ih, iw};
    default: return {mb, ic, id, ih, iw};
    }
}

std::string bnorm_shape_t::str() const {
    std::string s = cat("mb", mb, "ic", ic);
    if (ndims == 5) s += cat("id", id, "ih", ih, "iw", iw);
    else if (ndims == 4) s += ih == iw ? cat("ih", ih) : cat("ih", ih, "iw", iw);
    else if (ndims == 3) s += cat("iw", iw);
    if (eps != 1.f / 16) s += cat("eps", eps);
    return s;
}

bnorm_shape_t parse_bnorm_shape(const std::string &text) {
    constexpr const char *what = "bnorm descriptor";
    bnorm_shape_t s;
    dim_t id = 0, ih = 0, iw = 0;
    bool has_ic = false;
    std::size_t i = 0;
    while (i < text.size()) {
        if (text[i] == '_') {
            ++i;
            continue;
        }
        if (text[i] == 'n') { // the name runs to the end; quotes are decoration
            std::string name = text.substr(i + 1);
            if (name.size() >= 2 && name.front() == '"' && name.back() == '"') name = name.substr(1, name.size() - 2);
            s.name = name;
            break;
        }
        std::size_t k = i;
        while (k < text.size() && std::isalpha(static_cast<unsigned char>(text[k]))) ++k;
        const std::string key = text.substr(i, k - i);
        const char *begin = text.c_str() + k;
        char *end = nullptr;
        if (key == "eps") {
            s.eps = std::strtof(begin, &end);
            if (end == begin) fail(status::invalid_arguments, what, " '", text, "': eps needs a number");
            if (!std::isfinite(s.eps)) { // 1e40 reads as inf: name the text, not the inf
                const std::string written(begin, static_cast<const char *>(end));
                fail(status::invalid_arguments, what, " '", text, "': eps ", written, " is not a finite float");
            }
        } else {
            const long long v = std::strtoll(begin, &end, 10);
            if (end == begin || v <= 0)
                fail(status::invalid_arguments, what, " '", text, "': ", key.empty() ? "a key" : key,
                        " needs a positive integer");
            if (key == "mb") s.mb = v;
            else if (key == "ic") s.ic = v, has_ic = true;
            else if (key == "id") id = v;
            else if (key == "ih") ih = v;
            else if (key == "iw") iw = v;
            else fail(status::invalid_arguments, what, " '", text, "': unknown key '", key, "' (mb ic id ih iw eps n)");
        }
        i = static_cast<std::size_t>(end - text.c_str());
    }
    if (!has_ic) fail(status::invalid_arguments, what, " '", text, "': ic is required");
    s.ndims = id ? 5 : ih ? 4 : iw ? 3 : 2;
    if (!ih) ih = id;
    if (!iw) iw = ih;
    s.id = id ? id : 1;
    s.ih = ih ? ih : 1;
    s.iw = iw ? iw : 1;
    return s;
}

} // namespace blockdnn::impl
