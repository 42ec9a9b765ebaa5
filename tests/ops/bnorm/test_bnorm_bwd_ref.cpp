// SPDX-License-Identifier: Apache-2.0
// The reference batch normalization backward against central finite differences of a double
// forward (training and fixed-statistics forms, with and without relu, several layouts) and
// against PyTorch autograd cases generated at build time (tests/torch/gen_bnorm_bwd.py).
#include <cmath>
#include <functional>

#include "ops/bnorm/bnorm_bwd_ref.hpp"
#include "core/utils.hpp"
#include "bnorm_test_util.hpp"
#include "torch/torch_data.hpp"

using namespace blockdnn;
using namespace blockdnn::impl;
using namespace bnorm_test;

namespace {

// L = sum(w * y) with y = [relu](gamma (x - mean) / sqrt(var + eps) + beta), in double over
// logical (canonical-order) arrays; training recomputes mean and var from x.
struct fwd_loss_t {
    dims_t dims;
    bool training = true, relu = false;
    double eps = 1e-5;
    std::vector<double> w, fixed_mean, fixed_var;

    double operator()(
            const std::vector<double> &x, const std::vector<double> &gamma, const std::vector<double> &beta) const {
        const dim_t C = dims[1], n = static_cast<dim_t>(x.size()) / C, sp = n / dims[0];
        std::vector<double> mean = fixed_mean, var = fixed_var;
        auto at = [&](dim_t c, dim_t k) { return (k / sp * C + c) * sp + k % sp; }; // nc[sp] order
        if (training)
            for (dim_t c = 0; c < C; ++c) {
                double s = 0, q = 0;
                for (dim_t k = 0; k < n; ++k) s += x[at(c, k)];
                mean[c] = s / n;
                for (dim_t k = 0; k < n; ++k) q += (x[at(c, k)] - mean[c]) * (x[at(c, k)] - mean[c]);
                var[c] = q / n;
            }
        double loss = 0;
        for (dim_t c = 0; c < C; ++c)
            for (dim_t k = 0; k < n; ++k) {
                double y = gamma[c] * (x[at(c, k)] - mean[c]) / std::sqrt(var[c] + eps) + beta[c];
                if (relu && y < 0) y = 0;
                loss += w[at(c, k)] * y;
            }
        return loss;
    }
};

// d/dv[i] of f by central differences.
double central_diff(std::vector<double> &v, std::size_t i, const std::function<double()> &f) {
    const double h = 1e-6, keep = v[i];
    v[i] = keep + h;
    const double up = f();
    v[i] = keep - h;
    const double down = f();
    v[i] = keep;
    return (up - down) / (2 * h);
}

// Copies a logical (canonical order) array into a tensor of layout d, and back.
void to_tensor(const std::vector<double> &v, const tensor &t) {
    dim_t k = 0;
    for_each_index(t.desc(), [&](const dim_t *idx) { t.f32()[t.desc().offset(idx)] = static_cast<float>(v[k++]); });
}
std::vector<double> from_tensor(const tensor &t) {
    std::vector<double> v;
    for_each_index(t.desc(), [&](const dim_t *idx) { v.push_back(t.f32()[t.desc().offset(idx)]); });
    return v;
}

} // namespace

