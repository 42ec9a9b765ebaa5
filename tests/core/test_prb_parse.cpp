// SPDX-License-Identifier: Apache-2.0
// benchdnn descriptor parsing: the rules of /work/shared/data/benchdnn/README.md on examples
// from oneDNN's lists, round trips through str(), and every rejection with its message.
#include <random>

#include <gtest/gtest.h>

#include "blockdnn/binary.hpp"
#include "blockdnn/eltwise.hpp"
#include "core/prb_parse.hpp"
#include "common/test_util.hpp"

using namespace blockdnn;
using blockdnn::parse_conv_desc;
using blockdnn::parse_ip_desc;
using blockdnn::parse_pool_desc;

TEST(PrbParse, ConvDefaultsAndSquareCopy) {
    std::string name;
    const conv_desc c = parse_conv_desc("mb1ic64ih56oc64oh56kh3ph1n\"resnet_50:res2a_branch2b*3\"", &name);
    EXPECT_EQ(name, "resnet_50:res2a_branch2b*3");
    EXPECT_EQ(c.ndims, 4);
    EXPECT_EQ(c.mb, 1);
    EXPECT_EQ(c.g, 1);
    EXPECT_EQ(c.ic, 64);
    EXPECT_EQ(c.oc, 64);
    EXPECT_EQ(c.ih, 56);
    EXPECT_EQ(c.iw, 56); // copied from h
    EXPECT_EQ(c.oh, 56);
    EXPECT_EQ(c.ow, 56);
    EXPECT_EQ(c.kw, 3);
    EXPECT_EQ(c.pw, 1);
    EXPECT_EQ(c.ph_r, 1);
    EXPECT_EQ(c.pw_r, 1);
    EXPECT_EQ(c.sh, 1);
    EXPECT_EQ(c.dh, 0);
    EXPECT_EQ(c.id, 1);
    EXPECT_FALSE(c.with_bias);
    EXPECT_EQ(parse_conv_desc("ic3ih5oc4kh3").mb, 2); // benchdnn's default minibatch
}

TEST(PrbParse, ConvOutputAndPadRules) {
    // Without o: p defaults to 0 and o = (i + 2p - ext) / s + 1.
    conv_desc c = parse_conv_desc("ic3ih7oc4kh3sh2");
    EXPECT_EQ(c.oh, 3);
    EXPECT_EQ(c.ph, 0);
    EXPECT_EQ(c.ph_r, 0);
    // With o but no p: p = ((o-1)s - i + ext) / 2.
    c = parse_conv_desc("ic3ih56oc4oh56kh3");
    EXPECT_EQ(c.ph, 1);
    EXPECT_EQ(c.ph_r, 1);
    // Asymmetric: ih16kh3ph1oh15 gives top 1, bottom 0 (shapes_regression_padding).
    c = parse_conv_desc("mb1ic16oc16_ih16kh3ph1oh15_iw16kw3pw0ow15");
    EXPECT_EQ(c.ph, 1);
    EXPECT_EQ(c.ph_r, 0);
    EXPECT_EQ(c.pw, 0);
    EXPECT_EQ(c.pw_r, 1);
    // A negative end pad: the last input row is never read.
    c = parse_conv_desc("mb1ic1oc16_kd2kh1kw1_id2ih1iw1_od1oh1ow1_sd2sh1sw1_pd1ph0pw0");
    EXPECT_EQ(c.ndims, 5);
    EXPECT_EQ(c.pd, 1);
    EXPECT_EQ(c.pd_r, -1);
    // Dilation: oneDNN's convention, dh1 is PyTorch's dilation 2.
    c = parse_conv_desc("ic8ih12oc8kh3dh1");
    EXPECT_EQ(c.dh, 1);
    EXPECT_EQ(c.oh, 8);
}

TEST(PrbParse, ConvDimensionality) {
    EXPECT_EQ(parse_conv_desc("mb2ic5iw17oc7kw3").ndims, 3);
    const conv_desc c3 = parse_conv_desc("ic4id6oc8kd3sd2pd1");
    EXPECT_EQ(c3.ndims, 5);
    EXPECT_EQ(c3.ih, 6);
    EXPECT_EQ(c3.kw, 3);
    EXPECT_EQ(c3.sh, 2);
    EXPECT_EQ(c3.pw, 1);
    EXPECT_EQ(c3.ow, 3);
    const conv_desc g = parse_conv_desc("g32ic32ih112oc32oh112kh3ph1");
    EXPECT_EQ(g.g, 32);
    const conv_desc r = parse_conv_desc("g1mb50ic3ih224iw224oc64oh112ow112kh7kw7sh2sw2ph3pw3n\"resnet_50:conv1\"");
    EXPECT_EQ(r.ow, 112);
    EXPECT_EQ(r.pw_r, 2); // (112-1)*2 - 224 + 7 - 3
}

