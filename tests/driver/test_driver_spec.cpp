// SPDX-License-Identifier: Apache-2.0
// benchdnn problems into blockdnn op specs: option words per driver, minibatch overrides,
// --match, and the messages of problems that are malformed (invalid_arguments) or that
// blockdnn does not run (unimplemented).
#include <gtest/gtest.h>

#include "driver/spec.hpp"
#include "common/test_util.hpp"

using namespace bdrv;
using blockdnn::status;

namespace {

problem_t prb(const std::string &driver, const std::string &desc, std::map<std::string, std::string> opts = {}) {
    return {driver, desc, std::move(opts), "test"};
}

template <typename T>
T op_of(const problem_t &p, long mb = 0) {
    const std::optional<spec_t> s = make_spec(p, mb);
    EXPECT_TRUE(s.has_value());
    return std::get<T>(s->op);
}

} // namespace

TEST(DriverSpec, ConvDirectionsTagsPostOpsAndMinibatch) {
    const conv_spec_t b = op_of<conv_spec_t>(prb("conv", "mb2ic16ih7oc32oh7kh3ph1n\"x\""));
    EXPECT_TRUE(b.desc.with_bias); // benchdnn's default --dir=FWD_B
    EXPECT_EQ(b.desc.mb, 2);
    EXPECT_EQ(b.stag, "any");
    const conv_spec_t d = op_of<conv_spec_t>(prb("conv", "mb2ic16ih7oc32oh7kh3ph1",
            {{"dir", "fwd_d"}, {"mb", "5"}, {"stag", "axb"}, {"attr-post-ops", "sum:0.5+relu"}}));
    EXPECT_FALSE(d.desc.with_bias);
    EXPECT_EQ(d.desc.mb, 5);
    EXPECT_EQ(d.stag, "axb");
    EXPECT_EQ(d.po.str(), "sum:0.5+relu:0:0");
    // benchdnn's long names: eltwise_relu (sum:0.00518924+eltwise_relu in its batch files).
    EXPECT_EQ(op_of<conv_spec_t>(prb("conv", "mb2ic16ih7oc32oh7kh3ph1", {{"attr-post-ops", "sum:0.5+eltwise_relu"}}))
                      .po.str(),
            "sum:0.5+relu:0:0");
    // The command line's --mb wins over a file's; --mb=0 keeps the descriptor's.
    EXPECT_EQ(op_of<conv_spec_t>(prb("conv", "mb2ic16ih7oc32oh7kh3ph1", {{"mb", "5"}}), 1).desc.mb, 1);
    EXPECT_EQ(op_of<conv_spec_t>(prb("conv", "mb3ic16ih7oc32oh7kh3ph1", {{"mb", "0"}})).desc.mb, 3);
    // --wtag=abx is the problem's plain weights, with groups and spatial dims as it has them.
    EXPECT_EQ(op_of<conv_spec_t>(prb("conv", "mb2ic16ih7oc32oh7kh3ph1", {{"wtag", "abx"}})).wtag, "oihw");
    EXPECT_EQ(op_of<conv_spec_t>(prb("conv", "g2mb2ic16ih7oc32oh7kh3ph1", {{"wtag", "abx"}})).wtag, "goihw");
    EXPECT_EQ(op_of<conv_spec_t>(prb("conv", "g1mb2ic16ih7oc32oh7kh3ph1", {{"wtag", "abx"}})).wtag, "oihw");
    EXPECT_EQ(op_of<conv_spec_t>(prb("conv", "mb2ic16iw7oc32ow7kw3pw1", {{"wtag", "abx"}})).wtag, "oiw");
    EXPECT_EQ(op_of<conv_spec_t>(prb("conv", "mb2ic16id5oc32od5kd3pd1", {{"wtag", "abx"}})).wtag, "oidhw");
    EXPECT_EQ(op_of<conv_spec_t>(prb("conv", "mb2ic16ih7oc32oh7kh3ph1", {{"wtag", "OIhw16i16o"}})).wtag, "OIhw16i16o");
    const std::optional<spec_t> s = make_spec(prb("conv", "mb2ic16ih7oc32oh7kh3ph1n\"resnet:res2\""));
    EXPECT_EQ(s->name, "resnet:res2");
    EXPECT_EQ(s->str, "--dir=FWD_B mb2ic16ih7oc32oh7kh3"); // ph1 is implied by oh7
}

