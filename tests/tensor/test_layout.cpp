// SPDX-License-Identifier: Apache-2.0
// Format tags, tensor descriptors (padded dims, strides, offsets, sizes) and their errors.
#include <climits>
#include <cstdint>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "blockdnn/blockdnn.hpp"
#include "common/test_util.hpp"

using namespace blockdnn;

TEST(Layout, TagNamesRoundTrip) {
    for (int t = 1; t <= static_cast<int>(format_tag::ldgo); ++t) {
        const format_tag tag = static_cast<format_tag>(t);
        EXPECT_EQ(format_tag_from_string(to_string(tag)), tag) << to_string(tag);
    }
    expect_error(status::invalid_arguments, {"nChw32c"}, [] { format_tag_from_string("nChw32c"); });
}

TEST(Layout, NdimsPerTag) {
    EXPECT_EQ(ndims_of(format_tag::x), 1);
    EXPECT_EQ(ndims_of(format_tag::nc), 2);
    EXPECT_EQ(ndims_of(format_tag::tnc), 3);
    EXPECT_EQ(ndims_of(format_tag::nChw16c), 4);
    EXPECT_EQ(ndims_of(format_tag::nCdhw8c), 5);
    EXPECT_EQ(ndims_of(format_tag::OIhw16i16o), 4);
    EXPECT_EQ(ndims_of(format_tag::gOIhw16i16o), 5);
    EXPECT_EQ(ndims_of(format_tag::goidhw), 6);
    EXPECT_EQ(ndims_of(format_tag::ldigo), 5);
    EXPECT_EQ(ndims_of(format_tag::ldnc), 4);
    EXPECT_TRUE(is_blocked(format_tag::Goihw16g));
    EXPECT_FALSE(is_blocked(format_tag::hwio));
}

// Offsets against formulas written out by hand for each kind of layout.
TEST(Layout, OffsetsMatchHandFormulas) {
    const dim_t N = 2, C = 19, H = 3, W = 5;
    const tensor_desc nchw({N, C, H, W}, format_tag::nchw), nhwc({N, C, H, W}, format_tag::nhwc);
    const tensor_desc b16({N, C, H, W}, format_tag::nChw16c), b8({N, C, H, W}, format_tag::nChw8c);
    const dim_t CB16 = 2, CB8 = 3;
    for_each_index(nchw, [&](const dim_t *idx) {
        const dim_t n = idx[0], c = idx[1], h = idx[2], w = idx[3];
        EXPECT_EQ(nchw.offset(idx), ((n * C + c) * H + h) * W + w);
        EXPECT_EQ(nhwc.offset(idx), ((n * H + h) * W + w) * C + c);
        EXPECT_EQ(b16.offset(idx), (((n * CB16 + c / 16) * H + h) * W + w) * 16 + c % 16);
        EXPECT_EQ(b8.offset(idx), (((n * CB8 + c / 8) * H + h) * W + w) * 8 + c % 8);
    });
    const dim_t O = 20, I = 3, KH = 3, KW = 2;
    const tensor_desc oihw({O, I, KH, KW}, format_tag::oihw), hwio({O, I, KH, KW}, format_tag::hwio);
    const tensor_desc w16({O, I, KH, KW}, format_tag::OIhw16i16o);
    for_each_index(oihw, [&](const dim_t *idx) {
        const dim_t o = idx[0], i = idx[1], kh = idx[2], kw = idx[3];
        EXPECT_EQ(oihw.offset(idx), ((o * I + i) * KH + kh) * KW + kw);
        EXPECT_EQ(hwio.offset(idx), ((kh * KW + kw) * I + i) * O + o);
        // IB = 1: (((ob*IB + ib)*KH + kh)*KW + kw)*256 + (i%16)*16 + o%16
        EXPECT_EQ(w16.offset(idx), ((o / 16 * KH + kh) * KW + kw) * 256 + i * 16 + o % 16);
    });
    const dim_t G = 19;
    const tensor_desc dw({G, 1, 1, 3, 3}, format_tag::Goihw16g);
    for (dim_t g = 0; g < G; ++g)
        for (dim_t k = 0; k < 9; ++k) {
            const dim_t idx[] = {g, 0, 0, k / 3, k % 3};
            EXPECT_EQ(dw.offset(idx), (g / 16 * 9 + k) * 16 + g % 16);
        }
    const dim_t T = 4, MB = 3, SC = 7;
    const tensor_desc tnc({T, MB, SC}, format_tag::tnc), ntc({T, MB, SC}, format_tag::ntc);
    const dim_t idx[] = {2, 1, 5};
    EXPECT_EQ(tnc.offset(idx), (2 * MB + 1) * SC + 5);
    EXPECT_EQ(ntc.offset(idx), (1 * T + 2) * SC + 5);
    const tensor_desc ldigo({2, 1, 5, 4, 6}, format_tag::ldigo), ldgoi({2, 1, 5, 4, 6}, format_tag::ldgoi);
    const dim_t widx[] = {1, 0, 3, 2, 5}; // l d i g o
    EXPECT_EQ(ldigo.offset(widx), (((1 * 1 + 0) * 5 + 3) * 4 + 2) * 6 + 5);
    EXPECT_EQ(ldgoi.offset(widx), (((1 * 1 + 0) * 4 + 2) * 6 + 5) * 5 + 3);
}

