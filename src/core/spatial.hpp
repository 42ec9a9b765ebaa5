// SPDX-License-Identifier: Apache-2.0
// One spatial dim of a windowed problem (conv, pooling): sizes, stride, pads, dilation, the
// output-size formula and its validation rules, shared by the descriptors of both ops.
#pragma once

#include <algorithm>
#include <array>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "blockdnn/types.hpp"
#include "core/utils.hpp"

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

/// The taps k in [lo, hi) of one dim's window that fall inside the input: the window of
/// output o covers o*s - p + k*(dl + 1) for k < kernel, and the ones in [0, i) form one run
/// (lo = hi when none does).
struct tap_range_t {
    dim_t lo = 0, hi = 0;
    dim_t size() const { return hi - lo; }
};

inline tap_range_t tap_range(dim_t o, dim_t s, dim_t p, dim_t dl, dim_t kernel, dim_t i) {
    const dim_t start = o * s - p, step = dl + 1;
    // Undilated kernels skip the divisions: the JIT drivers call this for each small call.
    const dim_t lo = start < 0 ? (step == 1 ? -start : div_up(-start, step)) : 0;
    const dim_t hi = start >= i ? 0 : std::min(kernel, step == 1 ? i - start : div_up(i - start, step));
    return {lo, std::max(lo, hi)};
}

/// The d, h, w groups of a windowed desc (conv_desc, pool_desc), for loops over the dims.
template <typename desc_t>
std::array<spatial_t, 3> spatial_groups(const desc_t &c) {
    return {spatial_t {'d', c.id, c.od, c.kd, c.sd, c.pd, c.pd_r, c.dd},
            spatial_t {'h', c.ih, c.oh, c.kh, c.sh, c.ph, c.ph_r, c.dh},
            spatial_t {'w', c.iw, c.ow, c.kw, c.sw, c.pw, c.pw_r, c.dw}};
}

/// d's windowed fields from the three groups: the inverse of spatial_groups.
template <typename desc_t>
void set_spatial_groups(desc_t &d, const std::array<spatial_t, 3> &sp) {
    d.id = sp[0].i, d.ih = sp[1].i, d.iw = sp[2].i;
    d.od = sp[0].o, d.oh = sp[1].o, d.ow = sp[2].o;
    d.kd = sp[0].k, d.kh = sp[1].k, d.kw = sp[2].k;
    d.sd = sp[0].s, d.sh = sp[1].s, d.sw = sp[2].s;
    d.pd = sp[0].p, d.ph = sp[1].p, d.pw = sp[2].p;
    d.pd_r = sp[0].p_r, d.ph_r = sp[1].p_r, d.pw_r = sp[2].p_r;
    d.dd = sp[0].dl, d.dh = sp[1].dl, d.dw = sp[2].dl;
}

/// Whether |v| < 2^31, the range that keeps the size arithmetic from overflowing.
constexpr bool field_in_range(dim_t v) { return v < (dim_t(1) << 31) && v > -(dim_t(1) << 31); }

/// "ih = 3000000000 is out of range (|ih| < 2^31)": the message of a field not in range.
std::string out_of_range_text(std::string_view name, dim_t v);

/// Throws invalid_arguments, "<op>: " and out_of_range_text, unless field_in_range(v).
void check_field_range(const char *op, std::string_view name, dim_t v);

/// Throws invalid_arguments if i, k, s, p, p_r or dl is out of check_field_range's range, or
/// if the kernel extent exceeds the padded input (i + p + p_r < ext).
void check_kernel_fits(const char *op, const spatial_t &sp);

/// Every rule of a used spatial dim: field ranges; i, o, k > 0; s >= 1; dl >= 0; p >= 0;
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

/// The spatial keys of a benchdnn windowed descriptor of `ndims` dims (3 to 5), for the groups
/// shown_spatial_groups shows: the i keys, then `after_i` (conv's "oc29"), the o and k keys,
/// and s, p, d where they differ from benchdnn's defaults (s 1, the implied begin pad, d 0).
std::string spatial_text(const std::array<spatial_t, 3> &gs, int ndims, const std::string &after_i);

/// {lead..., the last ndims - lead.size() of sp}: e.g. ({mb, ic}, {id, ih, iw}, 4) -> {mb, ic, ih, iw}.
dims_t spatial_dims(std::initializer_list<dim_t> lead, std::array<dim_t, 3> sp, int ndims);

} // namespace blockdnn::impl
