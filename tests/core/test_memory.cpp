// SPDX-License-Identifier: Apache-2.0
// alloc_memory / free_memory (src/core/memory.hpp): alignment, huge-page placement of large
// buffers, failures as null, and the tensor, aligned_vector and per-thread scratch
// (thread_scratch_t) storage built on them. The environment switch BLOCKDNN_HUGE_PAGES is
// tested in test_jit_env.cpp (read once per process).
#include <cstdint>
#include <cstring>
#include <limits>
#include <thread>

#include <gtest/gtest.h>

#include "blockdnn/blockdnn.hpp"
#include "core/aligned_vector.hpp"
#include "core/memory.hpp"
#include "core/thread_scratch.hpp"

using namespace blockdnn;
using namespace blockdnn::impl;

namespace {

std::uintptr_t addr(const void *p) { return reinterpret_cast<std::uintptr_t>(p); }

} // namespace

TEST(Memory, SmallBuffersAre64ByteAlignedAndWritable) {
    for (std::size_t n :
            {std::size_t {0}, std::size_t {1}, std::size_t {63}, std::size_t {4096}, huge_page_bytes - 1}) {
        void *p = alloc_memory(n);
        ASSERT_NE(p, nullptr) << n;
        EXPECT_EQ(addr(p) % 64, 0u) << n;
        std::memset(p, 0x5a, n ? n : 1);
        EXPECT_EQ(static_cast<unsigned char *>(p)[n ? n - 1 : 0], 0x5a) << n;
        free_memory(p, n);
    }
    free_memory(nullptr, 100); // allowed
}

TEST(Memory, LargeBuffersStartALinePastAHugePage) {
    if (!huge_pages_enabled()) GTEST_SKIP() << "BLOCKDNN_HUGE_PAGES=0 in this environment";
    // Sizes whose end the offset pushes past their huge pages (into a small page of their own:
    // one huge page, two less 63 bytes), that fill them to the byte (two less the offset), and
    // others above one huge page.
    for (std::size_t n : {huge_page_bytes, 2 * huge_page_bytes - 63, 2 * huge_page_bytes - huge_buffer_offset,
                 huge_page_bytes + 1, 5 * huge_page_bytes / 2 + 12}) {
        auto *p = static_cast<unsigned char *>(alloc_memory(n));
        ASSERT_NE(p, nullptr) << n;
        EXPECT_EQ(addr(p) % huge_page_bytes, huge_buffer_offset) << n;
        p[0] = 1;
        p[n - 1] = 2;
        EXPECT_EQ(p[0] + p[n - 1], 3) << n;
        free_memory(p, n);
    }
}

TEST(Memory, SizesNoMappingCanHoldGiveNull) {
    if (!huge_pages_enabled()) GTEST_SKIP() << "the heap path's failure is the C library's";
    EXPECT_EQ(alloc_memory(std::numeric_limits<std::size_t>::max()), nullptr);
    EXPECT_EQ(alloc_memory(std::numeric_limits<std::size_t>::max() - huge_page_bytes), nullptr);
    EXPECT_EQ(alloc_memory(std::size_t {1} << 60), nullptr);
}

TEST(Memory, TensorsAndAlignedVectorsUseIt) {
    const tensor t(tensor_desc({3 * static_cast<dim_t>(huge_page_bytes) / 4 / 2}, format_tag::x)); // 1.5 huge pages
    const dim_t n = t.desc().nelems();
    EXPECT_EQ(t.f32()[0], 0.f);
    EXPECT_EQ(t.f32()[n - 1], 0.f) << "tensors start zeroed";
    if (huge_pages_enabled()) EXPECT_EQ(addr(t.f32()) % huge_page_bytes, huge_buffer_offset);
    else EXPECT_EQ(addr(t.f32()) % 64, 0u);

    aligned_vector<float> v(huge_page_bytes / 4 + 3, 2.f);
    if (huge_pages_enabled()) EXPECT_EQ(addr(v.data()) % huge_page_bytes, huge_buffer_offset);
    else EXPECT_EQ(addr(v.data()) % 64, 0u);
    EXPECT_EQ(v.back(), 2.f);
    v.resize(10);
    v.shrink_to_fit(); // frees the large buffer with the size it was allocated with
    EXPECT_EQ(addr(v.data()) % 64, 0u);
    EXPECT_EQ(v[9], 2.f);
}

namespace {
struct scratch_test_tag;
struct other_scratch_tag;
using scratch_t = thread_scratch_t<scratch_test_tag, 2>;
} // namespace

// A thread's scratch outlives its lease, grows on demand, and a lease taken inside another of
// the same tag (an op run while its thread helps in a wait) gets buffers of its own, leaving the
// outer one's contents alone; another tag and another thread have their own.
TEST(ThreadScratch, KeptBetweenLeasesNestedLeasesGetTheirOwn) {
    float *kept0 = nullptr;
    {
        scratch_t outer;
        EXPECT_FALSE(outer.nested());
        kept0 = outer.get(0, 1000);
        EXPECT_EQ(addr(kept0) % 64, 0u);
        kept0[999] = 7.f;
        EXPECT_NE(outer.get(1, 10), kept0);
        {
            scratch_t inner;
            EXPECT_TRUE(inner.nested());
            float *own = inner.get(0, 1000);
            EXPECT_NE(own, kept0);
            own[999] = 1.f;
            thread_scratch_t<other_scratch_tag, 1> other;
            EXPECT_FALSE(other.nested());
            EXPECT_NE(other.get(0, 1000), kept0);
        }
        EXPECT_EQ(kept0[999], 7.f);
        EXPECT_EQ(outer.get(0, 500), kept0); // no smaller request moves it
    }
    {
        scratch_t again;
        EXPECT_FALSE(again.nested()); // the nested lease did not release the outer one's hold
        EXPECT_EQ(again.get(0, 1000), kept0);
        EXPECT_EQ(kept0[999], 7.f);
        float *grown = again.get(0, std::size_t {1} << 20); // grows: its last float is writable
        grown[(std::size_t {1} << 20) - 1] = 1.f;
        // Another thread's buffer is its own: this one, still held, stays as written.
        std::thread([&] {
            scratch_t there;
            EXPECT_FALSE(there.nested());
            float *theirs = there.get(0, std::size_t {1} << 20);
            EXPECT_NE(theirs, grown);
            theirs[(std::size_t {1} << 20) - 1] = 2.f;
        }).join();
        EXPECT_EQ(grown[(std::size_t {1} << 20) - 1], 1.f);
    }
}
