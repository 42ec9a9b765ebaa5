// SPDX-License-Identifier: Apache-2.0
// Batch normalization's JIT takes the machine model in force (machine_model_override_t).
#include <gtest/gtest.h>

#include "blockdnn/blockdnn.hpp"
#include "core/machine_model.hpp"
#include "ops/bnorm/bnorm_jit.hpp"

using namespace blockdnn;
using namespace blockdnn::impl;

TEST(MachineModel, BnormInitConfFollowsTheModelInForce) {
    machine_model_t small_l2;
    small_l2.l2_bytes = 64 << 10;
    bnorm_machine_t bnorm_small;
    {
        machine_model_override_t o(small_l2);
        bnorm_small = bnorm_this_machine();
    }
    EXPECT_EQ(bnorm_small.l2_bytes, 64 << 10);
}
