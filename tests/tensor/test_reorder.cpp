// SPDX-License-Identifier: Apache-2.0
// Reorders: seeded random shapes over every layout pair kind, at every ISA level this machine
// has, checked element by element against the logical index (an oracle independent of the
// kernels), round trips bit-exact, padding zero; and the errors.
#include <cstring>
#include <random>

#include <gtest/gtest.h>

#include "blockdnn/blockdnn.hpp"
#include "tensor/reorder_kernels.hpp"
#include "common/test_util.hpp"

using namespace blockdnn;
using ft = format_tag;

namespace {

// Checks dst holds src's logical elements at dst's offsets and zeros in all of dst's padding.
void expect_same_logical(const tensor &src, const tensor &dst, const std::string &what) {
    const tensor_desc &sd = src.desc(), &dd = dst.desc();
    std::vector<char> seen(dd.nelems_padded(), 0);
    dim_t bad = 0;
    for_each_index(sd, [&](const dim_t *idx) {
        const dim_t o = dd.offset(idx);
        seen[o] = 1;
        if (std::memcmp(&src.f32()[sd.offset(idx)], &dst.f32()[o], 4) != 0 && bad++ < 3)
            ADD_FAILURE() << what << ": element mismatch at offset " << o;
    });
    for (dim_t o = 0; o < dd.nelems_padded(); ++o)
        if (!seen[o] && dst.f32()[o] != 0.f && bad++ < 3) ADD_FAILURE() << what << ": padding not zero at " << o;
    EXPECT_EQ(bad, 0) << what;
}

// Poisons a tensor's whole memory, padding included, so unwritten padding shows up.
void poison(const tensor &t) {
    float *p = t.f32();
    for (dim_t i = 0; i < t.desc().nelems_padded(); ++i) p[i] = 12345.f;
}

struct pair_case_t {
    dims_t dims;
    ft a, b;
    std::string str() const {
        std::string s = std::string(to_string(a)) + "->" + to_string(b) + " dims";
        for (dim_t d : dims) {
            s += ' ';
            s += std::to_string(d);
        }
        return s;
    }
};

// Runs a -> b -> a at every ISA, checking both legs against the oracle.
void check_round_trip(const pair_case_t &c, unsigned seed) {
    isa_guard g;
    const tensor src(tensor_desc(c.dims, c.a));
    fill_random(src, seed);
    for (isa level : available_isas()) {
        set_max_isa(level);
        const std::string what = c.str() + " isa " + to_string(level) + " impl "
                + reorder_impl_name(src.desc(), tensor_desc(c.dims, c.b));
        const tensor mid(tensor_desc(c.dims, c.b)), back(tensor_desc(c.dims, c.a));
        poison(mid);
        poison(back);
        reorder(src, mid);
        expect_same_logical(src, mid, what + " (forward)");
        reorder(mid, back);
        expect_same_logical(mid, back, what + " (back)");
        if (!is_blocked(c.a)) {
            ASSERT_EQ(std::memcmp(src.data(), back.data(), src.desc().size_bytes()), 0) << what;
        }
    }
}

dim_t pick(std::mt19937 &gen, std::initializer_list<dim_t> special, dim_t lo, dim_t hi) {
    if (gen() % 2) return special.begin()[gen() % special.size()];
    return std::uniform_int_distribution<dim_t>(lo, hi)(gen);
}

} // namespace

// Plain <-> blocked activations: the SIMD paths' home ground. Channels around the block sizes,
// mb 1, odd spatial sizes, 1-D to 3-D.
TEST(Reorder, RandomActivationRoundTrips) {
    std::mt19937 gen(20261129);
    const ft plain[3][2] = {{ft::ncw, ft::nwc}, {ft::nchw, ft::nhwc}, {ft::ncdhw, ft::ndhwc}};
    const ft blocked[3][2] = {{ft::nCw8c, ft::nCw16c}, {ft::nChw8c, ft::nChw16c}, {ft::nCdhw8c, ft::nCdhw16c}};
    for (int k = 0; k < 300; ++k) {
        const int sp = static_cast<int>(gen() % 3); // 1-D, 2-D, 3-D
        dims_t dims = {pick(gen, {1}, 1, 3), pick(gen, {1, 3, 8, 15, 16, 17, 33}, 1, 40)};
        for (int s = 0; s <= sp; ++s) dims.push_back(pick(gen, {1, 7, 16, 17}, 1, sp == 2 ? 6 : 23));
        check_round_trip({dims, plain[sp][gen() % 2], blocked[sp][gen() % 2]}, 1000 + k);
    }
}

