// SPDX-License-Identifier: Apache-2.0
// The driver's side of op_case_t (testing/op_case.hpp): a case from a spec (one file per op
// implements it, case_*.cpp) and the helpers the case files share.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "blockdnn/blockdnn.hpp"
#include "driver/spec.hpp"
#include "testing/fill.hpp"
#include "testing/op_case.hpp"

namespace bdrv {

using bdtest::copy_from;
using bdtest::copy_seed;
using bdtest::isa_cap_guard_t;
using bdtest::op_case_t;
using bdtest::op_copy_t;
using bdtest::work_t;

/// The case of a spec. Allocates nothing until prepare().
std::unique_ptr<op_case_t> make_case(const spec_t &s);

// Helpers shared by the case files.

/// Seeded inputs and the logical values of outputs: testing/fill.hpp.
using bdtest::fill_seeded;
using bdtest::logical_values;

/// tol::rel_err of two value lists.
double max_err(const std::vector<float> &got, const std::vector<float> &want);

/// The activation layout for "any" on `level` (nChw16c / nChw8c / nchw and their 1-D, 3-D
/// twins; plain for 2-D), or the named one (benchdnn or blockdnn spelling).
blockdnn::format_tag act_layout(const std::string &word, int ndims, blockdnn::isa level);

/// The buffers of one copy of a one-source, one-destination op (pool, eltwise, softmax).
struct src_dst_t {
    blockdnn::tensor src, dst;
};

/// A copy of a one-source, one-destination op: make() builds and fills its buffers, the op
/// (the case's, whatever prepare() made it) runs on them, and dst is its one output.
template <typename Op>
std::unique_ptr<op_copy_t> src_dst_copy(const std::optional<Op> &op, std::function<src_dst_t()> make) {
    return copy_from<src_dst_t>(
            std::move(make), [&op](const src_dst_t &b) { op->execute(b.src, b.dst); },
            [](const src_dst_t &b) { return std::vector<std::vector<float>> {logical_values(b.dst)}; });
}

std::unique_ptr<op_case_t> make_conv_case(const conv_spec_t &s);
std::unique_ptr<op_case_t> make_bnorm_case(const bnorm_spec_t &s);
std::unique_ptr<op_case_t> make_rnn_case(const rnn_spec_t &s);
std::unique_ptr<op_case_t> make_pool_case(const pool_spec_t &s);
std::unique_ptr<op_case_t> make_eltwise_case(const eltwise_spec_t &s);
std::unique_ptr<op_case_t> make_softmax_case(const softmax_spec_t &s);

} // namespace bdrv