TEST(DriverSpec, BnormRnnPoolEltwiseOptions) {
    const bnorm_spec_t bn =
            op_of<bnorm_spec_t>(prb("bnorm", "mb4ic16ih5", {{"dir", "BWD_DW"}, {"flags", "GCHR"}, {"tag", "aBx8b"}}));
    EXPECT_TRUE(
            bn.backward && bn.with_diff_scale_shift && bn.global_stats && bn.use_scale && bn.use_shift && bn.fuse_relu);
    EXPECT_EQ(bn.tag, "aBx8b");
    EXPECT_EQ(bn.desc.epsilon, 1.f / 16);

    const rnn_spec_t r = op_of<rnn_spec_t>(prb("rnn", "l1t3mb2sic8slc16",
            {{"alg", "LBR_GRU"}, {"direction", "concat"}, {"tag", "ntc:ldgoi:tnc"}, {"t", "5"}}));
    EXPECT_EQ(r.desc.cell, blockdnn::rnn_cell::lbr_gru);
    EXPECT_EQ(r.desc.direction, blockdnn::rnn_direction::bi_concat);
    EXPECT_EQ(r.desc.src_layer_tag, blockdnn::format_tag::ntc);
    EXPECT_EQ(r.wei_tag, "ldgoi");
    EXPECT_EQ(r.desc.t, 5);
    EXPECT_EQ(r.desc.slc, 16);
    EXPECT_EQ(op_of<rnn_spec_t>(prb("rnn", "l1t3sic8", {{"alg", "VANILLA_RNN"}})).desc.activation,
            blockdnn::eltwise_alg::relu);
    // The printed problem names the activation as benchdnn does, so it reads back in.
    for (const char *act : {"RELU", "TANH", "LOGISTIC"}) {
        const std::optional<spec_t> a =
                make_spec(prb("rnn", "l1t3sic8", {{"alg", "VANILLA_RNN"}, {"activation", act}}), 0);
        ASSERT_TRUE(a.has_value());
        const std::string printed = a->str;
        const std::size_t at = printed.find("--activation=");
        ASSERT_NE(at, std::string::npos) << printed;
        const std::string word = printed.substr(at + 13, printed.find(' ', at) - at - 13);
        EXPECT_EQ(word, act) << printed;
        const std::optional<spec_t> b =
                make_spec(prb("rnn", "l1t3sic8", {{"alg", "VANILLA_RNN"}, {"activation", word}}), 0);
        ASSERT_TRUE(b.has_value());
        EXPECT_EQ(std::get<rnn_spec_t>(b->op).desc.activation, std::get<rnn_spec_t>(a->op).desc.activation) << act;
    }
    // benchdnn's linear-activation testing knob: the real activations are checked instead.
    EXPECT_EQ(op_of<rnn_spec_t>(prb("rnn", "l1t3sic8", {{"skip-nonlinear", "true"}})).desc.cell,
            blockdnn::rnn_cell::lstm);

    const pool_spec_t p = op_of<pool_spec_t>(prb("pool", "mb2ic16ih8oh4kh2sh2", {{"alg", "avg_np"}}));
    EXPECT_EQ(p.desc.alg, blockdnn::pool_alg::avg_exclude_pad);
    EXPECT_EQ(p.desc.oh, 4);

    const eltwise_spec_t e =
            op_of<eltwise_spec_t>(prb("eltwise", "2x16x3x3", {{"alg", "logistic"}, {"alpha", "0.5"}}), 7);
    EXPECT_EQ(e.alg, blockdnn::eltwise_alg::sigmoid);
    EXPECT_EQ(e.alpha, 0.5f);
    EXPECT_EQ(e.dims, (blockdnn::dims_t {7, 16, 3, 3}));
}

