// SPDX-License-Identifier: Apache-2.0
// The benchdnn parser of pool_desc (declared in include/blockdnn/pool.hpp), on the shared
// scanner and spatial rules of src/core/prb_parse.
#include "blockdnn/pool.hpp"
#include "core/prb_parse.hpp"

namespace blockdnn {

using namespace impl;

pool_desc parse_pool_desc(std::string_view text, pool_alg alg, std::string *name) {
    const char *kind = "pool";
    static const std::vector<std::string> keys = window_keys({"mb", "ic"});
    const desc_keys_t s = scan_descriptor(kind, text, keys);
    if (!s.has("ic")) bad_descriptor(kind, text, "'ic' is missing");
    std::array<spatial_t, 3> sp;
    const int nd = complete_spatial(kind, text, s, sp, true);
    if (nd == 2) bad_descriptor(kind, text, "no spatial keys (give at least 'iw' and 'kw', or 'ih' and 'kh')");
    pool_desc d;
    d.alg = alg;
    d.ndims = nd;
    d.mb = s.get("mb", 2);
    d.ic = s.get("ic", 0);
    set_spatial_groups(d, sp);
    if (name) *name = s.name;
    return validated(kind, text, d);
}

} // namespace blockdnn