// Channels-first <-> channels-last (the tiled transposes, AVX2 and scalar): sizes around the
// scalar 32 x 32 tile and the AVX2 8 x 8 block (partial tiles and blocks, a single row or
// column), mb 1 to 3, 1-D to 3-D, both directions.
TEST(Reorder, RandomChannelsLastTransposes) {
    std::mt19937 gen(20261130);
    const ft first[3] = {ft::ncw, ft::nchw, ft::ncdhw}, last[3] = {ft::nwc, ft::nhwc, ft::ndhwc};
    for (int k = 0; k < 200; ++k) {
        const int sp = static_cast<int>(gen() % 3);
        dims_t dims = {pick(gen, {1}, 1, 3), pick(gen, {1, 3, 31, 32, 33, 64, 65}, 1, 70)};
        for (int s = 0; s <= sp; ++s) dims.push_back(pick(gen, {1, 7, 32, 33}, 1, sp == 2 ? 9 : 40));
        const bool to_last = gen() % 2;
        const pair_case_t c {dims, to_last ? first[sp] : last[sp], to_last ? last[sp] : first[sp]};
        {
            isa_guard g;
            for (isa level : available_isas()) {
                set_max_isa(level);
                EXPECT_EQ(reorder_impl_name(tensor_desc(c.dims, c.a), tensor_desc(c.dims, c.b)),
                        level >= isa::avx2 ? "simd:avx2:transpose" : "scalar:transpose")
                        << c.str();
            }
        }
        check_round_trip(c, 3000 + k);
    }
}

// The AVX2 transpose with streaming stores, which reorder() takes only for tensors past the
// L3: called directly with stream_stores set, on shapes whose rows (C for nchw -> nhwc, S for
// nhwc -> nchw) are multiples of 8 (the streamed case) or not (regular stores), across the
// 256 x 256 task, columns odd or a single one, against a naive loop.
TEST(Reorder, TransposeStreamingStores) {
    if (!cpu().avx2) GTEST_SKIP() << "no avx2";
    // nchw -> nhwc streams when C % 8 == 0, nhwc -> nchw when S % 8 == 0.
    const dims_t shapes[] = {{2, 64, 9, 13}, {1, 264, 3, 87}, {3, 8, 1, 1}, {1, 3, 17, 16}, {2, 520, 1, 301},
            {2, 24, 16, 17}, {1, 16, 1, 264}, {1, 300, 8, 40}};
    for (const dims_t &dims : shapes)
        for (bool to_last : {true, false}) {
            const ft a = to_last ? ft::nchw : ft::nhwc, b = to_last ? ft::nhwc : ft::nchw;
            const tensor src(tensor_desc(dims, a)), dst(tensor_desc(dims, b));
            fill_random(src, 77);
            poison(dst);
            impl::reorder_prb_t p = impl::make_reorder_prb(src.desc(), dst.desc());
            ASSERT_EQ(p.kind, impl::reorder_prb_t::kind_t::act_transpose);
            p.stream_stores = true;
            impl::reorder_transpose_avx2(p, src.f32(), dst.f32());
            const std::string what = pair_case_t {dims, a, b}.str();
            dim_t bad = 0;
            for (dim_t n = 0; n < p.N; ++n)
                for (dim_t c = 0; c < p.C; ++c)
                    for (dim_t s = 0; s < p.S; ++s) {
                        const dim_t first = (n * p.C + c) * p.S + s, last = (n * p.S + s) * p.C + c;
                        const float want = src.f32()[to_last ? first : last];
                        if (std::memcmp(&dst.f32()[to_last ? last : first], &want, 4) != 0 && bad++ < 3)
                            ADD_FAILURE() << what << ": mismatch at n " << n << " c " << c << " s " << s;
                    }
            EXPECT_EQ(bad, 0) << what;
        }
}

