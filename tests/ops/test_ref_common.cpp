// SPDX-License-Identifier: Apache-2.0
// What every reference op relies on: per-dim offset tables equal tensor_desc::offset for every
// tag, zeroing of blocked padding, the post-op chain (building, checks, reference semantics)
// and the shared argument checks.
#include <cmath>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <sys/resource.h>

#include <gtest/gtest.h>

#include "core/lazy.hpp"
#include "core/offset_table.hpp"
#include "tensor/op_check.hpp"
#include "core/post_ops_ref.hpp"
#include "core/utils.hpp"
#include "common/ref_util.hpp"

using namespace blockdnn;
using namespace ref_test;

// offset(idx) == sum_d dim_offsets(desc, d)[idx[d]] for every tag, on seeded random dims and
// indices: the identity the reference kernels' tables rest on.
TEST(OffsetTables, SumOfPerDimTermsEqualsOffsetForEveryTag) {
    const unsigned seed = 99;
    std::mt19937 gen(seed);
    for (int t = 1; t <= static_cast<int>(format_tag::ldgo); ++t) {
        const format_tag tag = static_cast<format_tag>(t);
        for (int rep = 0; rep < 3; ++rep) {
            dims_t dims;
            for (int d = 0; d < ndims_of(tag); ++d) dims.push_back(1 + static_cast<dim_t>(gen() % 19));
            const tensor_desc desc(dims, tag);
            std::vector<std::vector<dim_t>> tabs;
            for (int d = 0; d < desc.ndims(); ++d) tabs.push_back(blockdnn::impl::dim_offsets(desc, d));
            for (int k = 0; k < 50; ++k) {
                dim_t idx[max_ndims] = {}, sum = 0;
                for (int d = 0; d < desc.ndims(); ++d) {
                    idx[d] = static_cast<dim_t>(gen() % dims[d]);
                    sum += tabs[d][idx[d]];
                }
                ASSERT_EQ(sum, desc.offset(idx)) << desc.str() << " seed " << seed;
            }
        }
    }
}

// A tensor with fewer spatial dims gets one-entry {0} tables for the dims it lacks.
TEST(OffsetTables, SpatialNormalisation) {
    const tensor_desc d({2, 3, 5}, format_tag::nwc);
    const blockdnn::impl::spatial_offsets_t s(d, 2);
    EXPECT_EQ(s.lead.size(), 2u);
    EXPECT_EQ(s.d, std::vector<dim_t> {0});
    EXPECT_EQ(s.h, std::vector<dim_t> {0});
    EXPECT_EQ(s.w, (std::vector<dim_t> {0, 3, 6, 9, 12})); // nwc: w stride c = 3
    const blockdnn::impl::spatial_offsets_t nc(tensor_desc({2, 3}, format_tag::nc), 2);
    EXPECT_EQ(nc.w, std::vector<dim_t> {0});
}

TEST(OffsetTables, LazyValueIsMadeOnceAcrossThreads) {
    int made = 0;
    const impl::lazy_t<std::vector<int>> v([&] {
        ++made; // call_once: no other thread runs this meanwhile
        return std::vector<int> {1, 2, 3};
    });
    EXPECT_EQ(made, 0);
    std::vector<std::thread> threads;
    for (int i = 0; i < 4; ++i) threads.emplace_back([&] { EXPECT_EQ(v.get().size(), 3u); });
    for (std::thread &t : threads) t.join();
    EXPECT_EQ(made, 1);
}

// The references (and the fast pooling paths) build their tables at the first execute():
// creating an op whose tensors are never allocated costs no memory. Before, a 1-D conv with
// iw = 2^27 built 3 GB of tables at creation and an inner product with ic = oc = 2^27 4 GB.
TEST(OffsetTables, CreatingAReferenceOpAllocatesNoTables) {
    auto rss_mb = [] { // resident now (the ops keep what they made while they live)
        std::ifstream f("/proc/self/status");
        for (std::string line; std::getline(f, line);)
            if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6)) / 1024; // kB
        return 0L;
    };
    isa_guard guard;
    set_max_isa(isa::scalar);
    const long before = rss_mb();
    conv_desc c;
    c.ndims = 3;
    c.ic = c.oc = 1;
    c.iw = dim_t(1) << 27;
    c.kw = 1;
    c.infer_dst_dims();
    const conv_fwd conv(c, format_tag::ncw, format_tag::oiw, format_tag::ncw);
    EXPECT_STREQ(conv.impl_name(), "ref");
    inner_product_desc d;
    d.ic = d.oc = dim_t(1) << 27;
    const inner_product_fwd ip(d, format_tag::nc, format_tag::oi, format_tag::nc);
    EXPECT_STREQ(ip.impl_name(), "ref");
    // Pooling: the reference's tables (one channel, plain), and the per-output window ranges
    // of the fast paths, the one between reorders too (whose buffers come at execute).
    pool_desc pd;
    pd.ndims = 3;
    pd.ic = 1;
    pd.iw = pd.ow = dim_t(1) << 27;
    const pool_fwd pool_ref(pd, format_tag::ncw, format_tag::ncw), pool_fast(pd, format_tag::nwc, format_tag::nwc),
            pool_reordered(pd, format_tag::nCw8c, format_tag::ncw);
    EXPECT_STREQ(pool_ref.impl_name(), "ref");
    EXPECT_STREQ(pool_fast.impl_name(), "simd:scalar:max_nxc");
    EXPECT_STREQ(pool_reordered.impl_name(), "simd:scalar:reordered");
    EXPECT_LT(rss_mb() - before, 256) << "MiB of resident memory grew while creating the ops";
}

