// SPDX-License-Identifier: Apache-2.0
// Helpers for the reference-op tests: tensors from and to logical (canonical row-major)
// values, seeded fills, poisoning, and the layouts each tensor kind can take.
#pragma once

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "blockdnn/blockdnn.hpp"
#include "test_util.hpp"
#include "testing/fill.hpp"
#include "testing/tolerances.hpp"

namespace ref_test {

using namespace blockdnn;

/// The number of elements of a tensor of dims d.
inline dim_t count(const dims_t &d) {
    dim_t n = 1;
    for (dim_t x : d) n *= x;
    return n;
}

/// The logical elements of t in canonical order (last dim fastest).
inline std::vector<float> logical(const tensor &t) {
    std::vector<float> v;
    v.reserve(static_cast<std::size_t>(t.desc().nelems()));
    for_each_index(t.desc(), [&](const dim_t *idx) { v.push_back(t.f32()[t.desc().offset(idx)]); });
    return v;
}

/// A new tensor of dims in layout tag holding `vals` (canonical order).
inline tensor make_tensor(const dims_t &dims, format_tag tag, const std::vector<float> &vals) {
    tensor t(tensor_desc(dims, tag));
    std::size_t k = 0;
    for_each_index(t.desc(), [&](const dim_t *idx) { t.f32()[t.desc().offset(idx)] = vals.at(k++); });
    return t;
}

/// n seeded integers in [lo, hi] as floats: sums of their products are exact in f32 as long
/// as they stay below 2^24, so results do not depend on summation order.
inline std::vector<float> int_values(dim_t n, unsigned seed, int lo = -3, int hi = 3) {
    return bdtest::seeded_values(
            static_cast<std::size_t>(n), seed, static_cast<float>(lo), static_cast<float>(hi), true);
}

/// n seeded reals in [-1, 1).
inline std::vector<float> real_values(dim_t n, unsigned seed) {
    return bdtest::seeded_values(static_cast<std::size_t>(n), seed, -1.f, 1.f);
}

/// Fills all of t's memory, padding included, with a value no op produces by accident.
inline void poison(const tensor &t) {
    for (dim_t i = 0; i < t.desc().nelems_padded(); ++i) t.f32()[i] = 777.f;
}

/// A copy of t's whole memory (padding included), to check an op left it untouched.
inline std::vector<float> snapshot(const tensor &t) {
    return std::vector<float>(t.f32(), t.f32() + t.desc().nelems_padded());
}

/// True if every padding element of t (indices past the logical dims) is zero.
inline bool padding_is_zero(const tensor &t) {
    const tensor_desc &d = t.desc();
    std::vector<char> logical_elem(static_cast<std::size_t>(d.nelems_padded()), 0);
    for_each_index(d, [&](const dim_t *idx) { logical_elem[static_cast<std::size_t>(d.offset(idx))] = 1; });
    for (dim_t i = 0; i < d.nelems_padded(); ++i)
        if (!logical_elem[static_cast<std::size_t>(i)] && t.f32()[i] != 0.f) return false;
    return true;
}

/// Activation layouts with `ndims` dims: plain, channels-last and both blocked forms.
inline std::vector<format_tag> act_tags(int ndims) {
    using ft = format_tag;
    switch (ndims) {
    case 3: return {ft::ncw, ft::nwc, ft::nCw8c, ft::nCw16c};
    case 4: return {ft::nchw, ft::nhwc, ft::nChw8c, ft::nChw16c};
    case 5: return {ft::ncdhw, ft::ndhwc, ft::nCdhw8c, ft::nCdhw16c};
    default: return {ft::nc};
    }
}

/// Weight layouts with `ndims` problem dims (3..5), grouped or not.
inline std::vector<format_tag> wei_tags(int ndims, bool grouped) {
    using ft = format_tag;
    if (grouped) {
        switch (ndims) {
        case 3: return {ft::goiw, ft::gOIw8i8o, ft::gOIw16i16o, ft::Goiw8g, ft::Goiw16g};
        case 4: return {ft::goihw, ft::gOIhw8i8o, ft::gOIhw16i16o, ft::Goihw8g, ft::Goihw16g};
        default: return {ft::goidhw, ft::gOIdhw8i8o, ft::gOIdhw16i16o, ft::Goidhw8g, ft::Goidhw16g};
        }
    }
    switch (ndims) {
    case 2: return {ft::oi, ft::io};
    case 3: return {ft::oiw, ft::wio, ft::OIw8i8o, ft::OIw16i16o};
    case 4: return {ft::oihw, ft::hwio, ft::OIhw8i8o, ft::OIhw16i16o};
    default: return {ft::oidhw, ft::dhwio, ft::OIdhw8i8o, ft::OIdhw16i16o};
    }
}

/// The plain layout of each family for `ndims` dims (activations; weights grouped or not).
inline format_tag plain_act(int ndims) { return act_tags(ndims)[0]; }
inline format_tag plain_wei(int ndims, bool grouped) { return wei_tags(ndims, grouped)[0]; }

// The one error measure (tolerances.hpp), for pointers or vectors.
using tol::rel_err;

} // namespace ref_test