// Plain -> blocked weights (SIMD gathers) and back (the scalar loop), grouped and depthwise
// included; goi*w <-> Goi*{8,16}g runs the activation kernels, one image of G channels.
TEST(Reorder, RandomWeightRoundTrips) {
    std::mt19937 gen(7);
    const ft plain[3] = {ft::oiw, ft::oihw, ft::oidhw};
    const ft blocked[3][2] = {
            {ft::OIw8i8o, ft::OIw16i16o}, {ft::OIhw8i8o, ft::OIhw16i16o}, {ft::OIdhw8i8o, ft::OIdhw16i16o}};
    const ft gplain[3] = {ft::goiw, ft::goihw, ft::goidhw};
    const ft gblocked[3][2] = {
            {ft::gOIw8i8o, ft::gOIw16i16o}, {ft::gOIhw8i8o, ft::gOIhw16i16o}, {ft::gOIdhw8i8o, ft::gOIdhw16i16o}};
    const ft dwblocked[3][2] = {{ft::Goiw8g, ft::Goiw16g}, {ft::Goihw8g, ft::Goihw16g}, {ft::Goidhw8g, ft::Goidhw16g}};
    for (int k = 0; k < 240; ++k) {
        const int sp = static_cast<int>(gen() % 3);
        const int kind = k % 3; // plain, grouped, depthwise
        dims_t dims;
        if (kind == 1) dims.push_back(pick(gen, {1, 2, 3}, 1, 4));
        if (kind == 2) dims.push_back(pick(gen, {1, 3, 15, 16, 17, 33}, 1, 40));
        const dim_t o = kind == 2 ? 1 : pick(gen, {1, 3, 15, 16, 17, 33}, 1, 40);
        const dim_t i = kind == 2 ? 1 : pick(gen, {1, 3, 4, 15, 16, 17}, 1, 40);
        dims.push_back(o);
        dims.push_back(i);
        for (int s = 0; s <= sp; ++s) dims.push_back(pick(gen, {1, 3}, 1, 7));
        const ft a = kind == 0 ? plain[sp] : gplain[sp];
        const int bk = static_cast<int>(gen() % 2);
        const ft b = kind == 0 ? blocked[sp][bk] : kind == 1 ? gblocked[sp][bk] : dwblocked[sp][bk];
        const pair_case_t c {dims, a, b};
        // Back to plain: the scalar weights loop or the activation kernels, not the reference.
        const std::string back = reorder_impl_name(tensor_desc(dims, b), tensor_desc(dims, a));
        if (kind != 2) {
            EXPECT_EQ(back, "scalar:wei") << c.str();
        } else {
            EXPECT_TRUE(back.ends_with(":act")) << c.str() << " runs " << back;
        }
        check_round_trip(c, 5000 + k);
    }
}

