// SPDX-License-Identifier: Apache-2.0
// Every rule conv_fwd enforces: each bad desc, layout or tensor throws blockdnn::error
// (invalid_arguments) naming the field and its value, and nothing the caller owns is written.
#include <limits>

#include <gtest/gtest.h>

#include "core/prb_parse.hpp"
#include "common/ref_util.hpp"

using namespace blockdnn;
using namespace ref_test;

namespace {

const status bad = status::invalid_arguments;

// mb2 ic4 8x8 -> oc6 8x8, 3x3, pad 1, with bias.
conv_desc base() {
    conv_desc c = blockdnn::parse_conv_desc("mb2ic4ih8oc6oh8kh3ph1");
    c.with_bias = true;
    return c;
}

void expect_desc_error(const conv_desc &c, std::initializer_list<const char *> fragments) {
    expect_error(bad, fragments, [&] { conv_fwd(c, format_tag::nchw, format_tag::goihw, format_tag::nchw); });
}

} // namespace

TEST(ConvErrors, OutputSizeMustMatchAndBePositive) {
    conv_desc c = base();
    c.oh = 7;
    expect_desc_error(c, {"conv_fwd: oh = 7 does not match", "= 8", "ih=8 kh=3 ph=1 ph_r=1 sh=1 dh=0"});
    c = base();
    c.ow = 0;
    expect_desc_error(c, {"conv_fwd: ow = 0 must be positive"});
    c = base();
    c.oh = -3;
    expect_desc_error(c, {"oh = -3 must be positive"});
}

TEST(ConvErrors, KernelLargerThanPaddedInput) {
    conv_desc c = base();
    c.kh = 11; // ext 11 > 8 + 1 + 1
    expect_desc_error(c, {"conv_fwd: kernel extent ext_kh = 11", "exceeds the padded input", "= 10"});
    c = base();
    c.kw = 3;
    c.dw = 4; // ext (3-1)*5+1 = 11
    expect_desc_error(c, {"ext_kw = 11", "dw=4"});
    conv_desc d = base();
    d.kh = 11;
    expect_error(bad, {"ext_kh = 11"}, [&] { d.infer_dst_dims(); });
    // Fields so large that i + p + p_r or the extent would overflow int64: named, not wrapped.
    d = base();
    d.dh = std::numeric_limits<dim_t>::max();
    expect_error(bad, {"dh = 9223372036854775807", "out of range"}, [&] { d.infer_dst_dims(); });
    d = base();
    d.ph = std::numeric_limits<dim_t>::max();
    expect_error(bad, {"ph = 9223372036854775807", "out of range"}, [&] { d.infer_dst_dims(); });
}

TEST(ConvErrors, GroupsMustDivideChannels) {
    conv_desc c = base();
    c.g = 3;
    expect_desc_error(c, {"conv_fwd: g = 3 does not divide ic = 4"});
    c.g = 4; // divides ic = 4, not oc = 6
    expect_desc_error(c, {"conv_fwd: g = 4 does not divide oc = 6"});
    c.g = 0;
    expect_desc_error(c, {"conv_fwd: g = 0 must be positive"});
}

TEST(ConvErrors, FieldsAndConventions) {
    // Each case is base() with one field changed.
    const struct {
        void (*change)(conv_desc &);
        std::initializer_list<const char *> fragments;
    } cases[] = {
            {[](conv_desc &c) { c.dh = -1; },
                    {"dh = -1 must be >= 0", "0 means dense", "PyTorch/ONNX dilation t is dh = t - 1"}},
            {[](conv_desc &c) { c.sw = 0; }, {"sw = 0 must be >= 1"}},
            {[](conv_desc &c) { c.ph = -1; }, {"ph = -1 must be >= 0"}},
            {[](conv_desc &c) { c.mb = 0; }, {"mb = 0 must be positive"}},
            {[](conv_desc &c) { c.ic = -4; }, {"ic = -4 must be positive"}},
            {[](conv_desc &c) { c.ndims = 6; }, {"ndims = 6"}},
            {[](conv_desc &c) { c.id = 3; }, {"id = 3 must be 1 for a 2-D problem"}}, // a 2-D problem with a depth
            {[](conv_desc &c) { c.ih = dim_t(1) << 40; }, {"ih = 1099511627776 is out of range"}},
            {[](conv_desc &c) { c.ph_r = dim_t(1) << 40; }, {"ph_r = 1099511627776 is out of range"}},
    };
    for (const auto &k : cases) {
        conv_desc c = base();
        k.change(c);
        expect_desc_error(c, k.fragments);
    }
}

