// SPDX-License-Identifier: Apache-2.0
// Batch normalization case: forward training (FWD_D) or inference (FWD_I, or G), backward
// BWD_D / BWD_DW, with benchdnn's flags G C H R. Every output the direction writes is checked
// (dst and the batch statistics; diff_src and, for BWD_DW, diff_scale / diff_shift).
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "testing/tolerances.hpp"
#include "driver/op_case.hpp"

namespace bdrv {

using namespace blockdnn;

namespace {

class bnorm_case_t final : public op_case_t {
public:
    explicit bnorm_case_t(const bnorm_spec_t &s) : s_(s) {}

    std::string prepare(isa level) override {
        make_inputs();
        const tensor_desc sd(s_.desc.src.dims(), act_layout(s_.tag, s_.desc.src.ndims(), level));
        cur_ = make_tensors(sd, p_);
        if (s_.backward) {
            bwd_.emplace(bwd_desc(sd));
            return bwd_->impl_name();
        }
        fwd_.emplace(fwd_desc(sd));
        return fwd_->impl_name();
    }

    void execute() override { run(cur_); }

    double check() override {
        if (!ref_) {
            isa_cap_guard_t guard;
            set_max_isa(isa::scalar);
            const tensor_desc sd(s_.desc.src.dims(), plain_tag());
            tensors_t t = make_tensors(sd, p_);
            if (s_.backward) bnorm_bwd(bwd_desc(sd)).execute(bwd_args(t));
            else bnorm_fwd(fwd_desc(sd)).execute(fwd_args(t));
            ref_ = outputs(t);
        }
        cur_ = make_tensors(cur_.src.desc(), p_); // fresh inputs (in place runs overwrite them)
        execute();
        const std::vector<std::vector<float>> got = outputs(cur_);
        // dst, diff_src and the statistics under tol::bnorm's measure; diff_scale and
        // diff_shift (the outputs after diff_src) under the per-value bound of a sum over N
        // values, reported in tol::bnorm's units so that err <= tolerance() passes.
        double e = max_err(got[0], (*ref_)[0]);
        for (std::size_t i = 1; i < got.size(); ++i) {
            if (!s_.backward) {
                e = std::max(e, max_err(got[i], (*ref_)[i]));
                continue;
            }
            const double n = static_cast<double>(s_.desc.src.nelems() / s_.desc.src.dim(1));
            for (std::size_t k = 0; k < got[i].size(); ++k) {
                const double want = (*ref_)[i][k], d = std::fabs(got[i][k] - want);
                const double ratio = d / (tol::bnorm_sum_per_value * n + tol::bnorm * std::fabs(want));
                e = std::max(e, std::isnan(d) ? std::numeric_limits<double>::infinity() : ratio * tol::bnorm);
            }
        }
        return e;
    }

    double tolerance() const override { return tol::bnorm; }

    double memory_bytes() const override { return work().bytes / (s_.backward ? 3 : 2) * 12; }

    work_t work() const override {
        dim_t n = 1;
        for (dim_t d : s_.desc.src.dims()) n *= d;
        return {0, 4.0 * static_cast<double>(n) * (s_.backward ? 3 : 2)};
    }

    std::unique_ptr<op_copy_t> make_copy(int k) override {
        return copy_from<tensors_t>([this, k] { return make_tensors(cur_.src.desc(), make_plain(k)); },
                [this](const tensors_t &t) { run(t); }, [this](const tensors_t &t) { return outputs(t); });
    }

private:
    struct tensors_t {
        tensor src, dst, mean, var, scale, shift, diff_dst, diff_src, diff_scale, diff_shift;
    };

    format_tag plain_tag() const { return act_layout("abx", s_.desc.src.ndims(), isa::scalar); }

    bool use_given_stats() const { return !s_.backward && s_.global_stats; }

    bnorm_flags flags() const {
        bnorm_flags f = bnorm_flags::none;
        if (s_.use_scale) f = f | bnorm_flags::use_scale;
        if (s_.use_shift) f = f | bnorm_flags::use_shift;
        if (s_.fuse_relu) f = f | bnorm_flags::fuse_relu;
        return f;
    }

    bnorm_desc fwd_desc(const tensor_desc &sd) const {
        // FWD_I without G computes the batch statistics (oneDNN does too) and keeps them.
        return {use_given_stats() ? bnorm_mode::inference : bnorm_mode::training, sd, {}, s_.desc.epsilon, flags()};
    }