// Weights blocked on the groups alone, to and from plain and between the two blocks, with o and
// i above 1 too (Goi*g holds any grouped weights): groups around the blocks, 1-D to 3-D kernels.
TEST(Reorder, RandomGroupBlockedWeights) {
    std::mt19937 gen(20261206);
    const ft gplain[3] = {ft::goiw, ft::goihw, ft::goidhw};
    const ft b8[3] = {ft::Goiw8g, ft::Goihw8g, ft::Goidhw8g}, b16[3] = {ft::Goiw16g, ft::Goihw16g, ft::Goidhw16g};
    for (int k = 0; k < 120; ++k) {
        const int sp = static_cast<int>(gen() % 3);
        dims_t dims = {pick(gen, {1, 7, 8, 9, 15, 16, 17, 33}, 1, 70), pick(gen, {1}, 1, 3), pick(gen, {1}, 1, 3)};
        for (int s = 0; s <= sp; ++s) dims.push_back(pick(gen, {1, 3}, 1, 5));
        const int pair = k % 3; // plain <-> 8g, plain <-> 16g, 8g <-> 16g
        const ft a = pair == 2 ? b8[sp] : gplain[sp], b = pair == 0 ? b8[sp] : b16[sp];
        const bool swap = k % 6 >= 3;
        const pair_case_t c {dims, swap ? b : a, swap ? a : b};
        // The activation rows' names at each ISA: AVX-512's kernel takes blocks of 16 only.
        isa_guard g;
        for (isa level : available_isas()) {
            set_max_isa(level);
            const int blk = pair == 0 ? 8 : 16;
            const std::string want = pair == 2               ? "scalar:reblock"
                    : level == isa::scalar                   ? "scalar:act"
                    : level == isa::avx512_core && blk == 16 ? "simd:avx512_core:act"
                                                             : "simd:avx2:act";
            EXPECT_EQ(reorder_impl_name(tensor_desc(c.dims, c.a), tensor_desc(c.dims, c.b)), want)
                    << c.str() << " isa " << to_string(level);
        }
        check_round_trip(c, 13000 + k);
    }
}

// Between the two channel blocks (runs of 8 channels): odd channel counts, mb 1, 1-D to 3-D,
// both ways; never the generic path.
TEST(Reorder, RandomReblocks) {
    std::mt19937 gen(20261206);
    const ft b8[3] = {ft::nCw8c, ft::nChw8c, ft::nCdhw8c}, b16[3] = {ft::nCw16c, ft::nChw16c, ft::nCdhw16c};
    for (int k = 0; k < 120; ++k) {
        const int sp = static_cast<int>(gen() % 3);
        dims_t dims = {pick(gen, {1}, 1, 3), pick(gen, {1, 7, 8, 9, 15, 16, 17, 24, 33}, 1, 40)};
        for (int s = 0; s <= sp; ++s) dims.push_back(pick(gen, {1, 7}, 1, sp == 2 ? 5 : 13));
        const bool up = gen() % 2;
        const pair_case_t c {dims, up ? b8[sp] : b16[sp], up ? b16[sp] : b8[sp]};
        EXPECT_EQ(reorder_impl_name(tensor_desc(c.dims, c.a), tensor_desc(c.dims, c.b)), "scalar:reblock") << c.str();
        check_round_trip(c, 7000 + k);
    }
}

// Two layouts without blocks, other than nc*/n*c: weights in TensorFlow's order, transposed
// matrices, RNN data and weights. Dims of 1 among the others, both ways; never the generic path.
TEST(Reorder, RandomPermutes) {
    std::mt19937 gen(20261207);
    const std::pair<ft, ft> pairs[] = {{ft::oihw, ft::hwio}, {ft::oiw, ft::wio}, {ft::oidhw, ft::dhwio},
            {ft::oi, ft::io}, {ft::tnc, ft::ntc}, {ft::ldigo, ft::ldgoi}};
    for (int k = 0; k < 120; ++k) {
        const auto [x, y] = pairs[k % 6];
        dims_t dims;
        for (int d = 0; d < ndims_of(x); ++d) dims.push_back(pick(gen, {1, 2, 31, 33}, 1, ndims_of(x) > 3 ? 9 : 70));
        const pair_case_t c {dims, k % 12 < 6 ? x : y, k % 12 < 6 ? y : x};
        EXPECT_EQ(reorder_impl_name(tensor_desc(c.dims, c.a), tensor_desc(c.dims, c.b)), "scalar:permute") << c.str();
        check_round_trip(c, 9000 + k);
    }
}