TEST(OffsetTables, OomAsErrorTurnsBadAllocIntoOutOfMemory) {
    expect_error(status::out_of_memory, {"conv_fwd: out of memory running"},
            [] { impl::oom_as_error("conv_fwd", "running", []() -> int { throw std::bad_alloc(); }); });
    EXPECT_EQ(impl::oom_as_error("conv_fwd", "running", [] { return 7; }), 7);
}

// The sanitizers reserve address space beyond any limit this test could set: it exists only
// in the other builds.
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
// An implementation that runs out of memory (here the reference conv's tables, under an
// address-space limit) surfaces as blockdnn::error(out_of_memory), not std::bad_alloc.
TEST(OffsetTables, OutOfMemoryIsABlockdnnError) {
    auto vm_size_bytes = [] {
        std::ifstream f("/proc/self/status");
        for (std::string line; std::getline(f, line);)
            if (line.rfind("VmSize:", 0) == 0) return std::stol(line.substr(7)) * 1024; // kB
        return 0L;
    };
    isa_guard guard;
    set_max_isa(isa::scalar);
    conv_desc c;
    c.ndims = 3;
    c.ic = c.oc = 1;
    c.iw = dim_t(1) << 24; // tables of 128 MiB each for src and dst
    c.kw = 1;
    c.infer_dst_dims();
    const conv_fwd conv(c, format_tag::ncw, format_tag::oiw, format_tag::ncw);
    const tensor src(conv.src_desc()), wei(conv.wei_desc()), dst(conv.dst_desc());
    conv_desc small = c;
    small.iw = 64;
    small.infer_dst_dims();
    const conv_fwd warm(small, format_tag::ncw, format_tag::oiw, format_tag::ncw);
    warm.execute(
            tensor(warm.src_desc()), tensor(warm.wei_desc()), tensor(), tensor(warm.dst_desc())); // pool threads up
    rlimit old {};
    ASSERT_EQ(getrlimit(RLIMIT_AS, &old), 0);
    rlimit lim = old;
    lim.rlim_cur = static_cast<rlim_t>(vm_size_bytes() + (64l << 20));
    ASSERT_EQ(setrlimit(RLIMIT_AS, &lim), 0);
    status got = status::success;
    std::string what;
    bool bad_alloc_escaped = false;
    try {
        conv.execute(src, wei, tensor(), dst);
    } catch (const error &e) {
        got = e.code();
        what = e.what();
    } catch (const std::bad_alloc &) {
        bad_alloc_escaped = true;
    }
    setrlimit(RLIMIT_AS, &old);
    EXPECT_FALSE(bad_alloc_escaped);
    EXPECT_EQ(got, status::out_of_memory) << what;
    EXPECT_NE(what.find("conv_fwd: out of memory running"), std::string::npos) << what;
}
#endif

// Blocked activations (one inner block: runs split over the threads, mb 1 and many pixels
// included), weights with two blocks or a groups block, and layouts without padding.
TEST(ZeroPadding, WritesExactlyThePadding) {
    const std::pair<format_tag, dims_t> cases[] = {{format_tag::nChw16c, {3, 5, 2, 3}},
            {format_tag::nChw16c, {1, 17, 45, 31}}, {format_tag::nChw8c, {2, 3, 40, 40}},
            {format_tag::nCw16c, {2, 33, 7}}, {format_tag::nCdhw8c, {3, 5, 2, 3, 2}},
            {format_tag::nCdhw16c, {1, 20, 9, 8, 7}}, {format_tag::OIhw16i16o, {3, 5, 2, 3}},
            {format_tag::OIhw8i8o, {17, 9, 3, 3}}, {format_tag::Goihw8g, {3, 5, 2, 3, 2}},
            {format_tag::Goihw16g, {33, 1, 1, 3, 3}}, {format_tag::nchw, {3, 5, 2, 3}},
            {format_tag::nChw16c, {2, 32, 5, 5}}};
    for (const auto &[tag, dims] : cases) {
        const tensor t(tensor_desc(dims, tag));
        poison(t);
        blockdnn::impl::zero_padding(t.desc(), t.f32());
        EXPECT_TRUE(padding_is_zero(t)) << t.desc().str();
        for (float v : logical(t)) ASSERT_EQ(v, 777.f) << t.desc().str();
    }
}

