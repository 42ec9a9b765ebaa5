// SPDX-License-Identifier: Apache-2.0
// lru_map_t (src/core/lru_map.hpp): the order of eviction, find() refreshing an entry, capacity
// 0, shrinking the capacity, clear() and erase(). The caches built on it have their own tests
// (KernelCache in test_jit.cpp, ConvConfMemo in test_conv_conf_memo.cpp).
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/lru_map.hpp"

using namespace blockdnn::impl;

namespace {

using map_t = lru_map_t<std::string, int>;

// The keys, most recently used first.
std::vector<std::string> keys(const map_t &m) {
    std::vector<std::string> v;
    for (const auto &[key, value] : m) v.push_back(key);
    return v;
}

} // namespace

TEST(LruMap, EvictsTheLeastRecentlyInsertedFirst) {
    map_t m(3);
    EXPECT_EQ(m.insert("a", 1), 0u);
    EXPECT_EQ(m.insert("b", 2), 0u);
    EXPECT_EQ(m.insert("c", 3), 0u);
    EXPECT_EQ(keys(m), (std::vector<std::string> {"c", "b", "a"}));
    EXPECT_EQ(m.insert("d", 4), 1u);
    EXPECT_EQ(keys(m), (std::vector<std::string> {"d", "c", "b"}));
    EXPECT_EQ(m.find("a"), nullptr);
    EXPECT_EQ(m.insert("e", 5), 1u);
    EXPECT_FALSE(m.contains("b"));
    EXPECT_EQ(m.size(), 3u);
}

TEST(LruMap, FindRefreshesAndContainsDoesNot) {
    map_t m(3);
    m.insert("a", 1);
    m.insert("b", 2);
    m.insert("c", 3);
    ASSERT_NE(m.find("a"), nullptr);
    EXPECT_EQ(*m.find("a"), 1);
    EXPECT_TRUE(m.contains("b"));
    EXPECT_EQ(keys(m), (std::vector<std::string> {"a", "c", "b"}));
    // "b" is now the least recently used, though inserted after "a".
    EXPECT_EQ(m.insert("d", 4), 1u);
    EXPECT_EQ(keys(m), (std::vector<std::string> {"d", "a", "c"}));
    // The value found is the entry's own: writing it changes the entry.
    *m.find("c") = 30;
    EXPECT_EQ(*m.find("c"), 30);
}

TEST(LruMap, InsertingAHeldKeyReplacesItsValueAndRefreshes) {
    map_t m(2);
    m.insert("a", 1);
    m.insert("b", 2);
    EXPECT_EQ(m.insert("a", 10), 0u);
    EXPECT_EQ(m.size(), 2u);
    EXPECT_EQ(keys(m), (std::vector<std::string> {"a", "b"}));
    EXPECT_EQ(*m.find("a"), 10);
}

TEST(LruMap, CapacityZeroKeepsNothing) {
    map_t m(0);
    EXPECT_EQ(m.insert("a", 1), 1u); // the new entry itself
    EXPECT_EQ(m.size(), 0u);
    EXPECT_EQ(m.find("a"), nullptr);
    EXPECT_FALSE(m.contains("a"));
}

TEST(LruMap, ShrinkingTheCapacityEvictsTheLeastRecentlyUsed) {
    map_t m(4);
    for (const char *k : {"a", "b", "c", "d"}) m.insert(k, 0);
    m.find("a");
    EXPECT_EQ(m.set_capacity(2), 2u);
    EXPECT_EQ(m.capacity(), 2u);
    EXPECT_EQ(keys(m), (std::vector<std::string> {"a", "d"}));
    EXPECT_EQ(m.set_capacity(8), 0u); // growing evicts nothing
    EXPECT_EQ(m.size(), 2u);
    EXPECT_EQ(m.set_capacity(0), 2u);
    EXPECT_EQ(m.size(), 0u);
    EXPECT_EQ(m.find("a"), nullptr);
}

TEST(LruMap, ClearAndEraseForgetEntries) {
    map_t m(3);
    m.insert("a", 1);
    m.insert("b", 2);
    m.insert("c", 3);
    EXPECT_TRUE(m.erase("b"));
    EXPECT_FALSE(m.erase("b"));
    EXPECT_EQ(keys(m), (std::vector<std::string> {"c", "a"}));
    // Erasing made room: two more fit before "a" goes.
    EXPECT_EQ(m.insert("d", 4), 0u);
    EXPECT_EQ(m.insert("e", 5), 1u);
    EXPECT_FALSE(m.contains("a"));
    m.clear();
    EXPECT_EQ(m.size(), 0u);
    EXPECT_EQ(m.find("c"), nullptr);
    // A cleared map is used as a new one of the same capacity.
    for (const char *k : {"x", "y", "z", "w"}) m.insert(k, 0);
    EXPECT_EQ(keys(m), (std::vector<std::string> {"w", "z", "y"}));
}
