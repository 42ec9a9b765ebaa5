// SPDX-License-Identifier: Apache-2.0
// PyTorch as oracle for whole networks: torchvision's ResNet-18 (seeded weights and batch-norm
// statistics, 224x224; tests/torch/gen_resnet18.py) and a Bottleneck block, built by
// examples/nets/resnet.hpp from blockdnn's public ops (conv with each batch norm folded into
// it and the residual add as a sum post-op, max and global average pooling, inner product). Every stage is
// compared with PyTorch's float64 run under tol::network, the logits also with PyTorch's
// float32 run. Blocked layouts run the JIT convolutions where the machine has them (another
// summation order than the plain reference, in float), so they are held to the same float64
// oracle under tol::network_f32.
//
// What runs where (the reference conv does ~1e9 multiply-adds a second; ResNet-18 is 1.8e9 per
// image): optimized builds run the plain layout at batch 2, nChw16c at batch 2 and nChw8c at
// batch 1 (its image 0 is compared with the plain run's). Sanitizer and unoptimized builds run
// plain and nChw16c at batch 1. Images are independent in inference, so a batch-1 run computes
// the same bits as image 0 of a batch-2 run.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <stdexcept>

#include <gtest/gtest.h>

#include "blockdnn/blockdnn.hpp"
#include "nets/resnet.hpp"
#include "common/test_util.hpp"
#include "testing/tolerances.hpp"
#include "torch/torch_data.hpp"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || !defined(__OPTIMIZE__)
#define RESNET_SMALL 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define RESNET_SMALL 1
#endif
#endif

using namespace blockdnn;
using ft = format_tag;

namespace {

#ifdef RESNET_SMALL
constexpr dim_t plain_mb = 1;
const std::vector<std::pair<ft, dim_t>> blocked_runs {{ft::nChw16c, 1}};
#else
constexpr dim_t plain_mb = 2;
const std::vector<std::pair<ft, dim_t>> blocked_runs {{ft::nChw16c, 2}, {ft::nChw8c, 1}};
#endif

dims_t to_dims(const std::vector<std::int64_t> &v) { return dims_t(v.begin(), v.end()); }

// Parameters of torch case `c`, checked against the shape the net asks for.
nets::param_source case_params(const std::string &c) {
    return [c](const std::string &name, const dims_t &dims) {
        torch_data::array_t a = torch_data::load(c, name);
        if (to_dims(a.dims) != dims) throw std::runtime_error("torch case " + c + ": " + name + " has another shape");
        return std::move(a.data);
    };
}

// The first mb images of the case's input x, in layout act (nchw for blocked nets, whose first
// conv reads plain images).
tensor case_input(const std::string &c, dim_t mb, ft act) {
    if (act == ft::nChw16c || act == ft::nChw8c) act = ft::nchw;
    const torch_data::array_t x = torch_data::load(c, "x");
    dims_t dims = to_dims(x.dims);
    dims[0] = mb;
    const tensor plain(tensor_desc(dims, ft::nchw));
    std::memcpy(plain.f32(), x.data.data(), static_cast<std::size_t>(plain.desc().nelems()) * sizeof(float));
    return act == ft::nchw ? plain : reorder(plain, act);
}

// Logical values of t (canonical order: nchw, or nc for the logits), whatever its layout.
std::vector<float> dense_values(const tensor &t) {
    const tensor d = t.desc().ndims() == 4 && t.desc().tag() != ft::nchw ? reorder(t, ft::nchw) : t;
    return {d.f32(), d.f32() + d.desc().nelems()};
}

// The first n values of array a (the first images of a batch-major tensor).
std::vector<float> head(const torch_data::array_t &a, std::size_t n) {
    return {a.data.begin(), a.data.begin() + static_cast<std::ptrdiff_t>(std::min(n, a.data.size()))};
}

using stages_t = std::vector<std::pair<std::string, std::vector<float>>>;

// Every stage of a ResNet-18 forward at batch mb in layout act, as dense values.
stages_t run_resnet18(dim_t mb, ft act) {
    const nets::resnet net(nets::resnet18, mb, 224, 224, nets::options_for(act), case_params("resnet18"));
    std::printf("  resnet18 %s mb%ld convs: %s\n", to_string(act), long(mb), net.impl_summary().c_str());
    stages_t stages;
    net.forward(case_input("resnet18", mb, act),
            [&](const std::string &name, const tensor &t) { stages.emplace_back(name, dense_values(t)); });
    return stages;
}

// The plain run, shared by the tests (it is the most expensive part). Capped at scalar: it is
// the reference run, where plain layouts would otherwise run the JIT kernels reordered around
// them.
const stages_t &plain_run() {
    static const stages_t stages = [] {
        isa_guard guard;
        set_max_isa(isa::scalar);
        return run_resnet18(plain_mb, ft::nchw);
    }();
    return stages;
}

#define SKIP_WITHOUT_TORCH()                                                                                           \
    if (torch_data::cases_dir().empty()) GTEST_SKIP() << "PyTorch cases not generated (no python3-torch)"

} // namespace

