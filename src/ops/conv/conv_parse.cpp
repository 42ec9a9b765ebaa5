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
    const desc_keys_t s = scan_descriptor(kind, text, keys);
    for (const char *req : {"ic", "oc"})
        if (!s.has(req)) bad_descriptor(kind, text, "'", req, "' is missing");
    std::array<spatial_t, 3> sp;
    const int nd = complete_spatial(kind, text, s, sp, true);
    if (nd == 2) bad_descriptor(kind, text, "no spatial keys (give at least 'iw' and 'kw', or 'ih' and 'kh')");
    conv_desc d;
    d.ndims = nd;
    d.mb = s.get("mb", 2);
    d.g = s.get("g", 1);
    d.ic = s.get("ic", 0);
    d.oc = s.get("oc", 0);
    set_spatial_groups(d, sp);
    if (name) *name = s.name;
    return validated(kind, text, d);
}

} // namespace blockdnn
