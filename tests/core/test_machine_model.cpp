// SPDX-License-Identifier: Apache-2.0
// The machine model: what it takes from cpuinfo and from the FMA probe (and what it refuses of
// the probe), its invariants, and the override's scope, and that brgemm's init_conf follows the
// model in force (conv's and bnorm's: their own tests,
// tests/ops/conv/test_conv_machine_model.cpp and tests/ops/bnorm/test_bnorm_machine_model.cpp).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "core/fma_probe.hpp"
#include "core/isa_assume.hpp"
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
        EXPECT_GE(f.latency, min_fma_latency) << to_string(level);
        EXPECT_LE(f.latency, max_fma_latency) << to_string(level);
        EXPECT_GE(f.pipes, min_fma_pipes) << to_string(level);
        EXPECT_LE(f.pipes, max_fma_pipes) << to_string(level);
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

fma_probe_t probe_of(double ymm_latency, double ymm_per_cycle, double zmm_latency, double zmm_per_cycle) {
    fma_probe_t p;
    p.ymm = {true, ymm_latency, ymm_per_cycle};
    p.zmm = {true, zmm_latency, zmm_per_cycle};
    return p;
}

void expect_unit(const fma_unit_t &u, int latency, int pipes, bool full_width, bool measured) {
    EXPECT_EQ(u.latency, latency);
    EXPECT_EQ(u.pipes, pipes);
    EXPECT_EQ(u.full_width, full_width);
    EXPECT_EQ(u.measured, measured);
}

// The reference unit of `level`, unmeasured.
void expect_reference(const fma_unit_t &u, isa level) {
    const machine_model_t ref;
    const fma_unit_t &r = ref.fma(level);
    expect_unit(u, r.latency, r.pipes, r.full_width, false);
    EXPECT_EQ(u.vlen_bytes, r.vlen_bytes);
}

} // namespace

TEST(MachineModel, ReferenceIsSane) { expect_sane(machine_model_t {}); }

TEST(MachineModel, ThisMachineIsSane) { expect_sane(machine_model()); }

TEST(MachineModel, ThisMachineMeasuresOnlyTheWidthsItHas) {
    const machine_model_t &m = machine_model();
    if (detected_isa() < isa::avx2) {
        EXPECT_FALSE(m.avx2.measured);
    }
    if (detected_isa() < isa::avx512_core) {
        EXPECT_FALSE(m.avx512.measured);
    }
    if (m.avx512.measured) {
        EXPECT_TRUE(m.avx2.measured) << "the 512-bit unit's full_width is measured against the 256-bit rate";
    }
}

// kernelgen assumes an AVX-512 CPU to generate its kernels anywhere; the probe must still run
// nothing the CPU lacks.
TEST(MachineModel, ProbeRunsNoWiderThanTheCpuUnderAnAssumedIsa) {
    for (isa assumed : {isa::scalar, isa::avx2, isa::avx512_core}) {
        assume_cpu_isa(assumed);
        set_max_isa(isa::avx512_core);
        const isa level = probe_isa();
        const isa expected = std::min(assumed, detected_isa());
        reset_max_isa();
        reset_assumed_cpu_isa();
        EXPECT_EQ(level, expected) << to_string(assumed);
    }
    set_max_isa(isa::avx512_core); // whatever BLOCKDNN_MAX_ISA says
    EXPECT_EQ(probe_isa(), effective_isa());
    reset_max_isa();
}

TEST(MachineModel, TakesTheMeasuredFmas) {
    const machine_model_t m = make_machine_model(cpu_features {}, probe_of(4.1, 1.97, 3.8, 1.9));
    expect_unit(m.avx2, 4, 2, true, true);
    expect_unit(m.avx512, 4, 2, true, true);
    EXPECT_EQ(m.avx2.vlen_bytes, 32);
    EXPECT_EQ(m.avx512.vlen_bytes, 64);
    expect_sane(m);

    // Rounded to the nearest cycle and pipe.
    const machine_model_t r = make_machine_model(cpu_features {}, probe_of(4.8, 2.8, 5.2, 2.2));
    expect_unit(r.avx2, 5, 3, true, true);
    expect_unit(r.avx512, 5, 2, true, true);
}

TEST(MachineModel, AmbiguousProbeKeepsTheReference) {
    // Halfway between two whole numbers a measurement would round one way in one process and
    // the other way in the next: the unit is not taken (machine_model() probes again).
    for (const auto &a : {std::pair {4.5, 2.0}, {4.0, 2.4}, {3.7, 2.0}}) {
        const machine_model_t m = make_machine_model(cpu_features {}, probe_of(a.first, a.second, 4, 2));
        SCOPED_TRACE(to_string(m));
        expect_reference(m.avx2, isa::avx2);
        expect_reference(m.avx512, isa::avx512_core);
        const machine_model_t z = make_machine_model(cpu_features {}, probe_of(4, 2, a.first, a.second));
        expect_unit(z.avx2, 4, 2, true, true);
        expect_reference(z.avx512, isa::avx512_core);
    }
}

TEST(MachineModel, HalfRateZmmIsSplitOverThePipes) {
    // A core that issues each 512-bit FMA to two 256-bit pipes: half as many start per cycle,
    // and the unit counts the core's two pipes, as the reference's split unit does.
    const machine_model_t m = make_machine_model(cpu_features {}, probe_of(4, 2, 4, 1.02));
    expect_unit(m.avx512, 4, 2, false, true);
    // From three quarters of the 256-bit rate a 512-bit FMA counts as full width.
    expect_unit(make_machine_model(cpu_features {}, probe_of(4, 2, 4, 1.8)).avx512, 4, 2, true, true);
}

