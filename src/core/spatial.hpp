// SPDX-License-Identifier: Apache-2.0
// One spatial dim of a windowed problem (conv, pooling): sizes, stride, pads, dilation, the
// output-size formula and its validation rules, shared by the descriptors of both ops.
#pragma once

#include <array>
#include <initializer_list>
#include <string>
#include <vector>

#include "blockdnn/types.hpp"

namespace blockdnn::impl {

/// The fields of one spatial dim ('d', 'h' or 'w'), benchdnn names without the letter.
struct spatial_t {
    char letter;
    dim_t i, o, k, s, p, p_r, dl; // dl: dilation, 0 = dense

    /// Kernel extent: (k - 1) * (dl + 1) + 1.
    dim_t ext() const { return (k - 1) * (dl + 1) + 1; }
    /// (i + p + p_r - ext) / s + 1 (floor for the non-negative numerators validation allows).
    dim_t out_size() const { return (i + p + p_r - ext()) / s + 1; }
    /// The begin pad benchdnn derives when o is given and p is not: ((o-1)*s - i + ext) / 2.
    dim_t implied_begin_pad() const { return ((o - 1) * s - i + ext()) / 2; }
    /// The smallest end pad giving o: (o-1)*s - i + ext - p (benchdnn's pad_r).
    dim_t implied_end_pad() const { return (o - 1) * s - i + ext() - p; }
    /// "ih" style name of a field: field_name("i") for this dim.
    std::string name(const char *field) const { return std::string(field) + letter; }
};

/// Throws invalid_arguments unless |v| < 2^31, so the size arithmetic cannot overflow.
void check_field_range(const char *op, const std::string &name, dim_t v);

/// Throws invalid_arguments if i, k, s, p, p_r or dl is out of check_field_range's range, or
/// if the kernel extent exceeds the padded input (i + p + p_r < ext).
void check_kernel_fits(const char *op, const spatial_t &sp);

/// Every rule of a used spatial dim: field ranges; i, o, k > 0; s >= 1; p >= 0; dl >= 0;
/// the kernel fits the padded input; o equals out_size().
void check_spatial(const char *op, const spatial_t &sp);

/// Throws invalid_arguments if some output position's window has no tap inside [0, i)
/// (pooling needs one: the max or exclude-pad average of nothing is undefined).
void check_windows_cover_input(const char *op, const spatial_t &sp);

/// Fields of a dim the problem does not have must hold their defaults (i = o = k = s = 1,
/// p = p_r = dl = 0).
void check_unused_spatial(const char *op, const spatial_t &sp, int ndims);

/// Which of the groups {d, h, w} (indices 0..2) a benchdnn descriptor must print, starting at
/// group `first` (2 for 1-D, 1 for 2-D, 0 for 3-D): benchdnn copies a missing w group from h,
/// and a missing h and w from d, so equal groups are left out.
std::vector<int> shown_spatial_groups(const std::array<spatial_t, 3> &gs, int first);

/// {lead..., the last ndims - lead.size() of sp}: e.g. ({mb, ic}, {id, ih, iw}, 4) -> {mb, ic, ih, iw}.
dims_t spatial_dims(std::initializer_list<dim_t> lead, std::array<dim_t, 3> sp, int ndims);

} // namespace blockdnn::impl