// Pairs whose two steps through the family's plain layout both have fast rows: weights in
// TensorFlow's order to and from the blocked layouts, and between the two blocks; o and i
// around the blocks, 1-D to 3-D, grouped, and weights blocked on the groups to and from ones
// blocked on o and i. Both ways; never the generic path.
TEST(Reorder, RandomViaPlain) {
    std::mt19937 gen(20261208);
    const std::pair<ft, ft> pairs[] = {{ft::hwio, ft::OIhw16i16o}, {ft::hwio, ft::OIhw8i8o},
            {ft::OIhw8i8o, ft::OIhw16i16o}, {ft::wio, ft::OIw16i16o}, {ft::dhwio, ft::OIdhw8i8o},
            {ft::OIdhw16i16o, ft::OIdhw8i8o}, {ft::gOIhw8i8o, ft::gOIhw16i16o}, {ft::Goihw8g, ft::gOIhw16i16o}};
    for (int k = 0; k < 96; ++k) {
        const auto [x, y] = pairs[k % 8];
        const bool grouped = x == ft::gOIhw8i8o || x == ft::Goihw8g;
        dims_t dims;
        if (grouped) dims.push_back(pick(gen, {1, 2, 9}, 1, 20));
        dims.push_back(pick(gen, {1, 8, 16, 17, 33}, 1, 40));
        dims.push_back(pick(gen, {1, 3, 8, 16, 17}, 1, 40));
        while (static_cast<int>(dims.size()) < ndims_of(x)) dims.push_back(pick(gen, {1, 3}, 1, 5));
        const pair_case_t c {dims, k % 16 < 8 ? x : y, k % 16 < 8 ? y : x};
        EXPECT_EQ(reorder_impl_name(tensor_desc(c.dims, c.a), tensor_desc(c.dims, c.b)), "via_plain") << c.str();
        check_round_trip(c, 11000 + k);
    }
}

// The other pairs, through their own loops or the generic path; they must be right too.
TEST(Reorder, GenericPairs) {
    const pair_case_t cases[] = {
            {{2, 19, 5, 3}, ft::nchw, ft::nhwc},
            {{2, 19, 5, 3}, ft::nChw8c, ft::nChw16c},
            {{2, 19, 5, 3}, ft::nhwc, ft::nChw16c},
            {{1, 5, 2, 3, 4}, ft::ncdhw, ft::ndhwc},
            {{5, 3, 7}, ft::tnc, ft::ntc},
            {{2, 2, 5, 4, 7}, ft::ldigo, ft::ldgoi},
            {{17, 5, 3, 3}, ft::hwio, ft::OIhw16i16o},
            {{1, 1, 3, 1}, ft::OIhw16i16o, ft::goiw}, // one rank, with and without groups
            {{2, 3, 17, 2}, ft::goiw, ft::OIhw8i8o},
            {{17, 5, 3, 3}, ft::OIhw8i8o, ft::OIhw16i16o},
            {{6, 9}, ft::oi, ft::io},
            {{6, 9}, ft::nc, ft::nc},
            {{2, 17, 4, 4}, ft::nChw16c, ft::nChw16c},
    };
    for (const pair_case_t &c : cases) check_round_trip(c, 99);
}

// The case the benchmark measures, once, at every ISA: ResNet-50's first-stage activations.
TEST(Reorder, ResNet50Activation) {
    check_round_trip({{4, 64, 56, 56}, ft::nchw, ft::nChw16c}, 3);
    check_round_trip({{4, 64, 56, 56}, ft::nchw, ft::nChw8c}, 4);
}

TEST(Reorder, ToBlockedAndToDense) {
    isa_guard g;
    const tensor src(tensor_desc({2, 17, 5, 5}, ft::nchw));
    fill_random(src, 1);
    for (isa level : available_isas()) {
        set_max_isa(level);
        const tensor b = to_blocked(src);
        EXPECT_EQ(b.desc().tag(), level == isa::avx512_core ? ft::nChw16c : ft::nChw8c);
        const tensor d = to_dense(b);
        EXPECT_EQ(d.desc().tag(), ft::nchw);
        EXPECT_EQ(std::memcmp(d.data(), src.data(), src.desc().size_bytes()), 0);
        EXPECT_EQ(to_blocked(b).data(), b.data()); // already blocked: shared, not copied
        EXPECT_EQ(to_dense(src).data(), src.data());
    }
    set_max_isa(isa::avx512_core);
    if (detected_isa() == isa::avx512_core) {
        EXPECT_EQ(blocked_tag_for(tensor_desc({8, 1, 1, 3, 3}, ft::goihw)), ft::Goihw16g);
        EXPECT_EQ(blocked_tag_for(tensor_desc({2, 4, 8, 3, 3}, ft::goihw)), ft::gOIhw16i16o);
        EXPECT_EQ(blocked_tag_for(tensor_desc({8, 3, 3, 3}, ft::oihw)), ft::OIhw16i16o);
    }
    EXPECT_EQ(blocked_tag_for(tensor_desc({5, 3, 7}, ft::tnc)), ft::tnc);
    EXPECT_EQ(plain_tag_for(ft::Goidhw16g), ft::goidhw);
    EXPECT_EQ(plain_tag_for(ft::nhwc), ft::nhwc);
    expect_error(status::invalid_arguments, {"plain_tag_for", "format tag 777", "not a format_tag value"},
            [] { plain_tag_for(static_cast<format_tag>(777)); });
}

