// SPDX-License-Identifier: Apache-2.0
// Parser of oneDNN benchdnn RNN problem descriptors, "l1t50mb64sic512" and friends (syntax:
// benchdnn doc/driver_rnn.md; rules: parse_rnn_desc in blockdnn/rnn.hpp), shared by tests,
// bench, blockdnn-bench and kernelgen.
#include <cctype>
#include <map>
#include <utility>

#include "blockdnn/rnn.hpp"
#include "core/utils.hpp"

namespace blockdnn {

using impl::cat;
using impl::fail;

rnn_desc parse_rnn_desc(std::string_view text, std::string *name) {
    const std::string quoted = cat("rnn descriptor '", text, "'");
    // A key is the run of letters before its number; no key holds an 'n', which starts the name.
    std::map<std::string, dim_t> got;
    std::size_t i = 0;
    while (i < text.size()) {
        if (text[i] == '_') {
            ++i;
            continue;
        }
        if (!std::isalpha(static_cast<unsigned char>(text[i])))
            fail(status::invalid_arguments, quoted, ": unexpected '", text[i], "' at ", i);
        std::size_t k = i;
        while (k < text.size() && std::isalpha(static_cast<unsigned char>(text[k])) && text[k] != 'n') ++k;
        std::string key(text.substr(i, k - i));
        if (key.empty() && text[i] == 'n') {
            std::string nm(text.substr(i + 1));
            if (nm.size() >= 2 && nm.front() == '"' && nm.back() == '"') nm = nm.substr(1, nm.size() - 2);
            if (name) *name = nm;
            break;
        }
        static const char *const keys[] = {"l", "t", "mb", "sic", "slc", "dhc", "dic"};
        bool known = false;
        for (const char *kk : keys) known |= key == kk;
        if (!known) fail(status::invalid_arguments, quoted, ": unknown key '", key, "'");
        if (got.count(key)) fail(status::invalid_arguments, quoted, ": key '", key, "' repeated");
        std::size_t j = k;
        while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
        if (j == k) fail(status::invalid_arguments, quoted, ": key '", key, "' has no number");
        if (j - k > 12) fail(status::invalid_arguments, quoted, ": number for key '", key, "' is too long");
        got[key] = std::stoll(std::string(text.substr(k, j - k)));
        i = j;
    }
    if (!got.count("sic")) fail(status::invalid_arguments, quoted, ": sic is required");
    auto val = [&](const char *k, dim_t dflt) { return got.count(k) ? got[k] : dflt; };
    rnn_desc d;
    d.l = val("l", 1);
    d.t = val("t", 1);
    d.mb = val("mb", 2);
    d.sic = got["sic"];
    d.slc = val("slc", d.sic);
    d.dhc = val("dhc", d.sic);
    d.dic = val("dic", d.dhc);
    // Only the sizes: rnn_desc::validate also ties sic and dic to dhc, which a descriptor may
    // break and still parse (a driver reports such a problem as unsupported).
    const std::pair<const char *, dim_t> sizes[] = {
            {"l", d.l}, {"t", d.t}, {"mb", d.mb}, {"sic", d.sic}, {"slc", d.slc}, {"dhc", d.dhc}, {"dic", d.dic}};
    for (const auto &[key, v] : sizes)
        if (v < 1) fail(status::invalid_arguments, quoted, ": rnn_fwd: ", key, " = ", v, " must be positive");
    return d;
}

} // namespace blockdnn