TEST(PostOps, BuildAndDescribe) {
    post_ops po;
    EXPECT_TRUE(po.empty());
    EXPECT_EQ(po.str(), "");
    po.append_sum(0.5f).append_eltwise(eltwise_alg::clip, 0.f, 6.f);
    EXPECT_EQ(po.len(), 2);
    EXPECT_TRUE(po.has_sum());
    EXPECT_EQ(po[0].what, post_op::kind::sum);
    EXPECT_EQ(po[1].alg, eltwise_alg::clip);
    EXPECT_EQ(po.str(), "sum:0.5+clip:0:6");
    EXPECT_EQ(po, post_ops().append_sum(0.5f).append_eltwise(eltwise_alg::clip, 0.f, 6.f));
    EXPECT_FALSE(po == post_ops().append_sum(0.5f));
}

TEST(PostOps, ReferenceAppliesTheChainInOrder) {
    using blockdnn::impl::apply_post_ops_ref;
    // relu then sum: relu(-2) + 3 * 1 = 3; sum then relu: relu(-2 + 3) = 1.
    EXPECT_EQ(apply_post_ops_ref(post_ops().append_eltwise(eltwise_alg::relu).append_sum(3.f), -2.f, 1.f), 3.f);
    EXPECT_EQ(apply_post_ops_ref(post_ops().append_sum(3.f).append_eltwise(eltwise_alg::relu), -2.f, 1.f), 1.f);
    EXPECT_EQ(apply_post_ops_ref(post_ops(), -2.f, 1.f), -2.f);
    EXPECT_EQ(apply_post_ops_ref(post_ops().append_eltwise(eltwise_alg::linear, 2.f, 1.f), 3.f, 0.f), 7.f);
}

TEST(PostOps, BadEntriesAreRejected) {
    const status bad = status::invalid_arguments;
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    expect_error(bad, {"post_ops", "second sum"}, [] { post_ops().append_sum().append_sum(); });
    expect_error(bad, {"sum scale", "finite"}, [&] { post_ops().append_sum(nan); });
    expect_error(bad, {"alpha", "finite"}, [&] { post_ops().append_eltwise(eltwise_alg::elu, inf); });
    expect_error(bad, {"beta", "finite"}, [&] { post_ops().append_eltwise(eltwise_alg::linear, 1.f, nan); });
    // A cast integer: the JIT conv used to skip such a post-op while the reference wrote 0.
    expect_error(bad, {"post_ops", "alg = 77", "not an eltwise_alg"},
            [] { post_ops().append_eltwise(static_cast<eltwise_alg>(77)); });
    expect_error(bad, {"eltwise_ref", "alg = 77", "not an eltwise_alg"},
            [] { eltwise_ref(static_cast<eltwise_alg>(77), 1.f); });
    expect_error(
            bad, {"clip", "alpha = 2", "beta = 1"}, [] { post_ops().append_eltwise(eltwise_alg::clip, 2.f, 1.f); });
}

TEST(OpCheck, ArgumentMismatchesNameRoleDimAndField) {
    using blockdnn::impl::check_arg;
    const tensor_desc want({2, 3, 4, 5}, format_tag::nchw);
    const std::vector<std::string> fields = {"mb", "ic", "ih", "iw"};
    const status bad = status::invalid_arguments;
    expect_error(bad, {"op: src tensor has no memory"}, [&] { check_arg("op", "src", tensor(), want, fields); });
    expect_error(bad, {"op: src dims[2] (h) = 7, expected ih = 4"}, [&] {
        check_arg("op", "src", tensor(tensor_desc({2, 3, 7, 5}, format_tag::nchw)), want, fields);
    });
    expect_error(bad, {"op: src layout nhwc differs from the nchw"}, [&] {
        check_arg("op", "src", tensor(tensor_desc({2, 3, 4, 5}, format_tag::nhwc)), want, fields);
    });
    expect_error(bad, {"op: src has 3 dims"}, [&] {
        check_arg("op", "src", tensor(tensor_desc({2, 3, 4}, format_tag::ncw)), want, fields);
    });
    check_arg("op", "src", tensor(want), want, fields);
    // Dims without a name (binary, softmax) are named by their index.
    expect_error(bad, {"op: src dims[2] (h) = 7, expected dims[2] = 4"}, [&] {
        check_arg("op", "src", tensor(tensor_desc({2, 3, 7, 5}, format_tag::nchw)), want);
    });
    const std::vector<std::string> two = {"mb", "ic"};
    expect_error(bad, {"op: src dims[3] (w) = 6, expected dims[3] = 5"}, [&] {
        check_arg("op", "src", tensor(tensor_desc({2, 3, 4, 6}, format_tag::nchw)), want, two);
    });
}