TEST(Reorder, BadPairsAreErrorsAndLeaveDstAlone) {
    const tensor src(tensor_desc({2, 17, 5, 5}, ft::nchw));
    fill_random(src, 2);
    auto sentinel = [](const tensor &t) {
        poison(t);
        return t;
    };
    auto untouched = [](const tensor &t) {
        for (dim_t i = 0; i < t.desc().nelems_padded(); ++i)
            if (t.f32()[i] != 12345.f) return false;
        return true;
    };
    const tensor wrong_c = sentinel(tensor(tensor_desc({2, 16, 5, 5}, ft::nChw16c)));
    expect_error(
            status::invalid_arguments, {"dims", "nchw:2x17x5x5", "nChw16c:2x16x5x5"}, [&] { reorder(src, wrong_c); });
    EXPECT_TRUE(untouched(wrong_c));
    const tensor weights = sentinel(tensor(tensor_desc({2, 17, 5, 5}, ft::oihw)));
    expect_error(status::invalid_arguments, {"nchw", "oihw", "different kinds"}, [&] { reorder(src, weights); });
    EXPECT_TRUE(untouched(weights));
    expect_error(status::invalid_arguments, {"dst tensor has no memory"}, [&] { reorder(src, tensor()); });
    expect_error(status::invalid_arguments, {"src tensor has no memory"}, [&] { reorder(tensor(), weights); });
    expect_error(status::invalid_arguments, {"nCdhw16c needs 5 dims"}, [&] { reorder(src, ft::nCdhw16c); });
    expect_error(status::invalid_arguments, {"reorder: dst layout is any, which this op does not take"},
            [&] { reorder(src, ft::any); });
    expect_error(status::invalid_arguments, {"reorder: dst layout is undef"}, [&] { reorder(src, ft::undef); });
    expect_error(status::invalid_arguments, {"reorder: dst layout 9999 is not a format_tag value"},
            [&] { reorder(src, static_cast<ft>(9999)); });
    expect_error(status::invalid_arguments, {"to_blocked"}, [] { to_blocked(tensor()); });
    expect_error(status::invalid_arguments, {"src is empty"}, [] { reorder_impl_name(tensor_desc(), tensor_desc()); });
    // Overlapping memory (in place, or shifted) is refused before anything is written.
    const std::vector<float> before(src.f32(), src.f32() + src.desc().nelems_padded());
    const tensor_desc nhwc({2, 17, 5, 5}, ft::nhwc);
    expect_error(status::invalid_arguments, {"reorder: dst", "overlaps src"},
            [&] { reorder(src, tensor(nhwc, src.f32())); });
    expect_error(status::invalid_arguments, {"reorder: dst", "overlaps src"}, [&] {
        reorder(tensor(tensor_desc({2, 17, 5, 4}, ft::nchw), src.f32()),
                tensor(tensor_desc({2, 17, 5, 4}, ft::nhwc), src.f32() + 8));
    });
    expect_error(status::invalid_arguments, {"overlaps"}, [&] { reorder(src, src); });
    EXPECT_EQ(std::vector<float>(src.f32(), src.f32() + src.desc().nelems_padded()), before);
}
