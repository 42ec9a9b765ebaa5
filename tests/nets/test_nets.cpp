// SPDX-License-Identifier: Apache-2.0
// The example nets (examples/nets/): the .bdw weights file, seeded parameters, batch-norm
// folding and sum-fused residual adds against the unfused reference path, ResNet-18/50 and the
// 2-layer LSTM against PyTorch (weights files written by examples/export_torch.py at build
// time), streams against sequential runs, and the Fashion-MNIST example over the whole test set.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <sys/wait.h>

#include <gtest/gtest.h>

#include "blockdnn/blockdnn.hpp"
#include "nets/lstm.hpp"
#include "nets/resnet.hpp"
#include "nets/weights_file.hpp"
#include "common/test_util.hpp"
#include "testing/tolerances.hpp"

using namespace blockdnn;
using ft = format_tag;

namespace {

std::string temp_path(const char *name) {
    return (std::filesystem::temp_directory_path() / (std::string("blockdnn_test_nets_") + name)).string();
}

std::vector<float> values(const tensor &t) {
    const tensor d = nets::dense(t);
    return {d.f32(), d.f32() + d.desc().nelems()};
}

// Seeded input in the net's src layout.
tensor seeded_input(const tensor_desc &d, std::uint64_t seed) {
    const tensor t(d);
    const std::vector<float> v = nets::seeded_params(seed)("input", {d.nelems(), 1});
    std::memcpy(t.f32(), v.data(), v.size() * sizeof(float));
    return t;
}

std::string env(const char *name) {
    const char *v = std::getenv(name);
    return v ? v : "";
}

// A small Bottleneck net (ImageNet stem, two layers) and the Fashion-MNIST net: the two block
// kinds, downsample and identity shortcuts, at sizes the reference convolutions run quickly.
constexpr nets::resnet_config small_bottleneck {true, {1, 1, 0, 0}, 16, 3, 10, true};

void expect_close(const std::vector<float> &got, const std::vector<float> &want, double tol, const std::string &what) {
    const double e = tol::rel_err(got, want);
    std::printf("  %s: max err %.3g (tol %.3g)\n", what.c_str(), e, tol);
    EXPECT_LE(e, tol) << what;
}

} // namespace

TEST(WeightsFile, RoundTripsAndNamesErrors) {
    nets::weight_store s;
    s.add("conv1.weight", {2, 1, 3, 3}, std::vector<float>(18, 0.5f));
    s.add("fc.bias", {3}, {1.f, -2.f, 3.5f});
    s.add("scalar", {}, {7.f});
    const std::string path = temp_path("roundtrip.bdw");
    s.write(path);
    const nets::weight_store r = nets::weight_store::read(path);
    ASSERT_EQ(r.arrays().size(), 3u);
    EXPECT_EQ(r.at("fc.bias").dims, (std::vector<std::int64_t> {3}));
    EXPECT_EQ(r.at("fc.bias").data, (std::vector<float> {1.f, -2.f, 3.5f}));
    EXPECT_EQ(r.at("scalar").data, std::vector<float> {7.f});
    EXPECT_EQ(r.source()("conv1.weight", {2, 1, 3, 3}), std::vector<float>(18, 0.5f));

    const auto throws = [](const std::function<void()> &fn, const std::string &fragment) {
        try {
            fn();
            ADD_FAILURE() << "expected std::runtime_error with " << fragment;
        } catch (const std::runtime_error &e) {
            EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
        }
    };
    throws([&] { r.source()("conv1.weight", {2, 1, 5, 5}); }, "conv1.weight has dims 2x1x3x3, the net wants 2x1x5x5");
    throws([&] { r.at("fc.weight"); }, "no entry fc.weight");
    throws([&] { s.add("x", {2, 2}, {1.f}); }, "x has 1 values");
    // Truncated: every byte count short of the whole file ends inside something.
    const auto size = std::filesystem::file_size(path);
    std::filesystem::resize_file(path, size - 4);
    throws([&] { nets::weight_store::read(path); }, "ends inside");
    {
        std::ofstream f(path, std::ios::binary);
        f << "ONNX";
    }
    throws([&] { nets::weight_store::read(path); }, "magic is not BDNW");
    throws([&] { nets::weight_store::read(temp_path("missing.bdw")); }, "cannot open");
    std::filesystem::remove(path);
}

TEST(Nets, SeededParamsDependOnNameAndSeedOnly) {
    const nets::param_source a = nets::seeded_params(1), b = nets::seeded_params(1), c = nets::seeded_params(2);
    EXPECT_EQ(a("layer1.0.conv1.weight", {4, 4, 3, 3}), b("layer1.0.conv1.weight", {4, 4, 3, 3}));
    EXPECT_NE(a("layer1.0.conv1.weight", {4, 4, 3, 3}), c("layer1.0.conv1.weight", {4, 4, 3, 3}));
    EXPECT_NE(a("layer1.0.conv1.weight", {4, 4, 3, 3}), a("layer1.0.conv2.weight", {4, 4, 3, 3}));
    for (float v : a("bn1.running_var", {64})) EXPECT_TRUE(v >= 0.5f && v < 1.5f) << v;
    for (float v : a("conv1.weight", {8, 2, 1, 1})) EXPECT_LE(std::fabs(v), std::sqrt(1.5f)) << v; // sqrt(3 / fan_in 2)
}

