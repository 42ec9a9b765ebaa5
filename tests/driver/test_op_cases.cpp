// SPDX-License-Identifier: Apache-2.0
// Every op through the one per-op interface, op_case_t (testing/op_case.hpp), as blockdnn-bench
// runs it: one small benchdnn descriptor per op, created on each ISA the CPU has, executed, and
// checked against the reference within the op's tolerance (testing/tolerances.hpp). A failure
// names op, ISA and descriptor: OpCases.MatchesReference/conv_avx2_mb2ic13ih7oc29oh7kh3ph1.
#include <cctype>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "blockdnn/blockdnn.hpp"
#include "testing/batch.hpp"
#include "driver/op_case.hpp"
#include "driver/spec.hpp"
#include "testing/op_case.hpp"

namespace {

using blockdnn::isa;

// The driver option, the options in force and the descriptor (benchdnn syntax).
struct op_problem_t {
    std::vector<std::string> args;
};

const std::vector<op_problem_t> &problems() {
    static const std::vector<op_problem_t> p = {
            {{"--conv", "--attr-post-ops=relu", "mb2ic13ih7oc29oh7kh3ph1"}},
            {{"--bnorm", "--dir=FWD_D", "--flags=CH", "mb2ic19ih5"}},
            {{"--bnorm", "--dir=BWD_DW", "mb2ic19ih5"}},
            {{"--rnn", "--alg=VANILLA_LSTM", "l1t3mb2sic8"}},
            {{"--pool", "--alg=avg_p", "mb2ic16ih5kh3ph1"}},
            {{"--eltwise", "--alg=tanh", "2x20x3x3"}},
            {{"--softmax", "--axis=1", "7x1000"}},
            {{"--softmax", "--tag=nchw", "--inplace=true", "--axis=1", "2x21x5x7"}},
            {{"--softmax", "--tag=aBx16b", "--axis=2", "2x20x3x5"}},
    };
    return p;
}

class OpCases : public testing::TestWithParam<std::tuple<isa, int>> {};

TEST_P(OpCases, MatchesReference) {
    const auto [level, index] = GetParam();
    if (blockdnn::detected_isa() < level) GTEST_SKIP() << "the CPU lacks " << blockdnn::to_string(level);
    bdrv::batch_reader_t reader;
    reader.read_args(problems()[static_cast<std::size_t>(index)].args);
    ASSERT_EQ(reader.problems().size(), 1u);
    const std::optional<bdrv::spec_t> spec = bdrv::make_spec(reader.problems()[0]);
    ASSERT_TRUE(spec.has_value());

    const std::unique_ptr<bdtest::op_case_t> c = bdrv::make_case(*spec);
    const bdtest::isa_cap_guard_t guard;
    blockdnn::set_max_isa(level);
    const std::string impl = c->prepare(level);
    EXPECT_FALSE(impl.empty());
    c->execute();
    const bdtest::work_t w = c->work();
    EXPECT_GT(w.flops + w.bytes, 0) << impl;
    EXPECT_GT(c->memory_bytes(), 0) << impl;
    const double err = c->check();
    EXPECT_LE(err, c->tolerance()) << spec->str << " on " << blockdnn::to_string(level) << " (" << impl << ")";
}

std::string param_name(const testing::TestParamInfo<std::tuple<isa, int>> &info) {
    const auto [level, index] = info.param;
    const std::vector<std::string> &args = problems()[static_cast<std::size_t>(index)].args;
    std::string name = args.front().substr(2) + "_" + blockdnn::to_string(level) + "_";
    for (std::size_t i = 1; i + 1 < args.size(); ++i) name += args[i].substr(args[i].find('=') + 1) + "_";
    for (char ch : args.back()) name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
    for (char &ch : name)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
    return name;
}

INSTANTIATE_TEST_SUITE_P(Driver, OpCases,
        testing::Combine(testing::Values(isa::avx512_core, isa::avx2, isa::scalar),
                testing::Range(0, static_cast<int>(problems().size()))),
        param_name);

} // namespace
