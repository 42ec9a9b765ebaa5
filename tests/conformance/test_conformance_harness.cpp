// SPDX-License-Identifier: Apache-2.0
// The conformance data loaders themselves (a known ONNX case and the PyTorch smoke case) and
// the error measure the tolerances are stated in.
#include <cmath>

#include <gtest/gtest.h>

#include "conformance/onnx_data.hpp"
#include "testing/tolerances.hpp"
#include "torch/torch_data.hpp"

TEST(OnnxData, LoadsAConvCaseWithItsAttributes) {
    const onnx_data::case_t c = onnx_data::load_case(onnx_data::data_root() + "/node/test_conv_with_strides_padding");
    ASSERT_EQ(c.nodes.size(), 1u);
    const onnx_data::node_t &n = c.nodes[0];
    EXPECT_EQ(n.op_type, "Conv");
    EXPECT_EQ(n.get_ints("strides"), (std::vector<std::int64_t> {2, 2}));
    EXPECT_EQ(n.get_ints("pads"), (std::vector<std::int64_t> {1, 1, 1, 1}));
    EXPECT_EQ(n.get_ints("kernel_shape"), (std::vector<std::int64_t> {3, 3}));
    const onnx_data::array_t &x = c.value(n.inputs[0]);
    EXPECT_EQ(x.dims, (std::vector<std::int64_t> {1, 1, 7, 5}));
    EXPECT_EQ(x.data.size(), 35u);
    ASSERT_EQ(c.expected.size(), 1u);
    EXPECT_EQ(c.expected[0].dims, (std::vector<std::int64_t> {1, 1, 4, 3}));
    EXPECT_THROW(c.value("no such input"), std::runtime_error);
}

TEST(OnnxData, FindsCasesByOpType) {
    const auto convs = onnx_data::find_cases("node", {"Conv"});
    EXPECT_GE(convs.size(), 3u);
    for (const std::string &c : convs) EXPECT_EQ(c.rfind("test_", 0), 0u) << c;
    EXPECT_TRUE(onnx_data::find_cases("no-such-suite", {"Conv"}).empty());
}

// The one error measure of tolerances.hpp: per element, relative to max(1, |want|).
TEST(Tolerances, RelErrIsPerElement) {
    EXPECT_DOUBLE_EQ(tol::rel_err({1, 2}, {1, 2}), 0.0);
    EXPECT_DOUBLE_EQ(tol::rel_err({1, 4.5}, {1, 4}), 0.5 / 4);
    // Absolute below magnitude 1, and a small element's error is not hidden by a large one.
    EXPECT_DOUBLE_EQ(tol::rel_err({0.25f, 1000}, {0.5f, 1000}), 0.25);
    EXPECT_TRUE(std::isinf(tol::rel_err({1}, {1, 2})));
    EXPECT_TRUE(std::isnan(tol::rel_err({NAN, 1}, {1, 1})));
    EXPECT_TRUE(std::isnan(tol::rel_err({1, 1}, {1, NAN})));
    EXPECT_DOUBLE_EQ(tol::rel_err({NAN, 1}, {NAN, 1}), 0.0);
    EXPECT_DOUBLE_EQ(tol::rel_err({INFINITY, -INFINITY}, {INFINITY, -INFINITY}), 0.0);
    EXPECT_TRUE(std::isinf(tol::rel_err({1}, {INFINITY})));
    EXPECT_TRUE(std::isinf(tol::rel_err({INFINITY}, {-INFINITY})));
    EXPECT_TRUE(std::isinf(tol::rel_err({INFINITY}, {1})));
}

TEST(TorchData, SmokeCaseIsConsistent) {
    if (torch_data::cases_dir().empty()) GTEST_SKIP() << "PyTorch cases not generated (no python3-torch)";
    const auto x = torch_data::load("smoke", "x"), s = torch_data::load("smoke", "x_sum_c"),
               r = torch_data::load("smoke", "x_relu");
    ASSERT_EQ(x.dims, (std::vector<std::int64_t> {2, 3, 4}));
    ASSERT_EQ(s.dims, (std::vector<std::int64_t> {2, 4}));
    for (int n = 0; n < 2; ++n)
        for (int w = 0; w < 4; ++w) {
            float sum = 0;
            for (int c = 0; c < 3; ++c) sum += x.data[(n * 3 + c) * 4 + w];
            EXPECT_NEAR(sum, s.data[n * 4 + w], 1e-6f);
        }
    for (std::size_t k = 0; k < x.data.size(); ++k) EXPECT_EQ(r.data[k], x.data[k] > 0 ? x.data[k] : 0.f);
    EXPECT_THROW(torch_data::load("smoke", "missing"), std::runtime_error);
}
