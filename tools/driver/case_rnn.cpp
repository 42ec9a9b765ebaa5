// SPDX-License-Identifier: Apache-2.0
// RNN forward case. The op under test is created with its weights (packed once, the fast
// path); the reference reads the same tensors at execution. dst_layer, dst_iter and, for
// LSTM, dst_iter_c are checked.
#include <algorithm>
#include <cmath>
#include <optional>

#include "testing/tolerances.hpp"
#include "driver/op_case.hpp"

namespace bdrv {

using namespace blockdnn;

namespace {

class rnn_case_t final : public op_case_t {
public:
    explicit rnn_case_t(const rnn_spec_t &s) : s_(s) {
        s_.desc.weights_layer_tag = s_.desc.weights_iter_tag =
                s.wei_tag == "ldgoi" ? format_tag::ldgoi : format_tag::ldigo;
    }

    std::string prepare(isa) override {
        op_.reset();
        make_inputs();
        op_.emplace(s_.desc, wl_, wi_, bias_);
        out_ = outputs_t(*op_);
        return op_->impl_name();
    }

    void execute() override { op_->execute(args(out_, false)); }

    double check() override {
        if (!ref_) {
            isa_cap_guard_t guard;
            set_max_isa(isa::scalar);
            const rnn_fwd ref(s_.desc);
            const outputs_t o(ref);
            ref.execute(args(o, true));
            ref_ = o.values();
        }
        execute();
        const std::vector<std::vector<float>> got = out_.values();
        double e = 0;
        for (std::size_t i = 0; i < got.size(); ++i) e = std::max(e, max_err(got[i], (*ref_)[i]));
        return e;
    }

    double tolerance() const override { return tol::rnn; }

    double memory_bytes() const override {
        const rnn_desc &d = s_.desc;
        const double g = rnn_n_gates(d.cell),
                     dirs = d.direction == rnn_direction::bi_concat || d.direction == rnn_direction::bi_sum ? 2 : 1;
        const double wei = d.l * dirs * (d.slc + d.dhc) * g * d.dhc,
                     data = 1.0 * d.t * d.mb * (d.slc + 2 * dirs * d.dhc);
        return 4 * (3 * wei + 4 * data + 8.0 * d.l * dirs * d.mb * d.dhc);
    }

    work_t work() const override {
        const rnn_desc &d = s_.desc;
        const double dirs = d.direction == rnn_direction::bi_concat || d.direction == rnn_direction::bi_sum ? 2 : 1;
        return {2.0 * d.l * dirs * d.t * d.mb * rnn_n_gates(d.cell) * d.dhc * (d.slc + d.dhc), 0};
    }

    // The weights are the op's (packed at creation); inputs, states and outputs per copy.
    std::unique_ptr<op_copy_t> make_copy(int k) override {
        struct bufs_t {
            tensor src, src_iter, src_iter_c;
            outputs_t out;
        };
        return copy_from<bufs_t>(
                [this, k] {
                    bufs_t b {tensor(src_.desc()), tensor(src_iter_.desc()), {}, outputs_t(*op_)};
                    fill_seeded(b.src, copy_seed(21, k), -1, 1);
                    fill_seeded(b.src_iter, copy_seed(22, k), -1, 1);
                    if (!src_iter_c_.empty()) {
                        b.src_iter_c = tensor(src_iter_c_.desc());
                        fill_seeded(b.src_iter_c, copy_seed(23, k), -1, 1);
                    }
                    return b;
                },
                [this](const bufs_t &b) {
                    op_->execute(
                            {b.src, b.src_iter, b.src_iter_c, {}, {}, {}, b.out.dst, b.out.dst_iter, b.out.dst_iter_c});
                },
                [](const bufs_t &b) { return b.out.values(); });
    }

private:
    struct outputs_t {
        tensor dst, dst_iter, dst_iter_c;
        outputs_t() = default;
        explicit outputs_t(const rnn_fwd &op)
            : dst(op.dst_layer_desc()), dst_iter(op.dst_iter_desc()),
              dst_iter_c(op.desc().cell == rnn_cell::lstm ? tensor(op.dst_iter_desc()) : tensor()) {}
        std::vector<std::vector<float>> values() const {
            std::vector<std::vector<float>> v = {logical_values(dst), logical_values(dst_iter)};
            if (!dst_iter_c.empty()) v.push_back(logical_values(dst_iter_c));
            return v;
        }
    };

    rnn_fwd_args args(const outputs_t &o, bool with_weights) const {
        return {src_, src_iter_, src_iter_c_, with_weights ? wl_ : tensor(), with_weights ? wi_ : tensor(),
                with_weights ? bias_ : tensor(), o.dst, o.dst_iter, o.dst_iter_c};
    }

    // Inputs and states in [-1, 1), weights in +-1/sqrt(fan-in) (unsaturated gates), bias
    // in +-0.1. The tensor descriptors come from an op created at the reference ISA.
    void make_inputs() {
        if (!src_.empty()) return;
        isa_cap_guard_t guard;
        set_max_isa(isa::scalar);
        const rnn_fwd shape(s_.desc);
        src_ = tensor(shape.src_layer_desc()), src_iter_ = tensor(shape.src_iter_desc());
        wl_ = tensor(shape.weights_layer_desc()), wi_ = tensor(shape.weights_iter_desc()),
        bias_ = tensor(shape.bias_desc());
        fill_seeded(src_, 21, -1, 1);
        fill_seeded(src_iter_, 22, -1, 1);
        if (s_.desc.cell == rnn_cell::lstm) {
            src_iter_c_ = tensor(shape.src_iter_desc());
            fill_seeded(src_iter_c_, 23, -1, 1);
        }
        const float sl = 1.f / std::sqrt(static_cast<float>(s_.desc.slc)),
                    si = 1.f / std::sqrt(static_cast<float>(s_.desc.dhc));
        fill_seeded(wl_, 24, -sl, sl);
        fill_seeded(wi_, 25, -si, si);
        fill_seeded(bias_, 26, -0.1f, 0.1f);
    }

    rnn_spec_t s_;
    std::optional<rnn_fwd> op_;
    tensor src_, src_iter_, src_iter_c_, wl_, wi_, bias_;
    outputs_t out_;
    std::optional<std::vector<std::vector<float>>> ref_;
};

} // namespace

std::unique_ptr<op_case_t> make_rnn_case(const rnn_spec_t &s) { return std::make_unique<rnn_case_t>(s); }

} // namespace bdrv
