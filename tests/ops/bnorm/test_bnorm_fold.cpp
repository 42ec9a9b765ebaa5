// SPDX-License-Identifier: Apache-2.0
// bnorm_fold_into_conv: a convolution with folded weights and bias against the convolution
// followed by inference batch normalization, for plain, blocked and grouped weight layouts,
// with and without conv bias, scale and shift, in place; and its errors.
#include <cstring>

#include "bnorm_test_util.hpp"
#include "core/prb_parse.hpp"

using namespace blockdnn;
using namespace blockdnn::impl;
using namespace bnorm_test;

namespace {

tensor vec(dim_t n, unsigned seed, float lo, float hi) {
    tensor t(tensor_desc({n}, format_tag::x));
    const std::vector<float> v = random_vec(n, seed, lo, hi);
    std::copy(v.begin(), v.end(), t.f32());
    return t;
}

format_tag act_tag(int ndims) {
    return ndims == 3 ? format_tag::ncw : ndims == 4 ? format_tag::nchw : format_tag::ncdhw;
}

struct fold_case_t {
    const char *desc;
    format_tag wei_tag;
};

} // namespace

TEST(BnormFold, ConvThenBnEqualsFoldedConv) {
    const fold_case_t cases[] = {
            {"mb2ic8ih7oc12oh7kh3ph1", format_tag::oihw},
            {"mb2ic8ih7oc12oh7kh3ph1", format_tag::OIhw16i16o},
            {"mb2ic8ih7oc12oh7kh3ph1", format_tag::hwio},
            {"g4mb2ic8ih6oc8oh6kh3ph1", format_tag::goihw},
            {"g8mb1ic8ih5oc8oh5kh3ph1", format_tag::Goihw16g},
            {"g2mb1ic32ih5oc32oh5kh1", format_tag::gOIhw16i16o},
            {"mb2ic5iw9oc7ow9kw3pw1", format_tag::oiw},
            {"mb1ic3id4ih4iw4oc5od2oh2ow2kd3kh3kw3", format_tag::oidhw},
    };
    unsigned seed = 1;
    for (const fold_case_t &fc : cases)
        for (int variant = 0; variant < 4; ++variant) {
            const bool conv_bias = variant & 1, affine = variant & 2;
            conv_desc d = parse_conv_desc(fc.desc);
            d.with_bias = conv_bias;
            SCOPED_TRACE(
                    d.str() + " " + to_string(fc.wei_tag) + (conv_bias ? " bias" : "") + (affine ? " affine" : ""));
            const format_tag at = act_tag(d.ndims);
            const bool grouped = fc.wei_tag == format_tag::goihw || fc.wei_tag == format_tag::Goihw16g
                    || fc.wei_tag == format_tag::gOIhw16i16o;
            const tensor src(tensor_desc(d.src_dims(), at)), wei(tensor_desc(d.wei_dims(grouped), fc.wei_tag));
            fill_random(src, seed++);
            fill_random(wei, seed++);
            const tensor bia = conv_bias ? vec(d.oc, seed++, -1.f, 1.f) : tensor();
            const tensor mean = vec(d.oc, seed++, -0.5f, 0.5f), var = vec(d.oc, seed++, 0.05f, 2.f);
            const tensor scale = affine ? vec(d.oc, seed++, -1.5f, 1.5f) : tensor();
            const tensor shift = affine ? vec(d.oc, seed++, -1.f, 1.f) : tensor();
            const float eps = 1e-3f;

            // conv, then bn (inference)
            const conv_fwd conv(d, at, fc.wei_tag, at);
            const tensor y(conv.dst_desc()), want(conv.dst_desc());
            conv.execute(src, wei, bia, y);
            bnorm_flags fl = affine ? bnorm_flags::use_scale | bnorm_flags::use_shift : bnorm_flags::none;
            bnorm_fwd({bnorm_mode::inference, y.desc(), {}, eps, fl}).execute({y, want, mean, var, scale, shift});

            // folded conv
            const tensor wei_f(wei.desc()), bia_f(tensor_desc({d.oc}, format_tag::x));
            bnorm_fold_into_conv(wei, bia, mean, var, scale, shift, eps, wei_f, bia_f);
            conv_desc df = d;
            df.with_bias = true;
            const tensor got(conv.dst_desc());
            conv_fwd(df, at, fc.wei_tag, at).execute(src, wei_f, bia_f, got);
            expect_near(got.desc(), got.f32(), want.f32(), 1e-5, 1e-5, "folded conv");
            expect_zero_padding(wei_f, "wei_out");

            // in place gives the same weights
            bnorm_fold_into_conv(wei, bia, mean, var, scale, shift, eps, wei, conv_bias ? bia : bia_f);
            EXPECT_EQ(0, std::memcmp(wei.data(), wei_f.data(), wei.desc().size_bytes()));
        }
}

TEST(BnormFold, ErrorsNameTheTensorAndWriteNothing) {
    const tensor wei(tensor_desc({4, 3, 3, 3}, format_tag::oihw)), wei_out(wei.desc());
    const tensor c4 = vec(4, 1, 0.5f, 1.f), c3 = vec(3, 2, 0.5f, 1.f), bia_out(tensor_desc({4}, format_tag::x));
    std::fill(wei_out.f32(), wei_out.f32() + 36 * 3, 5.f);
    const status bad = status::invalid_arguments;
    expect_error(bad, {"bnorm_fold_into_conv", "mean", "x:4"},
            [&] { bnorm_fold_into_conv(wei, {}, c3, c4, {}, {}, 1e-5f, wei_out, bia_out); });
    expect_error(bad, {"bnorm_fold_into_conv", "variance", "no memory"},
            [&] { bnorm_fold_into_conv(wei, {}, c4, {}, {}, {}, 1e-5f, wei_out, bia_out); });
    expect_error(bad, {"bnorm_fold_into_conv", "scale", "x:4"},
            [&] { bnorm_fold_into_conv(wei, {}, c4, c4, c3, {}, 1e-5f, wei_out, bia_out); });
    expect_error(bad, {"bnorm_fold_into_conv", "bia", "x:4"},
            [&] { bnorm_fold_into_conv(wei, c3, c4, c4, {}, {}, 1e-5f, wei_out, bia_out); });
    expect_error(bad, {"bnorm_fold_into_conv", "wei_out", "oihw"}, [&] {
        bnorm_fold_into_conv(
                wei, {}, c4, c4, {}, {}, 1e-5f, tensor(tensor_desc({4, 3, 3, 3}, format_tag::hwio)), bia_out);
    });
    expect_error(bad, {"bnorm_fold_into_conv", "wei", "nchw", "weights"}, [&] {
        bnorm_fold_into_conv(
                tensor(tensor_desc({4, 3, 3, 3}, format_tag::nchw)), {}, c4, c4, {}, {}, 1e-5f, wei_out, bia_out);
    });
    expect_error(bad, {"bnorm_fold_into_conv", "epsilon", "-1"},
            [&] { bnorm_fold_into_conv(wei, {}, c4, c4, {}, {}, -1.f, wei_out, bia_out); });
    for (dim_t k = 0; k < 108; ++k) ASSERT_EQ(wei_out.f32()[k], 5.f);
    for (dim_t k = 0; k < 4; ++k) ASSERT_EQ(bia_out.f32()[k], 0.f);
}