TEST(DriverSpec, SoftmaxAxisTagInplaceAndMinibatch) {
    // benchdnn's defaults: --axis=1, the plain layout, out of place.
    const softmax_spec_t d = op_of<softmax_spec_t>(prb("softmax", "64x1000"));
    EXPECT_EQ(d.desc.axis, 1);
    EXPECT_EQ(d.desc.dims, (blockdnn::dims_t {64, 1000}));
    EXPECT_EQ(d.tag, "abx");
    EXPECT_FALSE(d.inplace);
    const softmax_spec_t s = op_of<softmax_spec_t>(prb("softmax", "1x21x64x64",
            {{"axis", "3"}, {"tag", "nchw"}, {"inplace", "true"}, {"dir", "FWD_I"}, {"alg", "SOFTMAX"}}));
    EXPECT_EQ(s.desc.axis, 3);
    EXPECT_EQ(s.tag, "nchw");
    EXPECT_TRUE(s.inplace);
    // benchdnn's newer --stag / --dtag, one layout for both.
    EXPECT_EQ(
            op_of<softmax_spec_t>(prb("softmax", "2x16x3x3", {{"stag", "aBx16b"}, {"dtag", "aBx16b"}})).tag, "aBx16b");
    // The command line's --mb wins over a file's, both replace the first dim.
    EXPECT_EQ(op_of<softmax_spec_t>(prb("softmax", "2x10", {{"mb", "5"}})).desc.dims, (blockdnn::dims_t {5, 10}));
    EXPECT_EQ(op_of<softmax_spec_t>(prb("softmax", "2x10", {{"mb", "5"}}), 3).desc.dims, (blockdnn::dims_t {3, 10}));
    // The printed problem reads back in: options, then softmax_desc::str().
    const std::optional<spec_t> n = make_spec(prb("softmax", "8x12x128x128_n\"attn\"", {{"axis", "3"}}));
    ASSERT_TRUE(n.has_value());
    EXPECT_EQ(n->name, "attn");
    EXPECT_EQ(n->str, "--tag=abx --axis=3 8x12x128x128");
    EXPECT_EQ(make_spec(prb("softmax", "4x5", {{"inplace", "true"}}))->str, "--tag=abx --inplace=true --axis=1 4x5");
}

TEST(DriverSpec, MatchFilters) {
    EXPECT_TRUE(make_spec(prb("conv", "ic3ih5oc4oh5kh3n\"fc6\"", {{"match", ".*fc6.*"}})).has_value());
    EXPECT_FALSE(make_spec(prb("conv", "ic3ih5oc4oh5kh3n\"fc7\"", {{"match", ".*fc6.*"}})).has_value());
    // The problems left to run (the header's count); a malformed pattern stays to be reported.
    const std::vector<problem_t> left =
            matched_problems({prb("conv", "ic3ih5oc4oh5kh3n\"fc6\"", {{"match", ".*fc6.*"}}),
                    prb("conv", "ic3ih5oc4oh5kh3n\"fc7\"", {{"match", ".*fc6.*"}}), prb("conv", "ic3ih5oc4oh5kh3"),
                    prb("conv", "ic3ih5oc4oh5kh1", {{"match", "("}})});
    ASSERT_EQ(left.size(), 3u);
    EXPECT_EQ(left[1].desc, "ic3ih5oc4oh5kh3");
    EXPECT_TRUE(matched_problems({prb("conv", "ic3ih5oc4oh5kh3", {{"match", "nothing"}})}).empty());
    expect_error(status::invalid_arguments, {"--match=(", "'(' is not supported at position 0"}, [] {
        make_spec(prb("conv", "ic3ih5oc4oh5kh3", {{"match", "("}}));
    });
    expect_error(status::invalid_arguments, {"--match=**", "repeats nothing"}, [] { match_pattern("**", "x"); });
    EXPECT_TRUE(match_pattern("a.c\\.d*", "abc.ddd"));
    EXPECT_FALSE(match_pattern("a.c\\.d*", "abcxd"));
    EXPECT_FALSE(match_pattern("fc6", "xfc6")); // the whole descriptor must match
    EXPECT_TRUE(match_pattern(".*.*.*.*.*.*.*.*.*.*b", std::string(5000, 'a') + "b")); // linear, no backtracking
    // Bracket classes, as benchdnn's test_conv_wino_f32 uses them (".*kh3[^0-9].*").
    EXPECT_TRUE(match_pattern(".*kh3[^0-9].*", "mb1ic16ih7oc16oh7kh3ph1"));
    EXPECT_FALSE(match_pattern(".*kh3[^0-9].*", "mb1ic16ih7oc16oh7kh31"));
    EXPECT_TRUE(match_pattern("[a-c]*x[]]", "abcabx]"));
    EXPECT_TRUE(match_pattern("a[\\-.]b", "a-b"));
    EXPECT_FALSE(match_pattern("[^a-z]", "q"));
    expect_error(status::invalid_arguments, {"--match=a[b", "'[' has no closing ']' at position 1"},
            [] { match_pattern("a[b", "ab"); });
    expect_error(status::invalid_arguments, {"--match=[z-a]", "runs backwards"}, [] { match_pattern("[z-a]", "a"); });
}