TEST(ConvErrors, LayoutsMustFitTheProblem) {
    const conv_desc c = base();
    expect_error(bad, {"conv_fwd: src layout oihw is a weights layout, expected an activation layout"},
            [&] { conv_fwd(c, format_tag::oihw, format_tag::oihw, format_tag::nchw); });
    expect_error(bad, {"conv_fwd: dst layout ncdhw has 5 dims, expected 4"},
            [&] { conv_fwd(c, format_tag::nchw, format_tag::oihw, format_tag::ncdhw); });
    expect_error(bad, {"conv_fwd: wei layout nchw is an activation layout"},
            [&] { conv_fwd(c, format_tag::nchw, format_tag::nchw, format_tag::nchw); });
    expect_error(bad, {"conv_fwd: wei layout oidhw has 5 dims, expected 4"},
            [&] { conv_fwd(c, format_tag::nchw, format_tag::oidhw, format_tag::nchw); });
    // A cast integer used to read as "layout unknown has 0 dims".
    expect_error(bad, {"conv_fwd: src layout 999 is not a format_tag value"},
            [&] { conv_fwd(c, static_cast<format_tag>(999), format_tag::oihw, format_tag::nchw); });
    expect_error(bad, {"conv_fwd: wei layout 999 is not a format_tag value"},
            [&] { conv_fwd(c, format_tag::nchw, static_cast<format_tag>(999), format_tag::nchw); });
    conv_desc g = c;
    g.g = 2;
    expect_error(bad, {"conv_fwd: g = 2 needs a grouped weights layout", "oihw"},
            [&] { conv_fwd(g, format_tag::nchw, format_tag::oihw, format_tag::nchw); });
    expect_error(bad, {"conv_fwd: src layout is undef"},
            [&] { conv_fwd(c, format_tag::undef, format_tag::oihw, format_tag::nchw); });
}

// Tensors that do not match what the op was created for: each rejected before dst is written.
TEST(ConvErrors, ExecuteChecksEveryTensorAndWritesNothing) {
    const conv_desc c = base();
    const conv_fwd op(c, format_tag::nchw, format_tag::oihw, format_tag::nChw8c);
    const tensor src(op.src_desc()), wei(op.wei_desc()), bia(op.bia_desc()), dst(op.dst_desc());
    fill_random(src, 1);
    fill_random(wei, 2);
    fill_random(bia, 3);
    poison(dst);
    const std::vector<float> before = snapshot(dst);
    auto run = [&](const tensor &s, const tensor &w, const tensor &b, const tensor &d) { op.execute(s, w, b, d); };

    // weights whose shape does not match: kw 5 instead of 3, oc 7 instead of 6
    expect_error(bad, {"conv_fwd: wei dims[3] (w) = 5, expected kw = 3"}, [&] {
        run(src, tensor(tensor_desc({6, 4, 3, 5}, format_tag::oihw)), bia, dst);
    });
    expect_error(bad, {"conv_fwd: wei dims[0] (o) = 7, expected oc = 6"}, [&] {
        run(src, tensor(tensor_desc({7, 4, 3, 3}, format_tag::oihw)), bia, dst);
    });
    expect_error(bad, {"conv_fwd: wei layout hwio differs from the oihw"}, [&] {
        run(src, tensor(tensor_desc({6, 4, 3, 3}, format_tag::hwio)), bia, dst);
    });
    // bias of the wrong length, missing, or given to an op without bias
    expect_error(bad, {"conv_fwd: bia dims[0] (x) = 5, expected oc = 6"},
            [&] { run(src, wei, tensor(tensor_desc({5}, format_tag::x)), dst); });
    expect_error(bad, {"conv_fwd: bia tensor has no memory"}, [&] { run(src, wei, tensor(), dst); });
    // src and dst shapes
    expect_error(bad, {"conv_fwd: src dims[1] (c) = 3, expected ic = 4"}, [&] {
        run(tensor(tensor_desc({2, 3, 8, 8}, format_tag::nchw)), wei, bia, dst);
    });
    expect_error(bad, {"conv_fwd: dst dims[2] (h) = 7, expected oh = 8"}, [&] {
        run(src, wei, bia, tensor(tensor_desc({2, 6, 7, 8}, format_tag::nChw8c)));
    });
    expect_error(bad, {"conv_fwd: dst layout nchw differs from the nChw8c"}, [&] {
        run(src, wei, bia, tensor(tensor_desc({2, 6, 8, 8}, format_tag::nchw)));
    });
    expect_error(bad, {"conv_fwd: src tensor has no memory"}, [&] { run(tensor(), wei, bia, dst); });
    EXPECT_EQ(snapshot(dst), before);

    // dst overlapping an input
    std::vector<float> mem(static_cast<std::size_t>(op.src_desc().nelems() + op.dst_desc().nelems_padded()));
    const tensor src_in(op.src_desc(), mem.data()), dst_in(op.dst_desc(), mem.data() + 8);
    expect_error(bad, {"conv_fwd: dst", "overlaps src"}, [&] { run(src_in, wei, bia, dst_in); });

    conv_desc nb = c;
    nb.with_bias = false;
    const conv_fwd op_nb(nb, format_tag::nchw, format_tag::oihw, format_tag::nChw8c);
    expect_error(bad, {"conv_fwd: a bia tensor", "created without bias"}, [&] { op_nb.execute(src, wei, bia, dst); });
    EXPECT_EQ(snapshot(dst), before);
    op_nb.execute(src, wei, dst); // and the right call works
    EXPECT_NE(snapshot(dst), before);
}