// The ops name their arguments' dims from tables per rank: inner product without spatial
// dims and 1-D, pool 1-D and 3-D, conv's grouped weights and 3-D src.
TEST(OpCheck, DimNamesFollowTheOpsRank) {
    const status bad = status::invalid_arguments;
    const inner_product_fwd ip_nc(parse_ip_desc("mb2ic8oc5"), format_tag::nc, format_tag::oi);
    expect_error(bad, {"inner_product_fwd: src dims[1]", "expected ic = 8"}, [&] {
        ip_nc.execute(tensor(tensor_desc({2, 9}, format_tag::nc)), tensor(ip_nc.wei_desc()), tensor(ip_nc.dst_desc()));
    });
    const inner_product_fwd ip_1d(parse_ip_desc("mb2ic8iw7oc5"), format_tag::ncw, format_tag::oiw);
    expect_error(bad, {"inner_product_fwd: wei dims[2]", "expected iw = 7"}, [&] {
        ip_1d.execute(
                tensor(ip_1d.src_desc()), tensor(tensor_desc({5, 8, 6}, format_tag::oiw)), tensor(ip_1d.dst_desc()));
    });
    const pool_fwd pool_1d(parse_pool_desc("mb2ic3iw8ow4kw2sw2"), format_tag::ncw, format_tag::ncw);
    expect_error(bad, {"pool_fwd: src dims[2]", "expected iw = 8"}, [&] {
        pool_1d.execute(tensor(tensor_desc({2, 3, 9}, format_tag::ncw)), tensor(pool_1d.dst_desc()));
    });
    const pool_fwd pool_3d(
            parse_pool_desc("mb2ic3id4ih4iw4od2oh2ow2kd2kh2kw2sd2sh2sw2"), format_tag::ncdhw, format_tag::ncdhw);
    expect_error(bad, {"pool_fwd: dst dims[2]", "expected od = 2"}, [&] {
        pool_3d.execute(tensor(pool_3d.src_desc()), tensor(tensor_desc({2, 3, 3, 2, 2}, format_tag::ncdhw)));
    });
    const conv_fwd grouped(
            parse_conv_desc("g2mb1ic4ih5oc4oh5kh3ph1"), format_tag::nchw, format_tag::goihw, format_tag::nchw);
    expect_error(bad, {"conv_fwd: wei dims[1]", "expected oc/g = 2"}, [&] {
        grouped.execute({tensor(grouped.src_desc()), tensor(tensor_desc({2, 3, 2, 3, 3}, format_tag::goihw)), {},
                tensor(grouped.dst_desc())});
    });
    const conv_fwd conv_3d(parse_conv_desc("mb1ic4id3ih3iw3oc4od3oh3ow3kd1kh1kw1"), format_tag::ncdhw,
            format_tag::oidhw, format_tag::ncdhw);
    expect_error(bad, {"conv_fwd: src dims[2]", "expected id = 3"}, [&] {
        conv_3d.execute({tensor(tensor_desc({1, 4, 2, 3, 3}, format_tag::ncdhw)), tensor(conv_3d.wei_desc()), {},
                tensor(conv_3d.dst_desc())});
    });
}

TEST(OpCheck, Overlap) {
    std::vector<float> mem(64);
    const tensor a(tensor_desc({16}, format_tag::x), mem.data()), b(tensor_desc({16}, format_tag::x), mem.data() + 8),
            c(tensor_desc({16}, format_tag::x), mem.data() + 16);
    EXPECT_TRUE(blockdnn::impl::overlaps(a, b));
    EXPECT_FALSE(blockdnn::impl::overlaps(a, c));
    EXPECT_FALSE(blockdnn::impl::overlaps(a, tensor()));
    EXPECT_TRUE(blockdnn::impl::same_tensor(a, a));
    EXPECT_FALSE(blockdnn::impl::same_tensor(a, b));
    expect_error(status::invalid_arguments, {"op: dst", "overlaps src"},
            [&] { blockdnn::impl::check_no_overlap("op", "dst", a, "src", b); });
}
