// SPDX-License-Identifier: Apache-2.0
// The eltwise problem from benchdnn's fields as text (kernelgen's form) is the problem the
// descriptor parser makes.
#include <gtest/gtest.h>

#include "blockdnn/blockdnn.hpp"
#include "ops/eltwise/eltwise_impl.hpp"
#include "common/test_util.hpp"

using namespace blockdnn;
using ft = format_tag;

TEST(EltwiseDesc, FieldsFormIsTheParsersProblem) {
    const impl::eltwise_prb_t a = impl::eltwise_prb_from_fields("gelu_tanh", 0.f, 0.f, "8x16x5x5", "aBx16b");
    const impl::eltwise_prb_t b = impl::parse_eltwise_prb("--alg=gelu_tanh --tag=aBx16b 8x16x5x5");
    EXPECT_EQ(a.str(), b.str());
    EXPECT_EQ(a.desc, tensor_desc({8, 16, 5, 5}, ft::nChw16c));
    expect_error(status::invalid_arguments, {"softplus"},
            [] { impl::eltwise_prb_from_fields("softplus", 0.f, 0.f, "8x8", "abx"); });
}
