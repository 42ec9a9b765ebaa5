// SPDX-License-Identifier: Apache-2.0
// The benchdnn parser of binary_desc (declared in include/blockdnn/binary.hpp), on the shared
// pieces of src/core/prb_parse.
#include "blockdnn/binary.hpp"
#include "core/prb_parse.hpp"

namespace blockdnn {

using namespace impl;

binary_desc parse_binary_desc(std::string_view text, binary_alg alg, std::string *name) {
    const char *kind = "binary";
    const desc_options_t o = split_options(kind, text, {"--alg"});
    binary_desc d;
    d.alg = alg;
    if (o.opts.count("--alg")) {
        const std::string a = o.get("--alg", "");
        if (a == "add") d.alg = binary_alg::add;
        else if (a == "mul") d.alg = binary_alg::mul;
        else bad_descriptor(kind, text, "--alg='", a, "' is not a binary_alg (add, mul)");
    }
    const std::size_t colon = o.desc.find(':');
    if (colon == std::string::npos)
        bad_descriptor(kind, text, "no ':' between src0's and src1's dims (e.g. 2x16x7x7:2x16x1x1)");
    d.src0_dims = parse_dims(o.desc.substr(0, colon));
    d.src1_dims = parse_dims(o.desc.substr(colon + 1), name);
    return validated(kind, text, d);
}

} // namespace blockdnn