// str() writes a descriptor that parses back to the same problem.
TEST(PrbParse, ConvRoundTrip) {
    const char *const descs[] = {"mb1ic64ih56oc64oh56kh3ph1", "g1mb50ic3ih224iw224oc64oh112ow112kh7kw7sh2sw2ph3pw3",
            "mb1ic16oc16_ih16kh3ph1oh15_iw16kw3pw0ow15", "mb1ic16id1ih1iw1oc16od2oh2ow1kd3kh3kw1dd1dh1ph1pd1",
            "mb1ic1oc16_kd2kh1kw1_id2ih1iw1_od1oh1ow1_sd2sh1sw1_pd1ph0pw0", "g8mb1ic8ih7oc24oh4kh3sh2ph1",
            "mb2ic5iw17oc7ow9kw3sw2pw1", "mb1ic16oc16_ih10kh5_ph7sh1", "ic4id6ih5iw4oc8kd3kh2kw1dd1"};
    for (const char *s : descs) {
        const conv_desc a = parse_conv_desc(s);
        const conv_desc b = parse_conv_desc(a.str());
        EXPECT_EQ(b.str(), a.str()) << s;
        EXPECT_EQ(b.src_dims(), a.src_dims()) << s;
        EXPECT_EQ(b.dst_dims(), a.dst_dims()) << s;
        EXPECT_EQ(b.wei_dims(true), a.wei_dims(true)) << s;
        const dim_t fa[] = {a.sd, a.sh, a.sw, a.pd, a.ph, a.pw, a.pd_r, a.ph_r, a.pw_r, a.dd, a.dh, a.dw, a.g};
        const dim_t fb[] = {b.sd, b.sh, b.sw, b.pd, b.ph, b.pw, b.pd_r, b.ph_r, b.pw_r, b.dd, b.dh, b.dw, b.g};
        for (int k = 0; k < 13; ++k) EXPECT_EQ(fa[k], fb[k]) << s << " field " << k;
    }
}

// Seeded random valid problems round-trip too (including pads the parser would not infer).
TEST(PrbParse, RandomConvRoundTrip) {
    const unsigned seed = 4242;
    seeded_ints rnd(seed);
    for (int t = 0; t < 200; ++t) {
        conv_desc c;
        c.ndims = static_cast<int>(rnd(3, 5));
        c.g = rnd(1, 3);
        c.ic = c.g * rnd(1, 4);
        c.oc = c.g * rnd(1, 4);
        c.mb = rnd(1, 4);
        const auto [i, k, s, p, pr, dl] = spatial_ptrs(c);
        for (int x = 5 - c.ndims; x < 3; ++x) {
            *i[x] = rnd(1, 20), *k[x] = rnd(1, 5), *s[x] = rnd(1, 3), *dl[x] = rnd(0, 2), *p[x] = rnd(0, 4);
            const dim_t ext = (*k[x] - 1) * (*dl[x] + 1) + 1;
            *pr[x] = std::max(ext - *i[x] - *p[x], rnd(-2, 4));
        }
        c.infer_dst_dims();
        c.validate();
        const conv_desc b = parse_conv_desc(c.str());
        ASSERT_EQ(b.str(), c.str()) << "seed " << seed << " case " << t;
        EXPECT_EQ(b.dst_dims(), c.dst_dims()) << c.str();
        EXPECT_EQ(b.ph, c.ph) << c.str();
        // The parsed end pad is the smallest giving the same output, never more than the original.
        EXPECT_LE(b.ph_r, c.ph_r) << c.str();
        EXPECT_LE(b.pw_r, c.pw_r) << c.str();
    }
}

