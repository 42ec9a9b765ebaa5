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
    const windowed_keys_t w = scan_windowed(kind, text, keys, {"ic"});
    pool_desc d;
    set_windowed_fields(d, w, name);
    d.alg = alg;
    return validated(kind, text, d);
}

} // namespace blockdnn