TEST(Nets, FoldedAndFusedNetsMatchTheUnfusedReference) {
    // The reference path: nchw, batch norm as its own op, residual add as a binary op, every
    // op the reference.
    for (const auto &[name, cfg, size] : {std::tuple {"fashion", nets::fashion_resnet, dim_t(28)},
                 std::tuple {"small_bottleneck", small_bottleneck, dim_t(32)}}) {
        const nets::param_source params = nets::seeded_params(7);
        tensor src;
        std::vector<float> want;
        {
            // The reference ops: capped at scalar, where plain layouts would otherwise run the
            // JIT convolutions reordered around them.
            isa_guard guard;
            set_max_isa(isa::scalar);
            nets::net_options unfused = nets::options_for(ft::nchw);
            unfused.fold_bn = unfused.fuse_sum = false;
            const nets::resnet ref(cfg, 2, size, size, unfused, params);
            src = seeded_input(ref.src_desc(), 3);
            want = values(ref.forward(src));
            // Folded + fused, plain layout, reference convolutions: only the folding's rounding
            // differs.
            const nets::resnet folded(cfg, 2, size, size, nets::options_for(ft::nchw), params);
            expect_close(values(folded.forward(src)), want, tol::network, std::string(name) + " nchw folded+fused");
        }
        // Folded, unfused add in a blocked layout.
        for (isa i : available_isas()) {
            if (i == isa::scalar) continue;
            isa_guard guard;
            set_max_isa(i);
            nets::net_options o = nets::fastest_options();
            o.fuse_sum = false;
            const nets::resnet a(cfg, 2, size, size, o, params), b(cfg, 2, size, size, nets::fastest_options(), params);
            EXPECT_EQ(a.src_desc().tag(), ft::nchw); // blocked nets read plain images
            expect_close(values(a.forward(src)), want, tol::network_f32,
                    std::string(name) + " " + to_string(o.act) + " folded, binary add");
            expect_close(values(b.forward(src)), want, tol::network_f32,
                    std::string(name) + " " + to_string(o.act) + " folded+fused; convs " + b.impl_summary());
            EXPECT_EQ(b.impl_summary().find("ref"), std::string::npos) << b.impl_summary();
            // Plain layout on this ISA: the JIT convolutions reordered around (jit:<isa>:plain).
            const nets::resnet plain(cfg, 2, size, size, nets::options_for(ft::nchw), params);
            expect_close(values(plain.forward(src)), want, tol::network_f32,
                    std::string(name) + " nchw folded+fused; convs " + plain.impl_summary());
            EXPECT_NE(plain.impl_summary().find(":plain"), std::string::npos) << plain.impl_summary();
        }
    }
}

TEST(Nets, BlockInputIsNotWrittenAndBadOptionsAreNamed) {
    const nets::param_source params = nets::seeded_params(9);
    const auto block = nets::residual_block::basic("layer1.0.", 1, 6, 6, 16, 16, 1, nets::fastest_options(), params);
    const tensor src = reorder(seeded_input(tensor_desc({1, 16, 6, 6}, ft::nchw), 1), block.src_desc().tag());
    const std::vector<float> before = values(src);
    const tensor out = block(src);
    EXPECT_EQ(values(src), before); // the identity shortcut is copied, not overwritten
    EXPECT_NE(out.data(), src.data());
    nets::net_options o = nets::options_for(ft::nchw);
    o.fold_bn = false;
    expect_error(status::invalid_arguments, {"nets::conv_bn", "residual", "fold_bn"}, [&] {
        nets::conv_bn("conv1", "bn1", 1, 6, 6, {16, 16, 3, 1, 1}, true, o, params, ft::undef, true);
    });
    expect_error(status::invalid_arguments, {"nets::lstm", "layers = 0"}, [&] { nets::lstm(0, 2, 1, 4, 4, params); });
}

TEST(Nets, StreamsGiveTheSequentialResults) {
    const nets::resnet net(nets::fashion_resnet, 1, 28, 28, nets::fastest_options(), nets::seeded_params(11));
    constexpr int n = 3;
    std::vector<tensor> in, seq(n), par(n);
    for (int k = 0; k < n; ++k) in.push_back(seeded_input(net.src_desc(), std::uint64_t(k + 20)));
    for (int k = 0; k < n; ++k) seq[std::size_t(k)] = net.forward(in[std::size_t(k)]);
    {
        std::vector<std::unique_ptr<stream>> ss;
        for (int k = 0; k < n; ++k) ss.push_back(std::make_unique<stream>());
        for (int k = 0; k < n; ++k)
            ss[std::size_t(k)]->submit([&, k] { par[std::size_t(k)] = net.forward(in[std::size_t(k)]); });
        for (auto &s : ss) s->synchronize();
    }
    for (int k = 0; k < n; ++k) {
        ASSERT_FALSE(par[std::size_t(k)].empty());
        EXPECT_EQ(std::memcmp(seq[std::size_t(k)].data(), par[std::size_t(k)].data(),
                          seq[std::size_t(k)].desc().size_bytes()),
                0)
                << "request " << k;
    }
    EXPECT_NE(std::memcmp(seq[0].data(), seq[1].data(), seq[0].desc().size_bytes()), 0); // the inputs differ
}

