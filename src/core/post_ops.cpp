// SPDX-License-Identifier: Apache-2.0
// post_ops: building and checking a chain, and its text form.
#include <cmath>

#include "blockdnn/post_ops.hpp"
#include "core/utils.hpp"

namespace blockdnn {

using impl::cat;
using impl::fail;

post_ops &post_ops::append_eltwise(eltwise_alg alg, float alpha, float beta) {
    const int a = static_cast<int>(alg);
    if (a < static_cast<int>(eltwise_alg::relu) || a > static_cast<int>(eltwise_alg::linear))
        fail(status::invalid_arguments, "post_ops: eltwise alg = ", a, " is not an eltwise_alg");
    if (!std::isfinite(alpha))
        fail(status::invalid_arguments, "post_ops: eltwise ", to_string(alg), " alpha = ", alpha, " must be finite");
    if (!std::isfinite(beta))
        fail(status::invalid_arguments, "post_ops: eltwise ", to_string(alg), " beta = ", beta, " must be finite");
    if (alg == eltwise_alg::clip && alpha > beta)
        fail(status::invalid_arguments, "post_ops: eltwise clip lower bound alpha = ", alpha,
                " exceeds upper bound beta = ", beta);
    post_op e;
    e.what = post_op::kind::eltwise;
    e.alg = alg;
    e.alpha = alpha;
    e.beta = beta;
    entries_.push_back(e);
    return *this;
}

post_ops &post_ops::append_sum(float scale) {
    if (!std::isfinite(scale)) fail(status::invalid_arguments, "post_ops: sum scale = ", scale, " must be finite");
    if (has_sum())
        fail(status::invalid_arguments, "post_ops: a second sum at position ", len(),
                "; a chain holds at most one sum");
    post_op e;
    e.what = post_op::kind::sum;
    e.scale = scale;
    entries_.push_back(e);
    return *this;
}

bool post_ops::has_sum() const {
    for (const post_op &e : entries_)
        if (e.what == post_op::kind::sum) return true;
    return false;
}

std::string post_ops::str() const {
    std::string s;
    for (const post_op &e : entries_) {
        if (!s.empty()) s += '+';
        s += e.what == post_op::kind::sum ? cat("sum:", e.scale) : cat(to_string(e.alg), ':', e.alpha, ':', e.beta);
    }
    return s;
}

bool post_ops::operator==(const post_ops &o) const {
    if (entries_.size() != o.entries_.size()) return false;
    for (std::size_t i = 0; i < entries_.size(); ++i) {
        const post_op &a = entries_[i], &b = o.entries_[i];
        if (a.what != b.what || a.alg != b.alg || a.alpha != b.alpha || a.beta != b.beta || a.scale != b.scale)
            return false;
    }
    return true;
}

} // namespace blockdnn