TEST(DriverSpec, UnsupportedProblemsNameTheOptionAndValue) {
    auto unimpl = [](const problem_t &p, std::initializer_list<const char *> frags) {
        expect_error(status::unimplemented, frags, [&] { make_spec(p); });
    };
    unimpl(prb("conv", "ic3ih5oc4oh5kh3", {{"dir", "BWD_D"}}), {"--dir=BWD_D", "only forward"});
    unimpl(prb("conv", "ic3ih5oc4oh5kh3", {{"dt", "bf16"}}), {"--dt=bf16", "only f32"});
    unimpl(prb("conv", "ic3ih5oc4oh5kh3", {{"alg", "WINO"}}), {"--alg=WINO"});
    unimpl(prb("conv", "ic3ih5oc4oh5kh3", {{"attr-post-ops", "relu+dw:k3s1p1"}}), {"'dw'"});
    unimpl(prb("conv", "ic3ih5oc4oh5kh3", {{"attr-post-ops", "sqrt"}}), {"sqrt"});
    unimpl(prb("conv", "ic3ih5oc4oh5kh3", {{"attr-post-ops", "sum+relu+sum"}}), {"a second sum"});
    unimpl(prb("conv", "ic3ih5oc4oh5kh3", {{"stag", "acdb"}}), {"--stag=acdb"});
    for (const char *wtag : {"axb", "aBx8b", "aBx16b"})
        unimpl(prb("conv", "ic3ih5oc4oh5kh3", {{"wtag", wtag}}), {"--wtag=", wtag, "only abx"});
    // Weights layouts of another rank, plain layouts for groups, activation layouts, and
    // benchdnn tags blockdnn lacks.
    unimpl(prb("conv", "ic3iw5oc4ow5kw3", {{"wtag", "oihw"}}), {"--wtag=oihw", "rank (oiw, goiw or"});
    unimpl(prb("conv", "ic3id5oc4od5kd3", {{"wtag", "goihw"}}), {"--wtag=goihw", "rank (oidhw, goidhw or"});
    unimpl(prb("conv", "g2ic4ih5oc4oh5kh3", {{"wtag", "oihw"}}), {"--wtag=oihw", "g = 2 needs a grouped", "(goihw"});
    unimpl(prb("conv", "ic3ih5oc4oh5kh3", {{"wtag", "nchw"}}), {"--wtag=nchw", "not a weights layout"});
    unimpl(prb("conv", "ic3ih5oc4oh5kh3", {{"wtag", "ABcd16a16b"}}), {"--wtag=ABcd16a16b"});
    unimpl(prb("conv", "ic3ih5oc4oh5kh3", {{"stag", "aBcd16b"}}), {"--stag=aBcd16b"});
    unimpl(prb("bnorm", "mb2ic16ih4", {{"tag", "NChw16n16c"}}), {"--tag=NChw16n16c"}); // oneDNN's, not blockdnn's
    EXPECT_NO_THROW(make_spec(prb("conv", "ic3ih5oc4oh5kh3", {{"wtag", "goihw"}})));   // grouped, g = 1
    unimpl(prb("conv", "ic3ih5oc4oh5kh3", {{"attr-zero-points", "src:common:1"}}), {"--attr-zero-points"});
    unimpl(prb("bnorm", "mb2ic16", {{"flags", "CHA"}}), {"--flags=CHA", "'A'"});
    unimpl(prb("rnn", "l1t2sic16", {{"prop", "BWD_DW"}}), {"--prop=BWD_DW"});
    unimpl(prb("rnn", "l1t2sic16", {{"tag", "tcn:any:tnc"}}), {"data layout 'tcn'"});
    unimpl(prb("rnn", "l1t2sic16", {{"tag", "tnc:ldoig:tnc"}}), {"weights layout 'ldoig'"});
    unimpl(prb("rnn", "l1t2sic16", {{"cfg", "bf16"}}), {"--cfg=bf16"});
    // Older lists give other ops' types by --cfg as well: not run as f32.
    unimpl(prb("conv", "ic3ih5oc4oh5kh3", {{"cfg", "u8s8u8"}}), {"--cfg=u8s8u8", "only f32"});
    unimpl(prb("bnorm", "mb2ic16", {{"cfg", "bf16"}}), {"--cfg=bf16"});
    unimpl(prb("pool", "mb2ic16ih8kh2", {{"cfg", "s8"}}), {"--cfg=s8"});
    unimpl(prb("eltwise", "2x3", {{"cfg", "f16"}}), {"--cfg=f16"});
    EXPECT_NO_THROW(make_spec(prb("conv", "ic3ih5oc4oh5kh3", {{"cfg", "f32"}})));
    unimpl(prb("rnn", "l1t2sic16", {{"with-projection", "true"}}), {"--with-projection=true"});
    unimpl(prb("rnn", "l1t2sic16dic8"), {"dic = 8", "dhc = 16"});
    unimpl(prb("rnn", "l1t2sic16dhc32"), {"sic = 16", "dhc = 32"});
    unimpl(prb("rnn", "l1t2sic16", {{"alg", "LBR_AUGRU"}}), {"--alg=LBR_AUGRU"});
    unimpl(prb("pool", "mb2ic16ih8kh2", {{"dir", "BWD_D"}}), {"--dir=BWD_D"});
    unimpl(prb("eltwise", "2x3", {{"alg", "square"}}), {"--alg=square"});
    unimpl(prb("eltwise", "2x3", {{"alg", "mish"}}), {"--alg=mish", "not an eltwise function of blockdnn"});
    unimpl(prb("softmax", "2x3", {{"dir", "BWD_D"}}), {"--dir=BWD_D", "only forward softmax"});
    unimpl(prb("softmax", "2x3", {{"alg", "LOGSOFTMAX"}}), {"--alg=LOGSOFTMAX", "only SOFTMAX"});
    unimpl(prb("softmax", "2x16x3x3", {{"stag", "aBx16b"}, {"dtag", "abx"}}),
            {"--dtag=abx differs from the source layout aBx16b", "one layout"});
    unimpl(prb("softmax", "2x3", {{"dt", "bf16"}}), {"--dt=bf16", "only f32"});
    unimpl(prb("softmax", "2x3", {{"attr-scales", "src:common:64"}}), {"--attr-scales"});
    unimpl(prb("softmax", "2x16x4x4", {{"tag", "NChw16n16c"}}), {"--tag=NChw16n16c"});
    unimpl(prb("conv", "ic3ih5oc4oh5kh3", {{"attr-post-ops", "max:f32:per_oc"}}),
            {"'max' post-ops are not implemented"});
    // benchdnn's long names of kinds blockdnn does not run are skips too, not typos.
    for (const char *po : {"binary_add:f32", "binary_max:f16:3:ab", "dw_k3s1p1", "eltwise_mish", "brelu:6",
                 "relu_use_dst_for_bwd", "eltwise_tanh_use_dst_for_bwd"})
        unimpl(prb("conv", "ic3ih5oc4oh5kh3", {{"attr-post-ops", po}}), {po});
    unimpl(prb("conv", "ic3ih5oc4oh5kh3", {{"dt", "f32:s8:f32"}}), {"--dt=f32:s8:f32", "only f32"});
}

