// SPDX-License-Identifier: Apache-2.0
// Parser of benchdnn's batch normalization descriptors, mbXicX_idXihXiwX_epsF_nNAME (rules:
// parse_bnorm_desc in blockdnn/bnorm.hpp), shared by tests, bench, blockdnn-bench and kernelgen.
#include <cctype>
#include <cmath>
#include <cstdlib>

#include "blockdnn/bnorm.hpp"
#include "core/prb_parse.hpp"
#include "core/utils.hpp"

namespace blockdnn {

using impl::fail;

bnorm_desc parse_bnorm_desc(std::string_view text_view, std::string *name) {
    constexpr const char *what = "bnorm descriptor";
    const std::string text(text_view);
    dim_t mb = 2, ic = 0, id = 0, ih = 0, iw = 0;
    float eps = 1.f / 16;
    bool has_ic = false;
    std::size_t i = 0;
    while (i < text.size()) {
        if (text[i] == '_') {
            ++i;
            continue;
        }
        if (text[i] == 'n') { // the name runs to the end; quotes are decoration
            std::string nm = text.substr(i + 1);
            if (nm.size() >= 2 && nm.front() == '"' && nm.back() == '"') nm = nm.substr(1, nm.size() - 2);
            if (name) *name = nm;
            break;
        }
        std::size_t k = i;
        while (k < text.size() && std::isalpha(static_cast<unsigned char>(text[k]))) ++k;
        const std::string key = text.substr(i, k - i);
        const char *begin = text.c_str() + k;
        char *end = nullptr;
        if (key != "eps" && key.rfind("eps", 0) == 0) // "epsx": the letters after eps are no number
            fail(status::invalid_arguments, what, " '", text, "': eps needs a number");
        if (key == "eps") {
            eps = std::strtof(begin, &end);
            if (end == begin) fail(status::invalid_arguments, what, " '", text, "': eps needs a number");
            if (!std::isfinite(eps)) { // 1e40 reads as inf: name the text, not the inf
                const std::string written(begin, static_cast<const char *>(end));
                fail(status::invalid_arguments, what, " '", text, "': eps ", written, " is not a finite float");
            }
        } else {
            const long long v = std::strtoll(begin, &end, 10);
            if (end == begin || v <= 0)
                fail(status::invalid_arguments, what, " '", text, "': ", key.empty() ? "a key" : key,
                        " needs a positive integer");
            if (key == "mb") mb = v;
            else if (key == "ic") ic = v, has_ic = true;
            else if (key == "id") id = v;
            else if (key == "ih") ih = v;
            else if (key == "iw") iw = v;
            else fail(status::invalid_arguments, what, " '", text, "': unknown key '", key, "' (mb ic id ih iw eps n)");
        }
        i = static_cast<std::size_t>(end - text.c_str());
    }
    if (!has_ic) fail(status::invalid_arguments, what, " '", text, "': ic is required");
    // A missing size is copied from the higher one; the highest given sets the rank.
    dims_t dims = {mb, ic};
    if (id) dims.push_back(id);
    if (ih || id) dims.push_back(ih ? ih : id);
    if (iw || ih || id) dims.push_back(iw ? iw : ih ? ih : id);
    const format_tag plain[] = {format_tag::nc, format_tag::ncw, format_tag::nchw, format_tag::ncdhw};
    bnorm_desc d;
    d.src = tensor_desc(dims, plain[dims.size() - 2]);
    d.epsilon = eps;
    return impl::validated("bnorm", text, d);
}

} // namespace blockdnn
