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
