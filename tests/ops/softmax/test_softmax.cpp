// SPDX-License-Identifier: Apache-2.0
// Reference softmax: every axis of 2-D to 5-D tensors in several layouts against a direct
// double-precision oracle; stability on huge inputs; in place; the bad inputs.
#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "common/ref_util.hpp"

using namespace blockdnn;
using namespace ref_test;

namespace {

std::vector<float> oracle_softmax(const dims_t &dims, int axis, const std::vector<float> &x) {
    dim_t inner = 1, outer = 1;
    for (std::size_t d = 0; d < dims.size(); ++d)
        (static_cast<int>(d) < axis ? outer : inner) *= static_cast<int>(d) == axis ? 1 : dims[d];
    const dim_t L = dims[axis];
    std::vector<float> y(x.size());
    for (dim_t o = 0; o < outer; ++o)
        for (dim_t i = 0; i < inner; ++i) {
            double m = -INFINITY, s = 0;
            for (dim_t k = 0; k < L; ++k) m = std::max(m, double(x[(o * L + k) * inner + i]));
            for (dim_t k = 0; k < L; ++k) s += std::exp(double(x[(o * L + k) * inner + i]) - m);
            for (dim_t k = 0; k < L; ++k)
                y[(o * L + k) * inner + i] = float(std::exp(double(x[(o * L + k) * inner + i]) - m) / s);
        }
    return y;
}

std::vector<float> run_softmax(
        const dims_t &dims, format_tag st, format_tag dt, int axis, const std::vector<float> &x) {
    const isa_guard g;
    set_max_isa(isa::scalar);
    const softmax_fwd op(tensor_desc(dims, st), tensor_desc(dims, dt), axis);
    EXPECT_STREQ(op.impl_name(), "ref");
    const tensor s = make_tensor(dims, st, x), d(op.dst_desc());
    poison(d);
    op.execute(s, d);
    EXPECT_TRUE(padding_is_zero(d));
    return logical(d);
}

} // namespace

TEST(SoftmaxRef, EveryAxisAndLayoutMatchesOracle) {
    const std::vector<std::pair<dims_t, std::vector<format_tag>>> cases = {{{5, 1000}, {format_tag::nc}},
            {{3, 17, 6}, act_tags(3)}, {{2, 19, 3, 4}, act_tags(4)}, {{2, 5, 2, 3, 2}, act_tags(5)}};
    unsigned seed = 10;
    for (const auto &[dims, tags] : cases)
        for (int axis = 0; axis < static_cast<int>(dims.size()); ++axis) {
            dim_t n = 1;
            for (dim_t d : dims) n *= d;
            std::vector<float> x = real_values(n, seed++);
            for (float &v : x) v *= 8.f;
            const std::vector<float> want = oracle_softmax(dims, axis, x);
            for (std::size_t k = 0; k < tags.size(); ++k)
                EXPECT_LE(rel_err(run_softmax(dims, tags[k], tags[(k + 1) % tags.size()], axis, x), want), tol::softmax)
                        << to_string(tags[k]) << " axis " << axis;
        }
}

// exp(1e4) overflows; subtracting the max first does not.
TEST(SoftmaxRef, StableOnHugeInputsAndInPlace) {
    const dims_t dims = {2, 3};
    const std::vector<float> x = {10000.f, 10001.f, 10002.f, -1e30f, 0.f, 1e30f};
    const softmax_fwd op(tensor_desc(dims, format_tag::nc), tensor_desc(dims, format_tag::nc), 1);
    const tensor t = make_tensor(dims, format_tag::nc, x);
    op.execute(t, t); // in place
    const std::vector<float> y = logical(t);
    const double e1 = std::exp(-1.0), e2 = std::exp(-2.0), s = 1 + e1 + e2;
    EXPECT_FLOAT_EQ(y[0], float(e2 / s));
    EXPECT_FLOAT_EQ(y[1], float(e1 / s));
    EXPECT_FLOAT_EQ(y[2], float(1 / s));
    EXPECT_EQ(y[3], 0.f);
    EXPECT_EQ(y[4], 0.f);
    EXPECT_EQ(y[5], 1.f);
}

TEST(SoftmaxErrors, BadAxisShapesAndTensors) {
    const status bad = status::invalid_arguments;
    const tensor_desc a({2, 8, 3}, format_tag::ncw);
    expect_error(bad, {"softmax_fwd: axis = 3 is outside [0, 3)"}, [&] { softmax_fwd(a, a, 3); });
    expect_error(bad, {"softmax_fwd: axis = -1"}, [&] { softmax_fwd(a, a, -1); });
    expect_error(bad, {"softmax_fwd: dst dims[1] (c) = 7 must equal src's 8"}, [&] {
        softmax_fwd(a, tensor_desc({2, 7, 3}, format_tag::ncw), 1);
    });
    expect_error(bad, {"softmax_fwd: dst has 2 dims"}, [&] { softmax_fwd(a, tensor_desc({2, 8}, format_tag::nc), 1); });
    const softmax_fwd op(a, a, 1);
    const tensor s(a), d(a);
    poison(d);
    const std::vector<float> before = snapshot(d);
    expect_error(bad, {"softmax_fwd: src layout nwc differs from the ncw"}, [&] {
        op.execute(tensor(tensor_desc({2, 8, 3}, format_tag::nwc)), d);
    });
    std::vector<float> mem(64);
    expect_error(bad, {"softmax_fwd: dst", "overlaps src"},
            [&] { op.execute(tensor(a, mem.data()), tensor(a, mem.data() + 1)); });
    EXPECT_EQ(snapshot(d), before);
}