TEST(TorchResnet, Resnet18PlainMatchesPyTorchFloat64) {
    SKIP_WITHOUT_TORCH();
    const stages_t &got = plain_run();
    const char *names[] = {"stem", "layer1", "layer2", "layer3", "layer4", "avgpool", "logits"};
    ASSERT_EQ(got.size(), std::size(names));
    for (std::size_t k = 0; k < got.size(); ++k) {
        ASSERT_EQ(got[k].first, names[k]);
        const torch_data::array_t want = torch_data::load("resnet18", names[k]);
        ASSERT_EQ(static_cast<std::size_t>(want.dims[0]) * got[k].second.size() / plain_mb, want.data.size());
        const double e = tol::rel_err(got[k].second, head(want, got[k].second.size()));
        std::printf("  resnet18 nchw mb%ld %-8s max err vs PyTorch float64 %.3g (tol %.3g)\n", long(plain_mb), names[k],
                e, tol::network);
        EXPECT_LE(e, tol::network) << names[k];
    }
    const std::vector<float> &logits = got.back().second;
    const double e32 = tol::rel_err(logits, head(torch_data::load("resnet18", "logits32"), logits.size()));
    std::printf("  resnet18 nchw mb%ld logits   max err vs PyTorch float32 %.3g (tol %.3g)\n", long(plain_mb), e32,
            tol::network);
    EXPECT_LE(e32, tol::network);
}

TEST(TorchResnet, Resnet18BlockedLayoutsMatchPyTorchFloat64) {
    SKIP_WITHOUT_TORCH();
    const char *names[] = {"stem", "layer1", "layer2", "layer3", "layer4", "avgpool", "logits"};
    for (const auto &[act, mb] : blocked_runs) {
        const stages_t got = run_resnet18(mb, act);
        ASSERT_EQ(got.size(), std::size(names));
        double worst = 0;
        for (std::size_t k = 0; k < got.size(); ++k) {
            ASSERT_EQ(got[k].first, names[k]);
            const torch_data::array_t want = torch_data::load("resnet18", names[k]);
            const double e = tol::rel_err(got[k].second, head(want, got[k].second.size()));
            EXPECT_LE(e, tol::network_f32) << to_string(act) << " mb" << mb << " " << names[k];
            worst = std::max(worst, e);
        }
        std::printf("  resnet18 %s mb%ld: worst stage error vs PyTorch float64 %.3g (tol %g)\n", to_string(act),
                long(mb), worst, tol::network_f32);
    }
}

TEST(TorchResnet, BottleneckMatchesPyTorchInEveryLayout) {
    SKIP_WITHOUT_TORCH();
    const torch_data::array_t y64 = torch_data::load("bottleneck", "y64"), y32 = torch_data::load("bottleneck", "y32");
    std::vector<float> plain;
    for (const ft act : {ft::nchw, ft::nChw16c, ft::nChw8c, ft::nhwc}) {
        const auto block = nets::residual_block::bottleneck(
                "", 2, 15, 15, 32, 16, 2, nets::options_for(act), case_params("bottleneck"));
        ASSERT_EQ(block.dst_desc().dims(), to_dims(y64.dims));
        const tensor src = act == ft::nchw ? case_input("bottleneck", 2, act)
                                           : reorder(case_input("bottleneck", 2, ft::nchw), act);
        const std::vector<float> got = dense_values(block(src));
        const double e64 = tol::rel_err(got, y64.data), e32 = tol::rel_err(got, y32.data);
        std::printf("  bottleneck %s: max err vs PyTorch float64 %.3g, float32 %.3g (tol %.3g)\n", to_string(act), e64,
                e32, tol::network);
        EXPECT_LE(e64, tol::network) << to_string(act);
        EXPECT_LE(e32, tol::network) << to_string(act);
        if (act == ft::nchw) plain = got;
        else EXPECT_LE(tol::rel_err(got, plain), tol::network) << to_string(act) << " vs nchw";
    }
}

TEST(TorchResnet, BadParametersAndLayoutsAreNamed) {
    SKIP_WITHOUT_TORCH();
    const nets::param_source good = case_params("bottleneck");
    const nets::param_source bad = [&](const std::string &name, const dims_t &dims) {
        std::vector<float> v = good(name, dims);
        if (name == "bn2.running_var") v.pop_back();
        return v;
    };
    try {
        nets::residual_block::bottleneck("", 2, 15, 15, 32, 16, 2, nets::options_for(ft::nchw), bad);
        ADD_FAILURE() << "expected std::runtime_error";
    } catch (const std::runtime_error &e) {
        EXPECT_NE(std::string(e.what()).find("bn2.running_var has 15 values, expected 16"), std::string::npos)
                << e.what();
    }
    expect_error(status::invalid_arguments, {"options_for", "ncdhw"}, [] { nets::options_for(ft::ncdhw); });
}
