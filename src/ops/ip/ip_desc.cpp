// SPDX-License-Identifier: Apache-2.0
// inner_product_desc: validation and benchdnn text form (apart from the op, so the descriptor
// parsers link without the implementations).
#include "blockdnn/inner_product.hpp"
#include "core/spatial.hpp"
#include "core/utils.hpp"

namespace blockdnn {

using namespace impl;

namespace {
constexpr const char *op = "inner_product_fwd";
}

void inner_product_desc::validate() const {
    if (ndims < 2 || ndims > 5) fail(status::invalid_arguments, op, ": ndims = ", ndims, " must be 2 (nc), 3, 4 or 5");
    const std::pair<const char *, dim_t> counts[] = {
            {"mb", mb}, {"ic", ic}, {"oc", oc}, {"id", id}, {"ih", ih}, {"iw", iw}};
    for (int k = 0; k < 6; ++k) {
        const auto &[name, v] = counts[k];
        const bool used = k < 3 || k - 3 >= 5 - ndims;
        if (!used && v != 1)
            fail(status::invalid_arguments, op, ": ", name, " = ", v, " must be 1 when ndims = ", ndims);
        if (v <= 0) fail(status::invalid_arguments, op, ": ", name, " = ", v, " must be positive");
        check_field_range(op, name, v);
    }
}

std::string inner_product_desc::str() const {
    std::string s = cat("mb", mb, "ic", ic);
    if (ndims == 5) s += id == ih && ih == iw ? cat("id", id) : cat("id", id, "ih", ih, "iw", iw);
    else if (ndims == 4) s += ih == iw ? cat("ih", ih) : cat("ih", ih, "iw", iw);
    else if (ndims == 3) s += cat("iw", iw);
    return s + cat("oc", oc);
}

dims_t inner_product_desc::src_dims() const { return spatial_dims({mb, ic}, {id, ih, iw}, ndims); }
dims_t inner_product_desc::wei_dims() const { return spatial_dims({oc, ic}, {id, ih, iw}, ndims); }

} // namespace blockdnn
