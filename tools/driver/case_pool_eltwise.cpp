// SPDX-License-Identifier: Apache-2.0
// Pooling and eltwise cases: one source, one destination, both memory-bound, so their rate is
// GB/s (src read + dst written) against the copy bandwidth.
#include <functional>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "testing/tolerances.hpp"
#include "driver/op_case.hpp"

namespace bdrv {

using namespace blockdnn;

namespace {

class pool_case_t final : public op_case_t {
public:
    explicit pool_case_t(const pool_spec_t &s) : s_(s) {}

    std::string prepare(isa level) override {
        const format_tag tag = act_layout(s_.tag, s_.desc.ndims, level);
        op_.emplace(s_.desc, tag, tag);
        if (src_p_.empty()) {
            src_p_ = tensor(tensor_desc(s_.desc.src_dims(), act_layout("abx", s_.desc.ndims, isa::scalar)));
            fill_seeded(src_p_, 31, -1, 1);
        }
        src_ = reorder(src_p_, tag);
        dst_ = tensor(op_->dst_desc());
        return op_->impl_name();
    }

    void execute() override { op_->execute(src_, dst_); }

    double check() override {
        if (!ref_) {
            isa_cap_guard_t guard;
            set_max_isa(isa::scalar);
            const format_tag plain = src_p_.desc().tag();
            const pool_fwd ref(s_.desc, plain, plain);
            const tensor dst(ref.dst_desc());
            ref.execute(src_p_, dst);
            ref_ = logical_values(dst);
        }
        execute();
        return max_err(logical_values(dst_), *ref_);
    }

    double tolerance() const override { return tol::pool; }

    double memory_bytes() const override { return work().bytes * 3; }

    work_t work() const override {
        const pool_desc &d = s_.desc;
        const double src = static_cast<double>(d.mb) * d.ic * d.id * d.ih * d.iw;
        const double dst = static_cast<double>(d.mb) * d.ic * d.od * d.oh * d.ow;
        return {0, 4.0 * (src + dst)};
    }

    std::unique_ptr<op_copy_t> make_copy(int k) override {
        return src_dst_copy(op_, [this, k] {
            const tensor src_p(src_p_.desc());
            fill_seeded(src_p, copy_seed(31, k), -1, 1);
            return src_dst_t {reorder(src_p, src_.desc().tag()), tensor(op_->dst_desc())};
        });
    }

private:
    pool_spec_t s_;
    std::optional<pool_fwd> op_;
    tensor src_p_, src_, dst_;
    std::optional<std::vector<float>> ref_;
};

class eltwise_case_t final : public op_case_t {
public:
    explicit eltwise_case_t(const eltwise_spec_t &s) : s_(s) {}

    std::string prepare(isa level) override {
        const int nd = static_cast<int>(s_.dims.size());
        const tensor_desc d(s_.dims, act_layout(s_.tag, nd, level));
        op_.emplace(s_.alg, s_.alpha, s_.beta, d);
        if (src_p_.empty()) {
            src_p_ = tensor(tensor_desc(s_.dims, act_layout("abx", nd, isa::scalar)));
            fill_seeded(src_p_, 41, -4, 4);
        }
        src_ = reorder(src_p_, d.tag());
        dst_ = s_.inplace ? src_ : tensor(d);
        impl_ = op_->impl_name();
        return impl_;
    }

    void execute() override { op_->execute(src_, dst_); }

    double check() override {
        if (!ref_) {
            isa_cap_guard_t guard;
            set_max_isa(isa::scalar);
            const eltwise_fwd ref(s_.alg, s_.alpha, s_.beta, src_p_.desc());
            const tensor dst(src_p_.desc());
            ref.execute(src_p_, dst);
            ref_ = logical_values(dst);
        }
        reorder(src_p_, src_); // fresh input (in place runs overwrite it)
        execute();
        return max_err(logical_values(dst_), *ref_);
    }

    double tolerance() const override { return impl_.rfind("jit", 0) == 0 ? tol::eltwise_jit : tol::eltwise; }

    double memory_bytes() const override { return work().bytes / 8 * 4 * 6; }

    work_t work() const override {
        double n = 1;
        for (dim_t d : s_.dims) n *= static_cast<double>(d);
        return {0, 8.0 * n};
    }

    std::unique_ptr<op_copy_t> make_copy(int k) override {
        return src_dst_copy(op_, [this, k] {
            const tensor src_p(src_p_.desc());
            fill_seeded(src_p, copy_seed(41, k), -4, 4);
            src_dst_t b {reorder(src_p, src_.desc().tag()), {}};
            b.dst = s_.inplace ? b.src : tensor(dst_.desc());
            return b;
        });
    }

private:
    eltwise_spec_t s_;
    std::optional<eltwise_fwd> op_;
    tensor src_p_, src_, dst_;
    std::string impl_;
    std::optional<std::vector<float>> ref_;
};

} // namespace

std::unique_ptr<op_case_t> make_pool_case(const pool_spec_t &s) { return std::make_unique<pool_case_t>(s); }
std::unique_ptr<op_case_t> make_eltwise_case(const eltwise_spec_t &s) { return std::make_unique<eltwise_case_t>(s); }

} // namespace bdrv
