// SPDX-License-Identifier: Apache-2.0
// The one seeded fill of tests, tools and benchmarks: std::mt19937(seed) drawn in order, reals
// from std::uniform_real_distribution<float>(lo, hi) in [lo, hi), or integers from
// std::uniform_int_distribution<int>(lo, hi) in [lo, hi] (their products and sums stay exact
// in float below 2^24). A tensor is filled over its logical elements in canonical order (last
// dim fastest), so a blocked and a plain tensor filled from one seed hold the same values.
#pragma once

#include <cstddef>
#include <random>
#include <vector>

#include "blockdnn/tensor.hpp"

namespace bdtest {

/// Calls fn(offset) for every logical element of d in canonical order (last dim fastest).
template <typename F>
void for_each_logical_offset(const blockdnn::tensor_desc &d, F &&fn) {
    const int nd = d.ndims();
    blockdnn::dim_t idx[blockdnn::max_ndims] = {};
    for (blockdnn::dim_t k = 0, n = d.nelems(); k < n; ++k) {
        fn(d.offset(idx));
        for (int i = nd - 1; i >= 0; --i) {
            if (++idx[i] < d.dim(i)) break;
            idx[i] = 0;
        }
    }
}

/// The seeded values described above, one per call.
class seeded_draw_t {
public:
    seeded_draw_t(unsigned seed, float lo, float hi, bool integers)
        : gen_(seed), real_(lo, hi), int_(static_cast<int>(lo), static_cast<int>(hi)), integers_(integers) {}
    float operator()() { return integers_ ? static_cast<float>(int_(gen_)) : real_(gen_); }

private:
    std::mt19937 gen_;
    std::uniform_real_distribution<float> real_;
    std::uniform_int_distribution<int> int_;
    bool integers_;
};

/// n seeded values in [lo, hi) or, with `integers`, whole numbers in [lo, hi].
inline std::vector<float> seeded_values(std::size_t n, unsigned seed, float lo, float hi, bool integers = false) {
    seeded_draw_t draw(seed, lo, hi, integers);
    std::vector<float> v(n);
    for (float &x : v) x = draw();
    return v;
}

/// Seeded values for every logical element of t (padding left as is), as seeded_values.
inline void fill_seeded(const blockdnn::tensor &t, unsigned seed, float lo, float hi, bool integers = false) {
    seeded_draw_t draw(seed, lo, hi, integers);
    float *p = t.f32();
    for_each_logical_offset(t.desc(), [&](blockdnn::dim_t o) { p[o] = draw(); });
}

/// The logical elements of t in canonical order.
inline std::vector<float> logical_values(const blockdnn::tensor &t) {
    std::vector<float> v;
    v.reserve(static_cast<std::size_t>(t.desc().nelems()));
    const float *p = t.f32();
    for_each_logical_offset(t.desc(), [&](blockdnn::dim_t o) { v.push_back(p[o]); });
    return v;
}

} // namespace bdtest
