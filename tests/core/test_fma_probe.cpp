// SPDX-License-Identifier: Apache-2.0
// The FMA probe (core/fma_probe.hpp) the machine model runs once: it measures the widths the
// CPU has and no other, and on this machine its figures are within the bounds the model takes
// (a shared machine may disturb one probe; three in a row are not all disturbed). The loop it
// shares with the FMA peak: tests/core/test_fma_peak.cpp.
#include <string>

#include <gtest/gtest.h>

#include "blockdnn/isa.hpp"
#include "core/fma_probe.hpp"
#include "core/machine_model.hpp"

using namespace blockdnn;
using namespace blockdnn::impl;

namespace {

bool sane(const fma_width_probe_t &w) {
    return w.measured && w.latency >= min_fma_latency - 0.5 && w.latency <= max_fma_latency + 0.5
            && w.fmas_per_cycle >= min_fma_pipes - 0.5 && w.fmas_per_cycle <= max_fma_pipes + 0.5;
}

} // namespace

TEST(FmaProbe, MeasuresTheWidthsOfTheLevelItIsGiven) {
    const fma_probe_t none = probe_fma(isa::scalar);
    EXPECT_FALSE(none.ymm.measured);
    EXPECT_FALSE(none.zmm.measured);
    if (detected_isa() < isa::avx2) GTEST_SKIP() << "this CPU has no avx2";
    const fma_probe_t ymm = probe_fma(isa::avx2);
    EXPECT_TRUE(ymm.ymm.measured);
    EXPECT_FALSE(ymm.zmm.measured) << "zmm measured below avx512_core";
    EXPECT_GT(ymm.seconds, 0);
}

TEST(FmaProbe, ThisMachineIsWithinTheModelsBounds) {
    const isa level = detected_isa();
    if (level < isa::avx2) GTEST_SKIP() << "this CPU has no avx2";
    std::string tries;
    for (int attempt = 0; attempt < 3; ++attempt) {
        const fma_probe_t p = probe_fma(level);
        EXPECT_EQ(p.zmm.measured, level >= isa::avx512_core) << to_string(p);
        const bool ok = sane(p.ymm) && (level < isa::avx512_core || sane(p.zmm));
        if (ok) {
            // What the model makes of it is measured, not the reference.
            const machine_model_t m = make_machine_model(cpu(), p);
            EXPECT_TRUE(m.avx2.measured) << to_string(m);
            EXPECT_EQ(m.avx512.measured, level >= isa::avx512_core) << to_string(m);
            return;
        }
        tries += " [" + to_string(p) + "]";
    }
    ADD_FAILURE() << "three probes out of bounds:" << tries;
}

TEST(FmaProbe, TextGivesTheRawFigures) {
    fma_probe_t p;
    p.ymm = {true, 4.04, 1.98};
    p.seconds = 0.0012;
    EXPECT_EQ(to_string(p), "ymm lat 4.04 1.98/cycle, zmm -, 1.2 ms");
}

TEST(FmaProbe, LoopCountsItsFmas) {
    const fma_loop_t chain(true, 1, 16), all(false);
    EXPECT_EQ(chain.fmas_per_iter(), 16);
    EXPECT_EQ(chain.n_vregs(), 3);
    EXPECT_EQ(chain.flops_per_iter(), 2.0 * 16 * 16);
    EXPECT_EQ(all.fmas_per_iter(), 14);
    EXPECT_EQ(all.n_vregs(), 16);
}