// ResNet-18 / ResNet-50 at 224x224 with seeded torchvision weights: blockdnn's logits on its
// fastest layout against PyTorch's float32 ones for the file's two reference images.
class NetsTorch : public ::testing::TestWithParam<const char *> {};

TEST_P(NetsTorch, ResnetLogitsMatchPyTorch) {
    const std::string dir = env("BLOCKDNN_TEST_EXAMPLE_WEIGHTS");
    if (dir.empty()) GTEST_SKIP() << "example weights not exported (no python3-torch)";
    const std::string model = GetParam();
    const nets::weight_store file = nets::weight_store::read(dir + "/" + model + ".bdw");
    const nets::named_array &x = file.at("x"), &logits = file.at("logits");
    const dim_t mb = x.dims[0];
    const nets::resnet net(model == "resnet18" ? nets::resnet18 : nets::resnet50, mb, 224, 224, nets::fastest_options(),
            file.source());
    const tensor src(net.src_desc());
    ASSERT_EQ(std::size_t(src.desc().nelems()), x.data.size());
    std::memcpy(src.f32(), x.data.data(), x.data.size() * sizeof(float));
    expect_close(values(net.forward(src)), logits.data, tol::network_f32,
            model + " " + to_string(nets::fastest_options().act) + " vs PyTorch float32 logits; convs "
                    + net.impl_summary());
}

INSTANTIATE_TEST_SUITE_P(Models, NetsTorch, ::testing::Values("resnet18", "resnet50"));

TEST(NetsTorchLstm, TwoLayerLstmMatchesPyTorch) {
    const std::string dir = env("BLOCKDNN_TEST_EXAMPLE_WEIGHTS");
    if (dir.empty()) GTEST_SKIP() << "example weights not exported (no python3-torch)";
    const nets::weight_store file = nets::weight_store::read(dir + "/lstm.bdw");
    const nets::named_array &x = file.at("x"), &y = file.at("logits");
    const dim_t t = x.dims[0], mb = x.dims[1], input = x.dims[2], hidden = y.dims[2];
    const nets::lstm net(2, t, mb, input, hidden, file.source());
    const tensor src(net.src_desc());
    std::memcpy(src.f32(), x.data.data(), x.data.size() * sizeof(float));
    const tensor out = net.forward(src);
    expect_close(
            {out.f32(), out.f32() + out.desc().nelems()}, y.data, tol::rnn, "lstm 2 layers (" + net.impl_names() + ")");
}

// The Fashion-MNIST example over all 10,000 test images (the model is trained at build time by
// examples/train_fashion_mnist.py); it exits 0 when every prediction is PyTorch's or a tie.
TEST(NetsFashionMnist, ExampleReproducesPyTorchOnTheTestSet) {
    const std::string exe = env("BLOCKDNN_TEST_FASHION_EXE"), dir = env("BLOCKDNN_TEST_FASHION_DIR");
    if (exe.empty()) GTEST_SKIP() << "Fashion-MNIST model not trained (needs python3-torch and dataset-fashion-mnist)";
    const std::string out = temp_path("fashion.txt");
    const int rc = std::system((exe + " " + dir + " > " + out + " 2>&1").c_str());
    std::ifstream f(out);
    const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    std::printf("%s", text.c_str());
    EXPECT_EQ(rc, 0) << text;
    EXPECT_NE(text.find("fashion_mnist: passed"), std::string::npos);
    EXPECT_NE(text.find("10000 test images"), std::string::npos);
    std::filesystem::remove(out);
}

// The example programs' command lines: --help exits 0, bad arguments 2 (as the tools do, not
// CLI11's own codes such as 105 or 109), before any model is built or file read.
TEST(NetsExamples, HelpExitsZeroAndBadArgumentsTwo) {
    const std::string resnet = env("BLOCKDNN_TEST_RESNET_EXE"), fashion = env("BLOCKDNN_TEST_FASHION_PROGRAM");
    if (resnet.empty()) GTEST_SKIP() << "examples not built (CLI11 missing)";
    auto exit_code = [](const std::string &cmd) {
        const int rc = std::system((cmd + " > /dev/null 2>&1").c_str());
        return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
    };
    EXPECT_EQ(exit_code(resnet + " --help"), 0);
    EXPECT_EQ(exit_code(resnet + " --model=resnet51"), 2);
    EXPECT_EQ(exit_code(resnet + " --no-such-option"), 2);
    EXPECT_EQ(exit_code(fashion + " --help"), 0);
    EXPECT_EQ(exit_code(fashion), 2); // the data directory is required
    EXPECT_EQ(exit_code(fashion + " /tmp extra_argument"), 2);
}