TEST(PrbParse, ConvRejectsWithMessage) {
    const status bad = status::invalid_arguments;
    expect_error(bad, {"conv descriptor 'ic3ix5oc4kh3': unknown key 'ix'"}, [] { parse_conv_desc("ic3ix5oc4kh3"); });
    expect_error(bad, {"key 'ih' at position 3 has no number"}, [] { parse_conv_desc("ic3ihoc4kh3"); });
    expect_error(bad, {"'ic' given twice"}, [] { parse_conv_desc("ic3ic4ih5oc4kh3"); });
    expect_error(bad, {"'oc' is missing"}, [] { parse_conv_desc("ic3ih5kh3"); });
    expect_error(bad, {"'kh' is missing"}, [] { parse_conv_desc("ic3ih5oc4"); });
    expect_error(bad, {"'ih' is missing"}, [] { parse_conv_desc("ic3oc4oh5kh3"); });
    expect_error(bad, {"no spatial keys"}, [] { parse_conv_desc("ic3oc4"); });
    expect_error(bad, {"unexpected character '-'"}, [] { parse_conv_desc("ic3-ih5oc4kh3"); });
    expect_error(bad, {"is empty"}, [] { parse_conv_desc(""); });
    expect_error(bad, {"'h' and 'w' keys or neither"}, [] { parse_conv_desc("ic3id5ih5oc4kd3kh3"); });
    expect_error(bad, {"ext_kh = 5", "would not be positive"}, [] { parse_conv_desc("ic3ih3oc4kh5"); });
    expect_error(bad, {"sh = 0"}, [] { parse_conv_desc("ic3ih3oc4kh1sh0"); });
    // Rules of conv_desc::validate, quoted with the descriptor.
    expect_error(
            bad, {"'g3ic64ih5oc64kh3'", "g = 3 does not divide ic = 64"}, [] { parse_conv_desc("g3ic64ih5oc64kh3"); });
    expect_error(bad, {"dh = -2"}, [] { parse_conv_desc("ic3ih9oc4kh3dh-2"); });
    expect_error(bad, {"ph = -1"}, [] { parse_conv_desc("ic3ih9oc4oh9kh3ph-1"); });
    expect_error(bad, {"too long"}, [] { parse_conv_desc("ic3ih12345678901234oc4kh3"); });
    // Out-of-range numbers are named before the output size or the pads are worked out from
    // them (kh x dh would wrap, and o would be blamed).
    expect_error(bad, {"kh = 3037000500 is out of range (|kh| < 2^31)"},
            [] { parse_conv_desc("mb1ic16ih8oc16kh3037000500dh3037000500"); });
    expect_error(bad, {"ph = -3000000000 is out of range"}, [] { parse_conv_desc("mb1ic16ih8oc16kh3ph-3000000000"); });
    expect_error(bad, {"oh = 4000000000 is out of range"}, [] { parse_conv_desc("ic3ih9oc4oh4000000000kh3"); });
    // A begin pad implied by o (benchdnn's rule) that comes out negative says where it came from.
    expect_error(bad, {"oh = 1 implies ph = ((oh - 1) * sh - ih + ext_kh) / 2 = -2 (ext_kh = 3), which must be >= 0"},
            [] { parse_conv_desc("mb1ic16ih8oc16oh1kh3"); });
    // ... but where k, o or d is itself wrong, that is what the message names.
    expect_error(bad, {"kh = 0 must be positive"}, [] { parse_conv_desc("ic3ih9oc4oh5kh0"); });
    expect_error(bad, {"oh = 0 must be positive"}, [] { parse_conv_desc("ic3ih9oc4oh0kh3"); });
    expect_error(bad, {"dh = -2 must be >= 0"}, [] { parse_conv_desc("ic3ih9oc4oh5kh3dh-2"); });
    EXPECT_EQ(parse_conv_desc("mb1ic16ih8oc16oh1kh3ph0").ph_r, -5); // given, the end pad may be negative
}

TEST(PrbParse, Pool) {
    std::string name;
    const pool_desc p = parse_pool_desc("mb2ic64ih112oh56kh3sh2ph1n\"resnet:pool1\"", pool_alg::max, &name);
    EXPECT_EQ(name, "resnet:pool1");
    EXPECT_EQ(p.alg, pool_alg::max);
    EXPECT_EQ(p.ndims, 4);
    EXPECT_EQ(p.ic, 64);
    EXPECT_EQ(p.ow, 56);
    EXPECT_EQ(p.pw, 1);
    EXPECT_EQ(p.ph_r, 0); // (56-1)*2 - 112 + 3 - 1
    const pool_desc a = parse_pool_desc("ic3id4kd2", pool_alg::avg_exclude_pad);
    EXPECT_EQ(a.ndims, 5);
    EXPECT_EQ(a.od, 3);
    EXPECT_EQ(a.alg, pool_alg::avg_exclude_pad);
    EXPECT_EQ(parse_pool_desc(a.str(), a.alg).str(), a.str());
    EXPECT_EQ(parse_pool_desc(p.str()).str(), p.str());
    expect_error(status::invalid_arguments, {"unknown key 'oc'"}, [] { parse_pool_desc("ic3ih5oc4kh3"); });
    expect_error(status::invalid_arguments, {"covers no input element"}, [] { parse_pool_desc("ic3ih4oh4kh2ph3"); });
}