TEST(DriverSpec, MalformedProblemsNameTheField) {
    auto invalid = [](const problem_t &p, std::initializer_list<const char *> frags) {
        expect_error(status::invalid_arguments, frags, [&] { make_spec(p); });
    };
    invalid(prb("conv", "ic3ih5oc4oh5kh3", {{"dir", "SIDEWAYS"}}), {"--dir=SIDEWAYS"});
    invalid(prb("conv", "ic3ih5oc4kh3zz9"), {"unknown key 'zz'"});
    invalid(prb("conv", "ic3ih5oc4oh5kh3", {{"mb", "-1"}}), {"--mb", "'-1'"});
    invalid(prb("conv", "ic3ih5oc4oh5kh3", {{"attr-post-ops", "relu:x"}}), {"'x' is not a finite number"});
    invalid(prb("bnorm", "mb2ic16", {{"flags", "Q"}}), {"--flags=Q", "'Q'"});
    invalid(prb("bnorm", "mb2ih4"), {"ic is required"});
    invalid(prb("bnorm", "mb2ic4eps1e40"), {"eps 1e40 is not a finite float"});
    invalid(prb("bnorm", "mb2ic4eps-1"), {"'mb2ic4eps-1'", "epsilon = -1", ">= 0"});
    invalid(prb("bnorm", "mb2ic4", {{"inplace", "maybe"}}), {"--inplace", "'maybe'"});
    invalid(prb("rnn", "l1t2sic16", {{"direction", "up"}}), {"--direction=up"});
    invalid(prb("rnn", "l1t2sic16", {{"tag", "tnc:any"}}), {"--tag=tnc:any", "SRC:WEI:DST"});
    invalid(prb("rnn", "l0t2sic16"), {"'l0t2sic16'", "l = 0 must be positive"});
    invalid(prb("rnn", "l1t2sic16", {{"mb", "2000000"}}), {"mb = 2000000 is not in [1, 2^20]"});
    invalid(prb("conv", "ic3ih5oc4oh5kh3", {{"attr-post-ops", "relu+"}}), {"--attr-post-ops=relu+", "an empty item"});
    invalid(prb("rnn", "l1t36666666666666666666666sic16"), {"number for key 't' is too long"}); // found by fuzz_batch
    invalid(prb("pool", "mb2ic16ih8kh2", {{"alg", "median"}}), {"--alg=median"});
    invalid(prb("eltwise", "2x0x3"), {"dims[1] = 0"});
    invalid(prb("eltwise", "2x3", {{"beta", "inf"}}), {"--beta", "'inf'"});
    invalid(prb("eltwise", "100000x100000x100000"), {"more than 2^34 elements"});
    invalid(prb("softmax", "100000x100000x100000"), {"softmax '100000x100000x100000'", "more than 2^34 elements"});
    invalid(prb("softmax", "2x3", {{"axis", "2"}}), {"'2x3'", "axis = 2 is outside [0, 2)"});
    invalid(prb("softmax", "2x3", {{"axis", "-1"}}), {"--axis", "'-1'"});
    invalid(prb("softmax", "2x0"), {"dims[1] = 0"});
    invalid(prb("softmax", "2x3", {{"alg", "bogus"}}), {"--alg=bogus", "not SOFTMAX or LOGSOFTMAX"});
    invalid(prb("softmax", "2x3", {{"tag", "bogus"}}), {"--tag=bogus", "not a layout name"});
    invalid(prb("softmax", "2x3", {{"dir", "BWD_W"}}), {"--dir=BWD_W", "not FWD_D, FWD_I or BWD_D"});
    // Words that are no benchdnn data type, eltwise algorithm or layout are typos, not skips.
    invalid(prb("conv", "ic3ih5oc4oh5kh3", {{"stag", "bogus"}}), {"--stag=bogus", "not a layout name"});
    invalid(prb("conv", "ic3ih5oc4oh5kh3", {{"wtag", "bogus"}}), {"--wtag=bogus", "not a layout name"});
    invalid(prb("bnorm", "mb2ic16", {{"tag", "nchw_16"}}), {"--tag=nchw_16", "not a layout name"});
    invalid(prb("rnn", "l1t2sic16", {{"tag", "tnc:bogus:tnc"}}),
            {"--tag=tnc:bogus:tnc", "'bogus' is not a layout name"});
    invalid(prb("conv", "ic3ih5oc4oh5kh3", {{"dt", "xyz"}}), {"--dt=xyz", "'xyz' is not a data type"});
    invalid(prb("conv", "ic3ih5oc4oh5kh3", {{"dt", "f32:f23:f32"}}), {"--dt=f32:f23:f32", "'f23'"});
    invalid(prb("eltwise", "2x3", {{"alg", "bogus"}}), {"--alg=bogus", "not an eltwise algorithm"});
    invalid(prb("conv", "ic3ih5oc4oh5kh3", {{"attr-post-ops", "foo"}}),
            {"--attr-post-ops=foo", "not an eltwise algorithm"});
}