TEST(BnormBwdRef, FiniteDifferences) {
    for (format_tag tag : {format_tag::nchw, format_tag::nhwc, format_tag::nChw16c, format_tag::nChw8c})
        for (int form = 0; form < 4; ++form) {
            const bool global = form & 1, relu = form & 2;
            const dims_t dims = {2, 3, 3, 2};
            const tensor_desc d(dims, tag);
            const dim_t C = 3, n = d.nelems();
            SCOPED_TRACE(cat(to_string(tag), global ? " global" : " training", relu ? " relu" : ""));
            // Float-exact inputs (the reference reads floats).
            auto f32 = [](std::vector<float> v) { return std::vector<double>(v.begin(), v.end()); };
            std::vector<double> x = f32(random_vec(n, 1, -1.f, 1.f)), gamma = f32(random_vec(C, 2, 0.5f, 1.5f)),
                                beta = f32(random_vec(C, 3, -0.5f, 0.5f));
            fwd_loss_t L;
            L.dims = dims;
            L.training = !global;
            L.relu = relu;
            L.w = f32(random_vec(n, 4, -1.f, 1.f));
            L.fixed_mean = f32(random_vec(C, 5, -0.2f, 0.2f));
            L.fixed_var = f32(random_vec(C, 6, 0.3f, 1.f));

            // The reference on tensors of layout d, with the statistics of the forward.
            const tensor src(d), ddst(d), dst(d), dsrc(d);
            to_tensor(x, src);
            to_tensor(L.w, ddst);
            std::vector<float> mean(C), var(C), g(gamma.begin(), gamma.end()), b(beta.begin(), beta.end());
            if (global)
                mean.assign(L.fixed_mean.begin(), L.fixed_mean.end()),
                        var.assign(L.fixed_var.begin(), L.fixed_var.end());
            naive_fwd(d, src.f32(), dst.f32(), mean, var, !global, g.data(), b.data(), 1e-5f, relu);
            std::vector<float> dgamma(C), dbeta(C);
            bnorm_bwd_ref_prb_t p;
            p.src = p.diff_dst = p.diff_src = p.dst = d;
            p.use_scale = true;
            p.fuse_relu = relu;
            p.global_stats = global;
            bnorm_bwd_ref(p, src.f32(), mean.data(), var.data(), g.data(), dst.f32(), ddst.f32(), dsrc.f32(),
                    dgamma.data(), dbeta.data());
            const std::vector<double> dx = from_tensor(dsrc);

            auto loss = [&] { return L(x, gamma, beta); };
            for (dim_t i = 0; i < n; ++i)
                EXPECT_NEAR(dx[i], central_diff(x, i, loss), 1e-5 * (1 + std::fabs(dx[i]))) << "diff_src[" << i << "]";
            for (dim_t c = 0; c < C; ++c) {
                EXPECT_NEAR(dgamma[c], central_diff(gamma, c, loss), 1e-5 * (1 + std::fabs(dgamma[c]))) << "dgamma";
                EXPECT_NEAR(dbeta[c], central_diff(beta, c, loss), 1e-5 * (1 + std::fabs(dbeta[c]))) << "dbeta";
            }
        }
}

TEST(BnormBwdRef, PytorchAutograd) {
    if (torch_data::cases_dir().empty()) GTEST_SKIP() << "no PyTorch cases (python3-torch missing at build time)";
    for (const char *name : {"bnbwd_train", "bnbwd_train_relu", "bnbwd_eval", "bnbwd_eval_relu"}) {
        SCOPED_TRACE(name);
        const std::string cs = name;
        const bool relu = cs.find("relu") != std::string::npos, global = cs.find("eval") != std::string::npos;
        const torch_data::array_t x = torch_data::load(cs, "x"), dy = torch_data::load(cs, "dy"),
                                  gamma = torch_data::load(cs, "gamma"), beta = torch_data::load(cs, "beta"),
                                  mean = torch_data::load(cs, "mean"), var = torch_data::load(cs, "var"),
                                  dx = torch_data::load(cs, "dx"), dgamma = torch_data::load(cs, "dgamma"),
                                  dbeta = torch_data::load(cs, "dbeta");
        const dims_t dims(x.dims.begin(), x.dims.end());
        for (format_tag tag : {format_tag::nchw, format_tag::nChw16c}) {
            const tensor_desc d(dims, tag);
            const tensor src(d), ddst(d), dst(d), dsrc(d);
            to_tensor(std::vector<double>(x.data.begin(), x.data.end()), src);
            to_tensor(std::vector<double>(dy.data.begin(), dy.data.end()), ddst);
            std::vector<float> m = mean.data, v = var.data;
            naive_fwd(d, src.f32(), dst.f32(), m, v, false, gamma.data.data(), beta.data.data(), 1e-5f, relu);
            bnorm_bwd_ref_prb_t p;
            p.src = p.diff_dst = p.diff_src = p.dst = d;
            p.use_scale = true;
            p.fuse_relu = relu;
            p.global_stats = global;
            const dim_t C = dims[1];
            std::vector<float> dg(C), db(C);
            bnorm_bwd_ref(p, src.f32(), mean.data.data(), var.data.data(), gamma.data.data(), dst.f32(), ddst.f32(),
                    dsrc.f32(), dg.data(), db.data());
            const std::vector<double> got = from_tensor(dsrc);
            for (std::size_t i = 0; i < got.size(); ++i)
                EXPECT_NEAR(got[i], dx.data[i], 1e-5 * (1 + std::fabs(dx.data[i]))) << "dx[" << i << "]";
            for (dim_t c = 0; c < C; ++c) {
                EXPECT_NEAR(dg[c], dgamma.data[c], 1e-5 * (1 + std::fabs(dgamma.data[c]))) << "dgamma";
                EXPECT_NEAR(db[c], dbeta.data[c], 1e-5 * (1 + std::fabs(dbeta.data[c]))) << "dbeta";
            }
        }
    }
}
