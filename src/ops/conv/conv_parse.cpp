// SPDX-License-Identifier: Apache-2.0
// The benchdnn parser of conv_desc (declared in include/blockdnn/conv.hpp), on the shared
// scanner and spatial rules of src/core/prb_parse.
#include "blockdnn/conv.hpp"
#include "core/prb_parse.hpp"

namespace blockdnn {

using namespace impl;

conv_desc parse_conv_desc(std::string_view text, std::string *name) {
    const char *kind = "conv";
    static const std::vector<std::string> keys = window_keys({"g", "mb", "ic", "oc"});
    const windowed_keys_t w = scan_windowed(kind, text, keys, {"ic", "oc"});
    conv_desc d;
    set_windowed_fields(d, w, name);
    d.g = w.keys.get("g", 1);
    d.oc = w.keys.get("oc", 0);
    return validated(kind, text, d);
}

} // namespace blockdnn
