// SPDX-License-Identifier: Apache-2.0
// The softmax case, on the eltwise case's pattern (case_pool_eltwise.cpp): one source, one
// destination in the spec's layout, memory-bound, so its rate is GB/s (src read + dst written)
// against the copy bandwidth.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "testing/tolerances.hpp"
#include "driver/op_case.hpp"

namespace bdrv {

using namespace blockdnn;

namespace {

// Inputs in [-8, 8), the range the JIT's tests hold within tol::softmax: lines whose max is
// positive and negative, exp spanning e^16.
constexpr float fill_lo = -8, fill_hi = 8;

class softmax_case_t final : public op_case_t {
public:
    explicit softmax_case_t(const softmax_spec_t &s) : s_(s) {}

    std::string prepare(isa level) override {
        const int nd = static_cast<int>(s_.desc.dims.size());
        const format_tag tag = act_layout(s_.tag, nd, level);
        op_.emplace(s_.desc, tag, tag);
        if (src_p_.empty()) {
            src_p_ = tensor(tensor_desc(s_.desc.dims, act_layout("abx", nd, isa::scalar)));
            fill_seeded(src_p_, 51, fill_lo, fill_hi);
        }
        src_ = reorder(src_p_, tag);
        dst_ = s_.inplace ? src_ : tensor(op_->dst_desc());
        return op_->impl_name();
    }

    void execute() override { op_->execute(src_, dst_); }

    double check() override {
        if (!ref_) {
            isa_cap_guard_t guard;
            set_max_isa(isa::scalar);
            const format_tag plain = src_p_.desc().tag();
            const softmax_fwd ref(s_.desc, plain, plain);
            const tensor dst(ref.dst_desc());
            ref.execute(src_p_, dst);
            ref_ = logical_values(dst);
        }
        reorder(src_p_, src_); // fresh input (in place runs overwrite it)
        execute();
        return max_err(logical_values(dst_), *ref_);
    }

    // The JIT's float exp and sum are held to the reference's bound too (softmax.hpp).
    double tolerance() const override { return tol::softmax; }

    double memory_bytes() const override { return work().bytes / 8 * 4 * 6; }

    // src read and dst written once each, the least a softmax moves (bench_softmax's count):
    // the kernels' further passes over a line are not counted.
    work_t work() const override {
        double n = 1;
        for (dim_t d : s_.desc.dims) n *= static_cast<double>(d);
        return {0, 8.0 * n};
    }

    std::unique_ptr<op_copy_t> make_copy(int k) override {
        return src_dst_copy(op_, [this, k] {
            const tensor src_p(src_p_.desc());
            fill_seeded(src_p, copy_seed(51, k), fill_lo, fill_hi);
            src_dst_t b {reorder(src_p, src_.desc().tag()), {}};
            b.dst = s_.inplace ? b.src : tensor(dst_.desc());
            return b;
        });
    }

private:
    softmax_spec_t s_;
    std::optional<softmax_fwd> op_;
    tensor src_p_, src_, dst_;
    std::optional<std::vector<float>> ref_;
};

} // namespace

std::unique_ptr<op_case_t> make_softmax_case(const softmax_spec_t &s) { return std::make_unique<softmax_case_t>(s); }

} // namespace bdrv