TEST(Layout, PaddedDimsAndSizes) {
    const tensor_desc d({3, 17, 5, 7}, format_tag::nChw16c);
    EXPECT_EQ(d.padded_dims(), (dims_t {3, 32, 5, 7}));
    EXPECT_EQ(d.nelems(), 3 * 17 * 5 * 7);
    EXPECT_EQ(d.nelems_padded(), 3 * 32 * 5 * 7);
    EXPECT_EQ(d.size_bytes(), std::size_t(3 * 32 * 5 * 7 * 4));
    const tensor_desc w({33, 3, 3, 3}, format_tag::OIhw8i8o);
    EXPECT_EQ(w.padded_dims(), (dims_t {40, 8, 3, 3}));
    const tensor_desc p({3, 17, 5, 7}, format_tag::nchw);
    EXPECT_EQ(p.padded_dims(), p.dims());
    EXPECT_EQ(p.str(), "nchw:3x17x5x7");
}

TEST(Layout, BadDescriptorsNameTheField) {
    expect_error(status::invalid_arguments, {"dims[1] (c) = 0"}, [] { tensor_desc({2, 0, 3, 3}, format_tag::nchw); });
    expect_error(status::invalid_arguments, {"dims[3] (w) = -4"}, [] {
        tensor_desc({2, 3, 3, -4}, format_tag::nChw16c);
    });
    expect_error(status::invalid_arguments, {"dims[0] (o) = 0"}, [] { tensor_desc({0, 3, 3, 3}, format_tag::oihw); });
    expect_error(status::invalid_arguments, {"7 dims"}, [] { tensor_desc({1, 1, 1, 1, 1, 1, 1}, format_tag::nchw); });
    expect_error(status::invalid_arguments, {"0 dims"}, [] { tensor_desc({}, format_tag::nchw); });
    expect_error(status::invalid_arguments, {"nChw16c needs 4 dims, got 5"}, [] {
        tensor_desc({1, 2, 3, 4, 5}, format_tag::nChw16c);
    });
    expect_error(status::invalid_arguments, {"undef"}, [] { tensor_desc({1}, format_tag::undef); });
    // A cast integer outside the enumeration: an error, not a read past the tag table.
    expect_error(status::invalid_arguments, {"format tag 999 is not a format_tag value"}, [] {
        tensor_desc({2, 3, 3}, static_cast<format_tag>(999));
    });
    expect_error(status::invalid_arguments, {"format tag -1"}, [] { tensor_desc({2}, static_cast<format_tag>(-1)); });
    EXPECT_STREQ(to_string(static_cast<format_tag>(999)), "unknown");
    expect_error(status::invalid_arguments, {"data type 77 is not a data_type value"}, [] {
        tensor_desc({2, 3}, static_cast<data_type>(77), format_tag::nc);
    });
    EXPECT_STREQ(to_string(static_cast<data_type>(77)), "unknown");
    expect_error(status::unimplemented, {"bf16"}, [] { tensor_desc({2}, data_type::bf16, format_tag::x); });
}

TEST(Layout, SizeOverflowIsAnError) {
    const dim_t big = dim_t(1) << 40;
    expect_error(status::invalid_arguments, {"int64"}, [&] { tensor_desc({big, big, 2, 2}, format_tag::nchw); });
    // Elements fit, bytes do not.
    expect_error(status::invalid_arguments, {"bytes"}, [&] {
        tensor_desc({dim_t(1) << 31, dim_t(1) << 31}, format_tag::nc);
    });
    expect_error(status::invalid_arguments, {"too large to pad"}, [&] {
        tensor_desc({1, INT64_MAX - 3, 1, 1}, format_tag::nChw16c);
    });
}

TEST(Tensor, OwnedMemoryIsAlignedAndZero) {
    const tensor t(tensor_desc({2, 17, 3, 3}, format_tag::nChw16c));
    EXPECT_TRUE(t.owns_memory());
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(t.data()) % 64, 0u);
    const float *p = t.f32();
    for (dim_t i = 0; i < t.desc().nelems_padded(); ++i) ASSERT_EQ(p[i], 0.f);
}

TEST(Tensor, WrappedPointersAreChecked) {
    const tensor_desc d({4, 4}, format_tag::nc);
    alignas(64) float buf[17] = {};
    const tensor t(d, buf);
    EXPECT_FALSE(t.owns_memory());
    EXPECT_EQ(t.f32(), buf);
    expect_error(status::invalid_arguments, {"null"}, [&] { tensor(d, nullptr); });
    void *misaligned = reinterpret_cast<char *>(buf) + 2;
    expect_error(status::invalid_arguments, {"not aligned", "4-byte"}, [&] { tensor(d, misaligned); });
}

TEST(Tensor, CopiesShareMemory) {
    tensor a(tensor_desc({8}, format_tag::x));
    const tensor b = a;
    a.f32()[3] = 5.f;
    EXPECT_EQ(b.f32()[3], 5.f);
    EXPECT_EQ(a.data(), b.data());
}

TEST(Tensor, OwnerKeepsWrappedMemoryAlive) {
    const tensor_desc d({4, 4}, format_tag::nc);
    auto buf = std::make_shared<std::vector<float>>(16, 1.f);
    std::weak_ptr<std::vector<float>> alive = buf;
    {
        const tensor t(d, buf->data(), buf);
        buf.reset();
        EXPECT_TRUE(t.owns_memory());
        const tensor copy = t;
        EXPECT_FALSE(alive.expired());
        EXPECT_EQ(copy.f32()[15], 1.f);
    }
    EXPECT_TRUE(alive.expired());
    float local[16] = {};
    expect_error(status::invalid_arguments, {"owner", "null"}, [&] { tensor(d, local, nullptr); });
}