    bnorm_bwd_desc bwd_desc(const tensor_desc &sd) const {
        return {sd, {}, {}, s_.desc.epsilon, flags(), s_.global_stats};
    }

    // Seeded plain data: src and diff_dst in [-1, 1), mean in [-0.5, 0.5), variance in
    // [0.5, 1.5), scale in [0.5, 1.5), shift in [-0.5, 0.5), a forward dst in [-1, 1). The
    // case's own for k < 0, else copy k's (op_case_t::make_copy).
    struct plain_t {
        tensor src, ddst, dst, mean, var, scale, shift;
    };
    plain_t make_plain(int k) const {
        const auto seed = [k](unsigned s) { return k < 0 ? s : copy_seed(s, k); };
        const tensor_desc pd(s_.desc.src.dims(), plain_tag());
        const tensor_desc cd({s_.desc.src.dim(1)}, format_tag::x);
        plain_t p {tensor(pd), tensor(pd), tensor(pd), tensor(cd), tensor(cd), tensor(cd), tensor(cd)};
        fill_seeded(p.src, seed(11), -1, 1);
        fill_seeded(p.ddst, seed(12), -1, 1);
        fill_seeded(p.dst, seed(13), -1, 1);
        fill_seeded(p.mean, seed(14), -0.5f, 0.5f);
        fill_seeded(p.var, seed(15), 0.5f, 1.5f);
        fill_seeded(p.scale, seed(16), 0.5f, 1.5f);
        fill_seeded(p.shift, seed(17), -0.5f, 0.5f);
        return p;
    }

    void make_inputs() {
        if (p_.src.empty()) p_ = make_plain(-1);
    }

    tensor copy_of(const tensor &t) const {
        tensor c(t.desc());
        reorder(t, c);
        return c;
    }

    tensors_t make_tensors(const tensor_desc &sd, const plain_t &p) const {
        tensors_t t;
        const format_tag tag = sd.tag();
        t.src = reorder(p.src, tag);
        t.mean = copy_of(p.mean), t.var = copy_of(p.var), t.scale = copy_of(p.scale), t.shift = copy_of(p.shift);
        if (s_.backward) {
            t.diff_dst = reorder(p.ddst, tag);
            t.dst = reorder(p.dst, tag);
            t.diff_src = s_.inplace ? t.diff_dst : tensor(sd);
            t.diff_scale = tensor(p.mean.desc()), t.diff_shift = tensor(p.mean.desc());
        } else {
            t.dst = s_.inplace ? t.src : tensor(sd);
        }
        return t;
    }

    void run(const tensors_t &t) const {
        if (bwd_) bwd_->execute(bwd_args(t));
        else fwd_->execute(fwd_args(t));
    }

    bnorm_fwd_args fwd_args(const tensors_t &t) const { return {t.src, t.dst, t.mean, t.var, t.scale, t.shift}; }

    bnorm_bwd_args bwd_args(const tensors_t &t) const {
        return {t.src, t.diff_dst, t.diff_src, t.mean, t.var, t.scale, t.dst, t.diff_scale, t.diff_shift};
    }

    // The outputs the direction defines, as logical values.
    std::vector<std::vector<float>> outputs(const tensors_t &t) const {
        std::vector<std::vector<float>> o;
        if (s_.backward) {
            o.push_back(logical_values(t.diff_src));
            if (s_.with_diff_scale_shift && s_.use_scale) o.push_back(logical_values(t.diff_scale));
            if (s_.with_diff_scale_shift && s_.use_shift) o.push_back(logical_values(t.diff_shift));
        } else {
            o.push_back(logical_values(t.dst));
            if (!use_given_stats()) {
                o.push_back(logical_values(t.mean));
                o.push_back(logical_values(t.var));
            }
        }
        return o;
    }

    bnorm_spec_t s_;
    std::optional<bnorm_fwd> fwd_;
    std::optional<bnorm_bwd> bwd_;
    plain_t p_;
    tensors_t cur_;
    std::optional<std::vector<std::vector<float>>> ref_;
};

} // namespace

std::unique_ptr<op_case_t> make_bnorm_case(const bnorm_spec_t &s) { return std::make_unique<bnorm_case_t>(s); }

} // namespace bdrv
