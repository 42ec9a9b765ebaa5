// SPDX-License-Identifier: Apache-2.0
// TEST_P over (isa x descriptor): one case per ISA level and descriptor, named
// "<isa>_<descriptor>" (avx2_mb2ic13ih7oc29oh7kh3ph1) so that a failure says which kernel ran on
// which problem. gtest names allow only [A-Za-z0-9_]; levels this CPU lacks are skipped, so the
// list of cases is the same on every machine.
#pragma once

#include <initializer_list>
#include <ostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "blockdnn/blockdnn.hpp"

namespace bdtest {

/// s with every character outside [A-Za-z0-9_] replaced by '_'.
inline std::string gtest_name(std::string s) {
    for (char &ch : s) {
        const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
        if (!ok) ch = '_';
    }
    return s;
}

/// "2x17x3x5": dims as a name.
inline std::string dims_name(const blockdnn::dims_t &dims) {
    std::string s;
    for (blockdnn::dim_t d : dims) s += (s.empty() ? "" : "x") + std::to_string(d);
    return s;
}

/// One case: an ISA level, a descriptor and the case's gtest name.
template <class T>
struct isa_case_t {
    blockdnn::isa level = blockdnn::isa::scalar;
    T desc {};
    std::string name;
};

/// How gtest prints a case (--gtest_list_tests, failures): its name.
template <class T>
void PrintTo(const isa_case_t<T> &c, std::ostream *os) {
    *os << c.name;
}

/// Every (level, desc) pair, levels outermost; name(desc) spells the descriptor.
template <class T, class Name>
std::vector<isa_case_t<T>> isa_cases(
        std::initializer_list<blockdnn::isa> levels, const std::vector<T> &descs, Name name) {
    std::vector<isa_case_t<T>> v;
    for (blockdnn::isa level : levels)
        for (const T &d : descs) v.push_back({level, d, gtest_name(std::string(to_string(level)) + "_" + name(d))});
    return v;
}

inline blockdnn::isa level_of(blockdnn::isa level) { return level; }
template <class T>
blockdnn::isa level_of(const isa_case_t<T> &c) {
    return c.level;
}

/// The name generator of INSTANTIATE_TEST_SUITE_P for isa and isa_case_t parameters.
struct case_name {
    std::string operator()(const ::testing::TestParamInfo<blockdnn::isa> &i) const {
        return blockdnn::to_string(i.param);
    }
    template <class T>
    std::string operator()(const ::testing::TestParamInfo<isa_case_t<T>> &i) const {
        return i.param.name;
    }
};

/// A fixture over P (an isa or an isa_case_t) that skips the levels this CPU lacks.
template <class P>
class isa_test : public ::testing::TestWithParam<P> {
protected:
    void SetUp() override {
        const blockdnn::isa level = level_of(this->GetParam());
        if (blockdnn::detected_isa() < level) GTEST_SKIP() << to_string(level) << " not available on this CPU";
    }
    blockdnn::isa level() const { return level_of(this->GetParam()); }
};

/// An isa_test that also caps dispatch at the case's level for the test's body (the reference
/// at isa::scalar), and lifts the cap after.
template <class P>
class capped_isa_test : public isa_test<P> {
protected:
    void SetUp() override {
        isa_test<P>::SetUp();
        if (!::testing::Test::IsSkipped()) blockdnn::set_max_isa(this->level());
    }
    void TearDown() override { blockdnn::reset_max_isa(); }
};

} // namespace bdtest
