// SPDX-License-Identifier: Apache-2.0
// The machine model: what it takes from cpuinfo, its invariants, and the override's scope, and
// that brgemm's init_conf follows the model in force (conv's and bnorm's: their own tests,
// tests/ops/conv/test_conv_machine_model.cpp and tests/ops/bnorm/test_bnorm_machine_model.cpp).
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "core/machine_model.hpp"
#include "jit/brgemm/brgemm_conf.hpp"
#include "jit/isa_traits.hpp"

using namespace blockdnn;
using namespace blockdnn::impl;

namespace {

void expect_sane(const machine_model_t &m) {
    for (isa level : {isa::avx2, isa::avx512_core}) {
        const fma_unit_t &f = m.fma(level);
        EXPECT_EQ(f.vlen_bytes, vlen_of(level)) << to_string(level);
        EXPECT_GE(f.latency, 1) << to_string(level);
        EXPECT_GE(f.pipes, 1) << to_string(level);
    }
    EXPECT_TRUE(m.avx2.full_width);
    EXPECT_GE(m.load_ports, 1);
    EXPECT_GE(m.load_port_bytes, 16);
    EXPECT_GE(m.l2_bytes_per_cycle, 1);
    EXPECT_GT(m.l1d_bytes, 0);
    EXPECT_GT(m.l2_bytes, 0);
    EXPECT_GT(m.l3_bytes, 0);
    EXPECT_GE(m.cores, 1);
    EXPECT_GT(m.l3_share_bytes, 0);
    EXPECT_LE(m.l3_share_bytes, l3_share_cap_bytes);
    EXPECT_LE(m.l3_share_bytes, m.l3_bytes);
}

// The conf of a brgemm, as a string, under the model in force.
std::string brgemm_conf_str(isa level) {
    brgemm_conf_t c;
    std::string why;
    EXPECT_EQ(init_conf_brgemm(c, level, 64, 64, 64, 64, 64, 64, 1.f, 0.f, why), status::success) << why;
    return to_string(c);
}

} // namespace

TEST(MachineModel, ReferenceIsSane) { expect_sane(machine_model_t {}); }

TEST(MachineModel, ThisMachineIsSane) { expect_sane(machine_model()); }

TEST(MachineModel, TakesTheCachesCpuinfoReports) {
    cpu_features f;
    f.physical_cores = 8;
    f.l1d_bytes = 48 << 10;
    f.l2_bytes = 2 << 20;
    f.l3_bytes = 16 << 20;
    const machine_model_t m = make_machine_model(f);
    EXPECT_EQ(m.l1d_bytes, 48 << 10);
    EXPECT_EQ(m.l2_bytes, 2 << 20);
    EXPECT_EQ(m.l3_bytes, 16 << 20);
    EXPECT_EQ(m.cores, 8);
    EXPECT_EQ(m.l3_share_bytes, 2 << 20);
    // Conv and GEMM keep cutting their blocks for the reference caches.
    EXPECT_EQ(m.blocking_l1d_bytes, machine_model_t {}.blocking_l1d_bytes);
    EXPECT_EQ(m.blocking_l2_bytes, machine_model_t {}.blocking_l2_bytes);
    expect_sane(m);
}

TEST(MachineModel, WhatCpuinfoDoesNotReportStaysTheReference) {
    cpu_features f;
    const machine_model_t m = make_machine_model(f), ref;
    EXPECT_EQ(m.l1d_bytes, ref.l1d_bytes);
    EXPECT_EQ(m.l2_bytes, ref.l2_bytes);
    EXPECT_EQ(m.l3_bytes, ref.l3_bytes);
    EXPECT_EQ(m.avx512.latency, ref.avx512.latency);
    expect_sane(m);
}

TEST(MachineModel, LastLevelShareIsCapped) {
    // A VM shown the host's whole L3.
    cpu_features f;
    f.physical_cores = 2;
    f.l3_bytes = 480l << 20;
    const machine_model_t m = make_machine_model(f);
    EXPECT_EQ(m.l3_bytes, 480l << 20);
    EXPECT_EQ(m.l3_share_bytes, l3_share_cap_bytes);
}

TEST(MachineModel, MadeOnceForAllThreads) {
    std::vector<const machine_model_t *> seen(4);
    std::vector<std::thread> ts;
    for (int i = 0; i < 4; ++i) ts.emplace_back([&seen, i] { seen[i] = &machine_model(); });
    for (auto &t : ts) t.join();
    for (const machine_model_t *p : seen) EXPECT_EQ(p, &machine_model());
}

TEST(MachineModel, OverrideHoldsForItsScopeAndNests) {
    const machine_model_t *const before = &machine_model();
    machine_model_t a, b;
    a.l2_bytes = 256 << 10;
    b.l2_bytes = 512 << 10;
    {
        machine_model_override_t oa(a);
        EXPECT_EQ(machine_model().l2_bytes, 256 << 10);
        {
            machine_model_override_t ob(b);
            EXPECT_EQ(machine_model().l2_bytes, 512 << 10);
        }
        EXPECT_EQ(machine_model().l2_bytes, 256 << 10);
    }
    EXPECT_EQ(&machine_model(), before);
}

TEST(MachineModel, OverrideCopiesTheModel) {
    machine_model_t a;
    machine_model_override_t o(a);
    a.l2_bytes = 1;
    EXPECT_EQ(machine_model().l2_bytes, machine_model_t {}.l2_bytes);
}

TEST(MachineModel, BrgemmInitConfFollowsTheModelInForce) {
    machine_model_t slow;
    slow.avx2.latency = slow.avx512.latency = 40; // every accumulator count hides it equally badly
    const machine_model_t ref;

    std::string brgemm_ref, brgemm_slow;
    {
        machine_model_override_t o(ref);
        brgemm_ref = brgemm_conf_str(isa::avx2);
        EXPECT_EQ(brgemm_conf_str(isa::avx2), brgemm_ref) << "a fixed model gives fixed confs";
    }
    {
        machine_model_override_t o(slow);
        brgemm_slow = brgemm_conf_str(isa::avx2);
    }
    EXPECT_NE(brgemm_slow, brgemm_ref);
}
