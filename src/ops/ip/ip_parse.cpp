// SPDX-License-Identifier: Apache-2.0
// The benchdnn parser of inner_product_desc (declared in include/blockdnn/inner_product.hpp), on the shared
// scanner and spatial rules of src/core/prb_parse.
#include "blockdnn/inner_product.hpp"
#include "core/prb_parse.hpp"

namespace blockdnn {

using namespace impl;

inner_product_desc parse_ip_desc(std::string_view text, std::string *name) {
    const char *kind = "ip";
    static const std::vector<std::string> keys = {"mb", "ic", "oc", "id", "ih", "iw"};
    const desc_keys_t s = scan_descriptor(kind, text, keys);
    require_keys(kind, text, s, {"ic", "oc"});
    std::array<spatial_t, 3> sp;
    inner_product_desc d;
    d.ndims = complete_spatial(kind, text, s, sp, false);
    d.mb = s.get("mb", 2);
    d.ic = s.get("ic", 0);
    d.oc = s.get("oc", 0);
    d.id = sp[0].i, d.ih = sp[1].i, d.iw = sp[2].i;
    if (name) *name = s.name;
    return validated(kind, text, d);
}

} // namespace blockdnn
