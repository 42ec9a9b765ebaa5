// SPDX-License-Identifier: Apache-2.0
// Forward convolution case. Inputs are small integers (benchdnn's way), so every sum of
// products is exact in float and the JIT kernels must match the reference exactly whatever
// their summation order; tol::conv bounds the post-ops' rounding.
#include <optional>

#include "testing/tolerances.hpp"
#include "driver/op_case.hpp"
#include "core/prb_parse.hpp"

namespace bdrv {

using namespace blockdnn;

namespace {

format_tag plain_act(int ndims) {
    return ndims == 3 ? format_tag::ncw : ndims == 4 ? format_tag::nchw : format_tag::ncdhw;
}

format_tag plain_wei(int ndims, bool grouped) {
    if (grouped) return ndims == 3 ? format_tag::goiw : ndims == 4 ? format_tag::goihw : format_tag::goidhw;
    return ndims == 3 ? format_tag::oiw : ndims == 4 ? format_tag::oihw : format_tag::oidhw;
}

class conv_case_t final : public op_case_t {
public:
    explicit conv_case_t(const conv_spec_t &s) : s_(s) {}

    // Layouts given as "any" are the implementation's pick (format_tag::any), read back from
    // the op. Plain src and weights are made once; the op's are reorders of them.
    std::string prepare(isa) override {
        const conv_desc &d = s_.desc;
        auto tag = [](const std::string &word, int nd) {
            return word == "any" ? format_tag::any : impl::parse_tag(word, nd);
        };
        const format_tag wt = s_.wtag == "any" ? format_tag::any : format_tag_from_string(s_.wtag);
        op_.emplace(d, tag(s_.stag, d.ndims), wt, tag(s_.dtag, d.ndims), s_.po);
        make_inputs(op_->wei_desc().ndims() == d.ndims + 1);
        src_ = reorder(src_p_, op_->src_desc().tag());
        wei_ = reorder(wei_p_, op_->wei_desc().tag());
        dst_ = tensor(op_->dst_desc());
        reorder(dst0_p_, dst_);
        return op_->impl_name();
    }

    void execute() override { op_->execute(src_, wei_, bia_, dst_); }

    double check() override {
        if (!ref_) {
            isa_cap_guard_t guard;
            set_max_isa(isa::scalar);
            const bool grouped = ndims_of(wei_.desc().tag()) == s_.desc.ndims + 1;
            const conv_fwd ref(s_.desc, plain_act(s_.desc.ndims), plain_wei(s_.desc.ndims, grouped),
                    plain_act(s_.desc.ndims), s_.po);
            const tensor dst(ref.dst_desc());
            reorder(dst0_p_, dst);
            ref.execute(src_p_, reorder(wei_, plain_wei(s_.desc.ndims, grouped)), bia_, dst);
            ref_ = logical_values(dst);
        }
        reorder(dst0_p_, dst_); // a sum post-op reads dst
        execute();
        return max_err(logical_values(dst_), *ref_);
    }

    double tolerance() const override { return tol::conv; }

    double memory_bytes() const override {
        const conv_desc &p = s_.desc;
        const double src = 1.0 * p.mb * p.ic * p.id * p.ih * p.iw, dst = 1.0 * p.mb * p.oc * p.od * p.oh * p.ow;
        const double wei = 1.0 * p.oc * (p.ic / p.g) * p.kd * p.kh * p.kw;
        return 4 * (2 * src + 2 * wei + 5 * dst);
    }

    // Taps on padding are not counted (benchdnn's count, conv_desc::flops).
    work_t work() const override { return {s_.desc.flops(), 0}; }

    std::unique_ptr<op_copy_t> make_copy(int k) override {
        struct bufs_t {
            tensor src, dst;
        };
        return copy_from<bufs_t>(
                [this, k] {
                    const tensor src_p(src_p_.desc()), dst0_p(dst0_p_.desc());
                    fill_seeded(src_p, copy_seed(1, k), -2, 2, true);
                    fill_seeded(dst0_p, copy_seed(4, k), -4, 4, true);
                    bufs_t b {reorder(src_p, src_.desc().tag()), tensor(op_->dst_desc())};
                    reorder(dst0_p, b.dst);
                    return b;
                },
                [this](const bufs_t &b) { op_->execute(b.src, wei_, bia_, b.dst); },
                [](const bufs_t &b) { return std::vector<std::vector<float>> {logical_values(b.dst)}; });
    }

private:
    // Plain inputs, made once: src and weights in [-2, 2], bias and a dst for sum in [-4, 4].
    void make_inputs(bool grouped) {
        if (!src_p_.empty()) return;
        const conv_desc &d = s_.desc;
        src_p_ = tensor(tensor_desc(d.src_dims(), plain_act(d.ndims)));
        wei_p_ = tensor(tensor_desc(d.wei_dims(grouped), plain_wei(d.ndims, grouped)));
        dst0_p_ = tensor(tensor_desc(d.dst_dims(), plain_act(d.ndims)));
        fill_seeded(src_p_, 1, -2, 2, true);
        fill_seeded(wei_p_, 2, -2, 2, true);
        fill_seeded(dst0_p_, 4, -4, 4, true);
        if (d.with_bias) {
            bia_ = tensor(tensor_desc(d.bia_dims(), format_tag::x));
            fill_seeded(bia_, 3, -4, 4, true);
        }
    }

    conv_spec_t s_;
    std::optional<conv_fwd> op_;
    tensor src_p_, wei_p_, dst0_p_, bia_;
    tensor src_, wei_, dst_;
    std::optional<std::vector<float>> ref_;
};

} // namespace

std::unique_ptr<op_case_t> make_conv_case(const conv_spec_t &s) { return std::make_unique<conv_case_t>(s); }

} // namespace bdrv