TEST(MachineModel, AbsurdProbeKeepsTheReference) {
    const double nan = std::nan(""), inf = std::numeric_limits<double>::infinity();
    // Each row: the ymm width's latency and FMAs per cycle; the zmm width measured sanely.
    const double absurd[][2] = {{11, 2}, {1.4, 2}, {4, 0.4}, {4, 4.6}, {nan, 2}, {4, inf}, {-4, 2}};
    for (const auto &a : absurd) {
        const machine_model_t m = make_machine_model(cpu_features {}, probe_of(a[0], a[1], 4, 2));
        SCOPED_TRACE(to_string(m));
        expect_reference(m.avx2, isa::avx2);
        // Without a sane 256-bit rate there is no yardstick for full_width.
        expect_reference(m.avx512, isa::avx512_core);
        // The same figures on the zmm width leave a sane ymm width measured.
        const machine_model_t z = make_machine_model(cpu_features {}, probe_of(4, 2, a[0], a[1]));
        expect_unit(z.avx2, 4, 2, true, true);
        expect_reference(z.avx512, isa::avx512_core);
    }
}

TEST(MachineModel, UnmeasuredWidthsKeepTheReference) {
    fma_probe_t p = probe_of(5, 2, 5, 2);
    p.zmm.measured = false;
    const machine_model_t m = make_machine_model(cpu_features {}, p);
    expect_unit(m.avx2, 5, 2, true, true);
    expect_reference(m.avx512, isa::avx512_core);
    p.ymm.measured = false;
    p.zmm.measured = true;
    const machine_model_t n = make_machine_model(cpu_features {}, p);
    expect_reference(n.avx2, isa::avx2);
    expect_reference(n.avx512, isa::avx512_core);
    expect_sane(n);
}

TEST(MachineModel, TextSaysWhatWasMeasured) {
    const std::string ref = to_string(machine_model_t {});
    EXPECT_NE(ref.find("avx2 fma lat4 x2, avx512 fma lat4 x2 split,"), std::string::npos) << ref;
    EXPECT_EQ(ref.find("measured"), std::string::npos) << ref;
    const std::string measured = to_string(make_machine_model(cpu_features {}, probe_of(4, 2, 4, 2)));
    EXPECT_NE(measured.find("avx2 fma lat4 x2 (measured), avx512 fma lat4 x2 full (measured),"), std::string::npos)
            << measured;
}

TEST(MachineModel, TakesTheCachesCpuinfoReports) {
    cpu_features f;
    f.physical_cores = 8;
    f.l1d_bytes = 48 << 10;
    f.l2_bytes = 2 << 20;
    f.l3_bytes = 16 << 20;
    const machine_model_t m = make_machine_model(f, fma_probe_t {});
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
    const machine_model_t m = make_machine_model(f, fma_probe_t {}), ref;
    EXPECT_EQ(m.l1d_bytes, ref.l1d_bytes);
    EXPECT_EQ(m.l2_bytes, ref.l2_bytes);
    EXPECT_EQ(m.l3_bytes, ref.l3_bytes);
    EXPECT_EQ(m.avx512.latency, ref.avx512.latency);
    expect_sane(m);
}

// A CPU with an L3 per chiplet or socket: each core's share is of the cores behind its own L3,
// counted from the logical processors that share it.
TEST(MachineModel, LastLevelShareIsOfTheCoresBehindOneL3) {
    cpu_features f;
    f.physical_cores = 64;
    f.logical_processors = 128;
    f.l3_bytes = 16 << 20;
    f.l3_processors = 16; // 8 cores of 2 threads
    EXPECT_EQ(make_machine_model(f, fma_probe_t {}).l3_share_bytes, 2 << 20);
    f.l3_bytes = 6 << 20;
    f.l3_processors = 3; // 1.5 cores: counted as 2, the smaller share
    EXPECT_EQ(make_machine_model(f, fma_probe_t {}).l3_share_bytes, 3 << 20);
    f.logical_processors = 64;
    f.l3_bytes = 8 << 20;
    f.l3_processors = 4; // 4 cores of 1 thread
    EXPECT_EQ(make_machine_model(f, fma_probe_t {}).l3_share_bytes, 2 << 20);
    f.l3_bytes = 16 << 20;
    f.l3_processors = 1000; // more than the machine: every core shares it
    EXPECT_EQ(make_machine_model(f, fma_probe_t {}).l3_share_bytes, (16 << 20) / 64);
    f.l3_processors = 0; // unknown: likewise
    EXPECT_EQ(make_machine_model(f, fma_probe_t {}).l3_share_bytes, (16 << 20) / 64);
    // A VM whose cpuinfo counts 1 core of 2 logical processors, both behind the L3.
    f.physical_cores = 1;
    f.logical_processors = 2;
    f.l3_processors = 2;
    f.l3_bytes = 2 << 20;
    EXPECT_EQ(make_machine_model(f, fma_probe_t {}).l3_share_bytes, 2 << 20);
}

TEST(MachineModel, LastLevelShareIsCapped) {
    // A VM shown the host's whole L3.
    cpu_features f;
    f.physical_cores = 2;
    f.l3_bytes = 480l << 20;
    const machine_model_t m = make_machine_model(f, fma_probe_t {});
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
