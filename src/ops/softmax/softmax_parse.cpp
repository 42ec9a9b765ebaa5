// SPDX-License-Identifier: Apache-2.0
// The benchdnn parser of softmax_desc (declared in include/blockdnn/softmax.hpp), on the shared
// pieces of src/core/prb_parse.
#include "blockdnn/softmax.hpp"
#include "core/prb_parse.hpp"

namespace blockdnn {

using namespace impl;

softmax_desc parse_softmax_desc(std::string_view text, int axis, std::string *name) {
    const char *kind = "softmax";
    const desc_options_t o = split_options(kind, text, {"--axis"});
    softmax_desc d;
    d.dims = parse_dims(o.desc, name);
    d.axis = option_int(kind, text, o, "--axis", axis);
    return validated(kind, text, d);
}

} // namespace blockdnn