TEST(PrbParse, InnerProduct) {
    inner_product_desc d = parse_ip_desc("mb2ic64ih7oc1000");
    EXPECT_EQ(d.ndims, 4);
    EXPECT_EQ(d.iw, 7);
    EXPECT_EQ(d.oc, 1000);
    EXPECT_EQ(parse_ip_desc(d.str()).str(), d.str());
    d = parse_ip_desc("mb3ic512oc10");
    EXPECT_EQ(d.ndims, 2);
    EXPECT_EQ(d.src_dims(), (dims_t {3, 512}));
    EXPECT_EQ(d.wei_dims(), (dims_t {10, 512}));
    EXPECT_EQ(parse_ip_desc("ic4id3oc5").src_dims(), (dims_t {2, 4, 3, 3, 3}));
    expect_error(status::invalid_arguments, {"unknown key 'kh'"}, [] { parse_ip_desc("ic4ih3oc5kh3"); });
    expect_error(status::invalid_arguments, {"'oc' is missing"}, [] { parse_ip_desc("ic4ih3"); });
}

// A layout named for another rank (nhwc on a 1-D problem) is refused with this rank's tag of
// the same layout; benchdnn's generic tags and unknown names get no hint.
TEST(PrbParse, TagOfAnotherRankNamesThisRanksTag) {
    using ft = format_tag;
    const status bad = status::invalid_arguments;
    EXPECT_EQ(impl::parse_tag("axb", 3), ft::nwc);
    EXPECT_EQ(impl::parse_tag("nCdhw8c", 5), ft::nCdhw8c);
    EXPECT_EQ(impl::parse_tag("nc", 2), ft::nc);
    expect_error(bad, {"tag 'nhwc' does not describe 3 dims: for 3 dims use nwc (or axb)"},
            [] { impl::parse_tag("nhwc", 3); });
    expect_error(bad, {"tag 'nchw' does not describe 5 dims: for 5 dims use ncdhw (or abx)"},
            [] { impl::parse_tag("nchw", 5); });
    expect_error(bad, {"tag 'nChw16c' does not describe 5 dims: for 5 dims use nCdhw16c (or aBx16b)"},
            [] { impl::parse_tag("nChw16c", 5); });
    expect_error(bad, {"tag 'nCw8c' does not describe 4 dims: for 4 dims use nChw8c (or aBx8b)"},
            [] { impl::parse_tag("nCw8c", 4); });
    // No tag of the layout for this rank (blocked, 2 dims), a generic tag, a weights tag.
    for (const auto &[text, nd] : {std::pair<const char *, int> {"nChw8c", 2}, {"aBx16b", 2}, {"axb", 1}, {"oihw", 3}})
        try {
            impl::parse_tag(text, nd);
            ADD_FAILURE() << text << " accepted for " << nd << " dims";
        } catch (const error &e) {
            EXPECT_EQ(e.code(), bad);
            EXPECT_EQ(std::string(e.what()),
                    std::string("tag '") + text + "' does not describe " + std::to_string(nd) + " dims");
        }
    expect_error(bad, {"unknown tag 'nhcw'"}, [] { impl::parse_tag("nhcw", 4); });
}

TEST(PrbParse, DimsRejectAnXThatSeparatesNothing) {
    const status bad = status::invalid_arguments;
    EXPECT_EQ(impl::parse_dims("2x3"), (dims_t {2, 3}));
    expect_error(bad, {"dims '2x3x'", "expected a number at position 4"}, [] { impl::parse_dims("2x3x"); });
    expect_error(bad, {"dims '2xx3'", "expected a number at position 2"}, [] { impl::parse_dims("2xx3"); });
    expect_error(bad, {"dims 'x2x3'", "expected a number at position 0"}, [] { impl::parse_dims("x2x3"); });
    expect_error(bad, {"dims '2x3x'", "expected a number"}, [] { parse_eltwise_desc("2x3x"); });
    expect_error(bad, {"dims '2x3x'", "expected a number"}, [] { parse_binary_desc("2x3x:2x3"); });
}
