// SPDX-License-Identifier: Apache-2.0
// Example: the small ResNet trained with PyTorch on Fashion-MNIST (examples/train_fashion_mnist.py)
// run by blockdnn over all 10,000 test images, checked image by image against PyTorch.
//
//   fashion_mnist DIR [--mb=500]      (DIR holds fashion.bdw and fashion_test.bdw)
//
// Every image must get PyTorch's predicted class, unless PyTorch's two best logits are within
// the tolerance of each other (a tie: rounding may pick either); each such case is printed.
// Exit status 0 when every disagreement is a tie, 1 otherwise, 2 on errors.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include <CLI/CLI.hpp>

#include "blockdnn/blockdnn.hpp"
#include "nets/resnet.hpp"
#include "nets/weights_file.hpp"

using namespace blockdnn;

namespace {

// tests/tolerances.hpp's network_f32: logits of float-accumulating convolutions against
// PyTorch's, relative to max(1, |logit|).
constexpr double logits_tolerance = 2e-4;

} // namespace

int main(int argc, char **argv) {
    std::string dir;
    int mb = 500;
    CLI::App app {"blockdnn example: Fashion-MNIST test set through the trained small ResNet"};
    app.add_option("dir", dir, "folder with fashion.bdw and fashion_test.bdw")->required();
    app.add_option("--mb", mb, "images per forward (must divide 10000)")->check(CLI::Range(1, 10000));
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError &e) {
        return app.exit(e) == 0 ? 0 : 2; // --help exits 0; bad arguments 2, as the tools do
    }
    try {
        const nets::weight_store params = nets::weight_store::read(dir + "/fashion.bdw");
        const nets::weight_store test = nets::weight_store::read(dir + "/fashion_test.bdw");
        const nets::named_array &x = test.at("x"), &labels = test.at("labels"), &ref = test.at("logits");
        const dim_t n = x.dims.at(0), h = x.dims.at(2), w = x.dims.at(3);
        const int classes = static_cast<int>(nets::fashion_resnet.num_classes);
        if (n % mb != 0)
            throw std::runtime_error("--mb=" + std::to_string(mb) + " does not divide " + std::to_string(n));

        const nets::resnet net(nets::fashion_resnet, mb, h, w, nets::fastest_options(), params.source());
        std::printf("fashion_mnist: %ld test images, mb %d, input %s, isa %s, threads %d; kernels: %s\n", long(n), mb,
                net.src_desc().str().c_str(), to_string(effective_isa()), get_num_threads(),
                net.impl_summary().c_str());
        const std::size_t image = static_cast<std::size_t>(h * w);
        long correct = 0, correct_torch = 0, disagree = 0, ties = 0;
        double worst = 0;
        const auto t0 = std::chrono::steady_clock::now();
        for (dim_t b = 0; b < n; b += mb) {
            const tensor src(net.src_desc()); // nchw, the images as exported
            std::memcpy(src.f32(), x.data.data() + std::size_t(b) * image, std::size_t(mb) * image * sizeof(float));
            const tensor logits = nets::dense(net.forward(src));
            for (dim_t k = 0; k < mb; ++k) {
                const float *got = logits.f32() + k * classes, *want = ref.data.data() + (b + k) * classes;
                const int label = static_cast<int>(labels.data[std::size_t(b + k)]);
                const int p = nets::argmax(got, classes), q = nets::argmax(want, classes);
                for (int c = 0; c < classes; ++c)
                    worst = std::max(
                            worst, std::fabs(double(got[c]) - want[c]) / std::max(1.0, std::fabs(double(want[c]))));
                correct += p == label;
                correct_torch += q == label;
                if (p == q) continue;
                ++disagree;
                // A tie: PyTorch's logit for blockdnn's class is within tolerance of its best.
                const double gap = double(want[q]) - want[p];
                const bool tie = gap <= 2 * logits_tolerance * std::max(1.0, std::fabs(double(want[q])));
                ties += tie;
                std::printf("  image %ld: blockdnn class %d, PyTorch class %d (label %d), PyTorch logit gap %.3g: %s\n",
                        long(b + k), p, q, label, gap, tie ? "tie within tolerance" : "NOT A TIE");
            }
        }
        const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::printf("blockdnn accuracy %.2f%% (%ld of %ld), PyTorch accuracy %.2f%% (%ld of %ld)\n",
                100.0 * correct / n, correct, long(n), 100.0 * correct_torch / n, correct_torch, long(n));
        std::printf(
                "predictions: %ld of %ld as PyTorch's, %ld differ (%ld ties within tolerance); max logit error %.3g "
                "(tolerance %.0e); %.0f images/s\n",
                long(n) - disagree, long(n), disagree, ties, worst, logits_tolerance, double(n) / secs);
        const bool ok = disagree == ties && worst <= logits_tolerance;
        std::printf("fashion_mnist: %s\n", ok ? "passed" : "FAILED");
        return ok ? 0 : 1;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "fashion_mnist: %s\n", e.what());
        return 2;
    }
}