TEST(SoftmaxDesc, ValidateNamesFieldValueAndRule) {
    const status bad = status::invalid_arguments;
    const auto desc = [](const dims_t &dims, int axis) {
        softmax_desc d;
        d.dims = dims;
        d.axis = axis;
        return d;
    };
    EXPECT_NO_THROW(desc({2, 8, 3}, 2).validate());
    expect_error(bad, {"softmax_fwd: dims has 0 entries, must have 1 to 6"}, [&] { desc({}, 0).validate(); });
    expect_error(bad, {"softmax_fwd: dims has 7 entries (1x1x1x1x1x1x1), must have 1 to 6"},
            [&] { desc(dims_t(7, 1), 0).validate(); });
    expect_error(bad, {"softmax_fwd: dims[1] = 0 must be positive"}, [&] { desc({2, 0}, 0).validate(); });
    expect_error(bad, {"softmax_fwd: axis = 2 is outside [0, 2) for dims 2x8"}, [&] { desc({2, 8}, 2).validate(); });
    // The constructor validates the desc first, then the tags against its dims.
    expect_error(bad, {"softmax_fwd: axis = -1 is outside [0, 2)"}, [&] {
        softmax_fwd(desc({2, 8}, -1), format_tag::nc, format_tag::nc);
    });
    expect_error(bad, {"softmax_fwd: dst"}, [&] { softmax_fwd(desc({2, 8}, 1), format_tag::nc, format_tag::nchw); });
}

TEST(SoftmaxDesc, StrAndTheTwoConstructorsAgree) {
    softmax_desc d;
    d.dims = {2, 19, 3, 5};
    d.axis = 1;
    EXPECT_EQ(d.str(), "--axis=1 2x19x3x5");
    const softmax_fwd from_desc(d, format_tag::nChw16c, format_tag::nhwc);
    const softmax_fwd from_tensors(tensor_desc(d.dims, format_tag::nChw16c), tensor_desc(d.dims, format_tag::nhwc), 1);
    EXPECT_EQ(from_desc.str(), from_tensors.str());
    EXPECT_EQ(from_desc.desc().str(), d.str());
    EXPECT_EQ(from_tensors.desc().dims, d.dims);
    EXPECT_EQ(from_desc.axis(), 1);
    EXPECT_EQ(from_desc.src_desc().str(), "nChw16c:2x19x3x5");
    EXPECT_EQ(from_desc.dst_desc().tag(), format_tag::nhwc);
    const std::vector<float> x = real_values(2 * 19 * 3 * 5, 13);
    const tensor s = make_tensor(d.dims, format_tag::nChw16c, x);
    const tensor a(from_desc.dst_desc()), b(from_tensors.dst_desc());
    from_desc.execute(s, a);
    from_tensors.execute(s, b);
    EXPECT_LE(rel_err(logical(a), oracle_softmax(d.dims, 1, x)), tol::softmax);
    EXPECT_EQ(logical(a), logical(b));
}

TEST(SoftmaxParse, RoundTripsStrAndNamesBadText) {
    softmax_desc d;
    d.dims = {2, 19, 3, 5};
    d.axis = 2;
    const softmax_desc r = parse_softmax_desc(d.str());
    EXPECT_EQ(r.dims, d.dims);
    EXPECT_EQ(r.axis, d.axis);
    EXPECT_EQ(r.str(), d.str());
    std::string name;
    const softmax_desc b = parse_softmax_desc("2x16x7x7_n\"resnet:prob\"", 1, &name);
    EXPECT_EQ(b.dims, dims_t({2, 16, 7, 7}));
    EXPECT_EQ(b.axis, 1);
    EXPECT_EQ(name, "resnet:prob");
    EXPECT_EQ(parse_softmax_desc("64x1000", 0).axis, 0);
    const status bad = status::invalid_arguments;
    expect_error(bad, {"dims '2x0'", "dims[1] = 0 must be positive"}, [] { parse_softmax_desc("2x0"); });
    expect_error(bad, {"--axis='x' is not an integer"}, [] { parse_softmax_desc("--axis=x 2x8"); });
    expect_error(bad, {"unknown option '--alg=relu'"}, [] { parse_softmax_desc("--alg=relu 2x8"); });
    expect_error(bad, {"no dims"}, [] { parse_softmax_desc("--axis=1"); });
    expect_error(bad, {"softmax descriptor '--axis=2 2x8'", "axis = 2 is outside [0, 2)"},
            [] { parse_softmax_desc("--axis=2 2x8"); });
}
