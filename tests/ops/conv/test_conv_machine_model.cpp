// SPDX-License-Identifier: Apache-2.0
// Convolution's init_conf follows the machine model in force (machine_model_override_t): its
// cache blocking over input channels shrinks with the L2.
#include <string>

#include <gtest/gtest.h>

#include "blockdnn/blockdnn.hpp"
#include "core/machine_model.hpp"
#include "ops/conv/conv_conf.hpp"

using namespace blockdnn;
using namespace blockdnn::impl;

namespace {

// The conf of a convolution under the model in force.
conv_conf_t conv_conf(const conv_desc &d) {
    conv_conf_t c;
    std::string why;
    EXPECT_EQ(init_conf_conv_fwd(c, d, format_tag::nChw8c, format_tag::nChw8c, post_ops(), isa::avx2, why),
            status::success)
            << why;
    return c;
}

conv_desc big_3x3() {
    conv_desc d;
    d.mb = 1;
    d.ic = d.oc = 512;
    d.ih = d.iw = d.oh = d.ow = 7;
    d.kh = d.kw = 3;
    d.ph = d.pw = d.ph_r = d.pw_r = 1;
    return d;
}

} // namespace

TEST(MachineModel, ConvInitConfFollowsTheModelInForce) {
    machine_model_t small_l2;
    small_l2.l2_bytes = 64 << 10;
    const machine_model_t ref;

    conv_conf_t conv_ref, conv_small;
    {
        machine_model_override_t o(ref);
        conv_ref = conv_conf(big_3x3());
    }
    {
        machine_model_override_t o(small_l2);
        conv_small = conv_conf(big_3x3());
    }
    EXPECT_EQ(conv_ref.nb_ic_blocking, conv_ref.nb_ic);
    EXPECT_LT(conv_small.nb_ic_blocking, conv_small.nb_ic);
}
