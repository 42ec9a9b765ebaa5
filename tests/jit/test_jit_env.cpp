// SPDX-License-Identifier: Apache-2.0
// The environment modes (BLOCKDNN_VERBOSE, BLOCKDNN_JIT_DUMP, BLOCKDNN_JIT_PROFILE,
// BLOCKDNN_KERNEL_CACHE_CAPACITY), each in a fresh process of tests/jit/jit_env_child.cpp since
// the library reads them once, and the kernelgen and blockdnn-bench tools. meson passes the
// programs' paths in BLOCKDNN_TEST_JIT_ENV_CHILD, BLOCKDNN_TEST_KERNELGEN and BLOCKDNN_TEST_BENCH.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "blockdnn/blockdnn.hpp"
#include "core/memory.hpp"
#include "jit/jit_dump.hpp"
#include "jit_test_util.hpp"

using namespace blockdnn;

namespace {

// Starts every child from a clean slate, whatever the test's own environment holds.
const std::string clean_env = "env -u BLOCKDNN_VERBOSE -u BLOCKDNN_JIT_DUMP -u BLOCKDNN_JIT_DUMP_DIR "
                              "-u BLOCKDNN_JIT_PROFILE -u BLOCKDNN_KERNEL_CACHE_CAPACITY -u BLOCKDNN_MAX_ISA "
                              "-u BLOCKDNN_HUGE_PAGES -u BLOCKDNN_DENORMALS";

std::string program(const char *var) {
    const char *p = std::getenv(var);
    return p ? p : "";
}

// The best JIT ISA here ("" if none).
std::string jit_isa() { return detected_isa() >= isa::avx2 ? to_string(detected_isa()) : ""; }

std::vector<std::string> lines_starting(const std::string &out, const std::string &prefix) {
    std::vector<std::string> v;
    for (const std::string &l : lines_of(out))
        if (l.rfind(prefix, 0) == 0) v.push_back(l);
    return v;
}

std::string read_file(const std::string &path) {
    std::ifstream f(path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

class JitEnv : public ::testing::Test {
protected:
    void SetUp() override {
        child_ = program("BLOCKDNN_TEST_JIT_ENV_CHILD");
        if (child_.empty()) GTEST_SKIP() << "BLOCKDNN_TEST_JIT_ENV_CHILD not set (run through meson test)";
        if (jit_isa().empty()) GTEST_SKIP() << "no JIT ISA on this CPU";
    }
    run_result_t run(const std::string &env, const std::string &args) {
        return run_command(clean_env + " " + env, child_ + " " + args);
    }
    std::string child_;
};

} // namespace

TEST_F(JitEnv, VerbosePrintsOneLinePerExecutedOpAndPerGeneratedKernel) {
    const std::string isa = jit_isa();
    const run_result_t r = run("BLOCKDNN_VERBOSE=1", "gelu_erf 1000");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    // Two ops, one kernel: the second op takes it from the cache.
    const auto jit = lines_starting(r.out, "blockdnn_verbose,jit,");
    ASSERT_EQ(jit.size(), 1u) << r.out;
    const auto f = fields_of(jit[0]);
    ASSERT_EQ(f.size(), 6u) << jit[0];
    EXPECT_EQ(f[2], "jit_eltwise_fwd_gelu_erf");
    EXPECT_EQ(f[3], isa);
    EXPECT_GT(std::stol(f[4]), 0) << "code bytes";
    EXPECT_GE(std::stod(f[5]), 0.0) << "generation ms";
    const auto exec = lines_starting(r.out, "blockdnn_verbose,exec,");
    ASSERT_EQ(exec.size(), 2u) << r.out;
    for (const std::string &l : exec) {
        const auto e = fields_of(l);
        ASSERT_EQ(e.size(), 7u) << l;
        EXPECT_EQ(e[2], "eltwise_fwd");
        EXPECT_EQ(e[3], "jit:" + isa);
        EXPECT_EQ(e[4], isa);
        EXPECT_EQ(e[5], "alg:gelu_erf alpha:0.25 beta:0.75 x:1000");
        EXPECT_GE(std::stod(e[6]), 0.0);
    }
    // The machine model once, with the widest ISA its FMA probe could run: the CPU's, or the cap.
    const auto machine = lines_starting(r.out, "blockdnn_verbose,info,machine,");
    ASSERT_EQ(machine.size(), 1u) << r.out;
    EXPECT_NE(machine[0].find("; fma probe up to " + isa + ": ymm lat "), std::string::npos) << machine[0];
    if (isa == "avx2") {
        EXPECT_NE(machine[0].find(", zmm -, "), std::string::npos) << machine[0];
    }
    if (isa == "avx512_core") {
        const run_result_t capped = run("BLOCKDNN_VERBOSE=1 BLOCKDNN_MAX_ISA=avx2", "gelu_erf 1000");
        const auto line = lines_starting(capped.out, "blockdnn_verbose,info,machine,");
        ASSERT_EQ(line.size(), 1u) << capped.out;
        EXPECT_NE(line[0].find("; fma probe up to avx2: ymm lat "), std::string::npos) << line[0];
        EXPECT_NE(line[0].find(", zmm -, "), std::string::npos) << line[0];
    }
    // Without the cache, each op generates its kernel.
    const run_result_t r0 = run("BLOCKDNN_VERBOSE=1 BLOCKDNN_KERNEL_CACHE_CAPACITY=0", "gelu_erf 1000");
    EXPECT_EQ(lines_starting(r0.out, "blockdnn_verbose,jit,").size(), 2u) << r0.out;
    // Off by default.
    const run_result_t off = run("", "gelu_erf 1000");
    EXPECT_EQ(off.exit_code, 0);
    EXPECT_EQ(off.out.find("blockdnn_verbose"), std::string::npos) << off.out;
    // Level 2 adds why dispatch skipped an implementation.
    if (isa == "avx512_core") {
        const run_result_t d = run("BLOCKDNN_VERBOSE=dispatch BLOCKDNN_MAX_ISA=avx2", "relu 10");
        EXPECT_NE(d.out.find("blockdnn_verbose,dispatch,eltwise_fwd,jit:avx512_core,alg:relu alpha:0.25 beta:0.75 "
                             "x:10,needs avx512_core"),
                std::string::npos)
                << d.out;
    }
}

TEST_F(JitEnv, VerboseLinesOfTheRnn) {
    const std::string isa = jit_isa();
    if (isa.empty()) GTEST_SKIP() << "no JIT ISA";
    const run_result_t r = run("BLOCKDNN_VERBOSE=1", "rnn 3");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    // One op's kernels: the layer GEMM's and the step's brgemm and the LSTM cell; the second op
    // takes them all from the cache.
    const auto jit = lines_starting(r.out, "blockdnn_verbose,jit,");
    ASSERT_EQ(jit.size(), 3u) << r.out;
    int brgemm = 0, cell = 0;
    for (const std::string &l : jit) {
        const auto f = fields_of(l);
        ASSERT_EQ(f.size(), 6u) << l;
        brgemm += f[2] == "jit_brgemm_kernel";
        cell += f[2] == "jit_rnn_cell_fwd_lstm";
        EXPECT_EQ(f[3], isa);
    }
    EXPECT_EQ(brgemm, 2);
    EXPECT_EQ(cell, 1);
    const auto exec = lines_starting(r.out, "blockdnn_verbose,exec,");
    ASSERT_EQ(exec.size(), 2u) << r.out;
    const auto e = fields_of(exec[0]);
    ASSERT_EQ(e.size(), 7u) << exec[0];
    EXPECT_EQ(e[2], "rnn_fwd");
    EXPECT_EQ(e[3], "jit:" + isa);
    EXPECT_EQ(e[5], "lstm:l2r l1t3mb2slc5sic7dhc7dic7 tnc:ldigo:ldigo:tnc");
}

TEST_F(JitEnv, VerboseBnormLines) {
    const std::string isa = jit_isa();
    const run_result_t r = run("BLOCKDNN_VERBOSE=1", "bnorm 20");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    // Four kernels (statistics and normalization, forward and backward), each generated once.
    const auto jit = lines_starting(r.out, "blockdnn_verbose,jit,");
    ASSERT_EQ(jit.size(), 4u) << r.out;
    for (const char *k : {"jit_bnorm_fwd_stats", "jit_bnorm_fwd_norm", "jit_bnorm_bwd_stats", "jit_bnorm_bwd_norm"})
        EXPECT_NE(r.out.find(std::string("blockdnn_verbose,jit,") + k + "," + isa + ","), std::string::npos) << k;
    const auto exec = lines_starting(r.out, "blockdnn_verbose,exec,");
    ASSERT_EQ(exec.size(), 4u) << r.out;
    for (const std::string &l : exec) {
        const auto e = fields_of(l);
        ASSERT_EQ(e.size(), 7u) << l;
        EXPECT_TRUE(e[2] == "bnorm_fwd" || e[2] == "bnorm_bwd") << l;
        EXPECT_EQ(e[3], "jit:" + isa);
        EXPECT_NE(e[5].find("nChw16c:2x20x5x5"), std::string::npos) << l;
    }
    const run_result_t ref = run("BLOCKDNN_VERBOSE=1 BLOCKDNN_MAX_ISA=scalar", "bnorm 20");
    EXPECT_EQ(lines_starting(ref.out, "blockdnn_verbose,jit,").size(), 0u) << ref.out;
    EXPECT_NE(ref.out.find("impl ref ref"), std::string::npos) << ref.out;
}

TEST_F(JitEnv, JitDumpWritesEveryKernelAsKernelgenDoes) {
    char dir[] = "/tmp/blockdnn_jit_dump_XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    const std::string isa = jit_isa();
    const run_result_t r =
            run(std::string("BLOCKDNN_VERBOSE=1 BLOCKDNN_JIT_DUMP=1 BLOCKDNN_JIT_DUMP_DIR=") + dir, "tanh 100");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const std::string stem = std::string(dir) + "/jit_eltwise_fwd_tanh." + isa + ".0";
    const std::string bin = read_file(stem + ".bin"), text = read_file(stem + ".asm");
    const auto jit = lines_starting(r.out, "blockdnn_verbose,jit,");
    ASSERT_EQ(jit.size(), 1u) << r.out;
    EXPECT_EQ(bin.size(), std::stoul(fields_of(jit[0])[4])) << "the .bin holds the whole code";
    EXPECT_EQ(text.rfind("; kernel: jit_eltwise_fwd_tanh\n; isa: " + isa + "\n", 0), 0u) << text.substr(0, 200);
    EXPECT_NE(text.find("; conf: isa=" + isa + " alg=tanh alpha=0.25 beta=0.75"), std::string::npos);
    if (impl::have_disassembler()) {
        EXPECT_NE(text.find("vdivps"), std::string::npos);
    }
    std::remove((stem + ".bin").c_str());
    std::remove((stem + ".asm").c_str());
    // BLOCKDNN_JIT_DUMP=0 writes nothing.
    const run_result_t off = run(std::string("BLOCKDNN_JIT_DUMP=0 BLOCKDNN_JIT_DUMP_DIR=") + dir, "tanh 100");
    EXPECT_EQ(off.exit_code, 0);
    struct stat st;
    EXPECT_NE(stat((stem + ".bin").c_str(), &st), 0);
    EXPECT_EQ(rmdir(dir), 0) << "the dump dir holds only what the test removed";
}

TEST_F(JitEnv, JitProfileNamesKernelsInThePerfMap) {
    const std::string isa = jit_isa();
    const run_result_t r = run("BLOCKDNN_VERBOSE=1 BLOCKDNN_JIT_PROFILE=1", "exp 100");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const auto pid = lines_starting(r.out, "pid ");
    ASSERT_EQ(pid.size(), 1u) << r.out;
    const std::string map = "/tmp/perf-" + pid[0].substr(4) + ".map";
    const std::string text = read_file(map);
    std::remove(map.c_str());
    // "<start> <size> blockdnn:jit_eltwise_fwd_exp:<isa>", start and size in hex.
    unsigned long start = 0, size = 0;
    char name[128] = {};
    ASSERT_EQ(std::sscanf(text.c_str(), "%lx %lx %127s", &start, &size, name), 3) << map << ":\n" << text;
    EXPECT_EQ(std::string(name), "blockdnn:jit_eltwise_fwd_exp:" + isa);
    const auto jit = lines_starting(r.out, "blockdnn_verbose,jit,");
    ASSERT_EQ(jit.size(), 1u);
    EXPECT_EQ(size, std::stoul(fields_of(jit[0])[4])) << "size field = code bytes";
    EXPECT_NE(start, 0u);
}

TEST_F(JitEnv, KernelCacheCapacityFromTheEnvironment) {
    const run_result_t bad = run("BLOCKDNN_KERNEL_CACHE_CAPACITY=abc", "relu 10");
    EXPECT_EQ(bad.exit_code, 2) << bad.out;
    EXPECT_NE(bad.out.find("error eltwise_fwd"), std::string::npos) << bad.out;
    EXPECT_NE(bad.out.find("BLOCKDNN_KERNEL_CACHE_CAPACITY: 'abc'"), std::string::npos) << bad.out;
    const run_result_t one = run("BLOCKDNN_VERBOSE=1 BLOCKDNN_KERNEL_CACHE_CAPACITY=1", "relu 10");
    EXPECT_EQ(one.exit_code, 0) << one.out;
    EXPECT_EQ(lines_starting(one.out, "blockdnn_verbose,jit,").size(), 1u) << one.out;
}

// Problems with the diagnostic switches do not fail ops: each is named once on stderr.
TEST_F(JitEnv, BadVerboseValueAndUnwritableDumpDirAreWarnedOnce) {
    const run_result_t v = run("BLOCKDNN_VERBOSE=3", "relu 10");
    EXPECT_EQ(v.exit_code, 0) << v.out;
    EXPECT_EQ(lines_starting(v.out, "blockdnn: warning: BLOCKDNN_VERBOSE='3' is not 0, 1, 2 or dispatch").size(), 1u)
            << v.out;
    EXPECT_TRUE(lines_starting(v.out, "blockdnn_verbose,").empty()) << v.out;
    EXPECT_EQ(lines_starting(v.out, "impl ").size(), 2u) << v.out;

    const std::string dir = "/nonexistent-blockdnn-dump-dir";
    const run_result_t d = run("BLOCKDNN_JIT_DUMP=1 BLOCKDNN_JIT_DUMP_DIR=" + dir, "tanh 100");
    EXPECT_EQ(d.exit_code, 0) << d.out;
    const auto w = lines_starting(d.out, "blockdnn: warning: BLOCKDNN_JIT_DUMP: ");
    ASSERT_EQ(w.size(), 1u) << d.out;
    EXPECT_NE(w[0].find(dir), std::string::npos) << w[0];
    EXPECT_EQ(lines_starting(d.out, "impl ").size(), 2u) << d.out;
    // With verbose output on, the failure is a verbose line instead.
    const run_result_t dv = run("BLOCKDNN_VERBOSE=1 BLOCKDNN_JIT_DUMP=1 BLOCKDNN_JIT_DUMP_DIR=" + dir, "tanh 100");
    EXPECT_EQ(dv.exit_code, 0) << dv.out;
    EXPECT_TRUE(lines_starting(dv.out, "blockdnn: warning:").empty()) << dv.out;
    EXPECT_EQ(lines_starting(dv.out, "blockdnn_verbose,warning,jit_dump,").size(), 1u) << dv.out;
    // The on/off switches take 0 or 1; another value stays off and is named.
    const run_result_t two = run("BLOCKDNN_JIT_DUMP=2 BLOCKDNN_JIT_DUMP_DIR=" + dir, "tanh 100");
    EXPECT_EQ(two.exit_code, 0) << two.out;
    EXPECT_EQ(
            lines_starting(two.out, "blockdnn: warning: BLOCKDNN_JIT_DUMP='2' is not 0 or 1; it stays off").size(), 1u)
            << two.out;
    EXPECT_TRUE(lines_starting(two.out, "blockdnn: warning: BLOCKDNN_JIT_DUMP: ").empty()) << "no dump attempted";
}

// Tensors of 2 MiB or more start huge_buffer_offset past a huge-page boundary unless
// BLOCKDNN_HUGE_PAGES=0; a bad value is named when the first tensor is allocated, whatever
// its size.
TEST_F(JitEnv, HugePagesFromTheEnvironment) {
    const std::string big = std::to_string((2 << 20) / 4 * 3 + 5), small = "100";
    for (const std::string &env : {std::string(), std::string("BLOCKDNN_HUGE_PAGES=1")}) {
        const run_result_t r = run(env, "tensor " + big);
        EXPECT_EQ(r.exit_code, 0) << env << ": " << r.out;
        EXPECT_EQ(lines_starting(r.out, "offset_in_2m ").at(0),
                "offset_in_2m " + std::to_string(impl::huge_buffer_offset))
                << env;
    }
    for (const std::string &env : {std::string(), std::string("BLOCKDNN_HUGE_PAGES=0")}) {
        const run_result_t r = run(env, "tensor " + small);
        EXPECT_EQ(r.exit_code, 0) << env << ": " << r.out;
        const auto off = lines_starting(r.out, "offset_in_2m ");
        ASSERT_EQ(off.size(), 1u) << r.out;
        EXPECT_EQ(std::stoul(off[0].substr(13)) % 64, 0u) << "64-byte aligned";
    }
    const run_result_t off = run("BLOCKDNN_HUGE_PAGES=0", "tensor " + big);
    EXPECT_EQ(off.exit_code, 0) << off.out;
    for (const std::string &size : {big, small}) {
        const run_result_t bad = run("BLOCKDNN_HUGE_PAGES=yes", "tensor " + size);
        EXPECT_EQ(bad.exit_code, 2) << bad.out;
        EXPECT_NE(bad.out.find("error BLOCKDNN_HUGE_PAGES: 'yes' is not 0 or 1"), std::string::npos) << bad.out;
    }
}

// BLOCKDNN_DENORMALS: flush by default, keep computes the denormal product, and a bad value
// fails the op, naming it.
TEST_F(JitEnv, DenormalsModeFromTheEnvironment) {
    const std::string denormal_product = "result 0x1p-140";
    for (const std::string &env : {std::string(), std::string("BLOCKDNN_DENORMALS=flush")}) {
        const run_result_t r = run(env, "denormals 37");
        EXPECT_EQ(r.exit_code, 0) << env << ": " << r.out;
        EXPECT_EQ(lines_starting(r.out, "mode ").at(0), "mode flush") << env;
        EXPECT_EQ(lines_starting(r.out, "result ").at(0), "result 0x0p+0") << env;
    }
    const run_result_t keep = run("BLOCKDNN_DENORMALS=keep", "denormals 37");
    EXPECT_EQ(keep.exit_code, 0) << keep.out;
    EXPECT_EQ(lines_starting(keep.out, "mode ").at(0), "mode keep");
    EXPECT_EQ(lines_starting(keep.out, "result ").at(0), denormal_product);
    const run_result_t bad = run("BLOCKDNN_DENORMALS=fast", "denormals 37");
    EXPECT_EQ(bad.exit_code, 2) << bad.out;
    EXPECT_NE(bad.out.find("error BLOCKDNN_DENORMALS: 'fast' is not flush or keep"), std::string::npos) << bad.out;
}

namespace {

// A program meson built beside the tests, found through the variable it sets; skipped when
// the tools are not built.
class tool_test : public ::testing::Test {
protected:
    explicit tool_test(const char *var) : var_(var) {}
    void SetUp() override {
        exe_ = program(var_);
        if (exe_.empty()) GTEST_SKIP() << var_ << " not set (tools not built)";
    }
    run_result_t run_tool(const std::string &env, const std::string &args) {
        return run_command(clean_env + " " + env, exe_ + " " + args);
    }
    // A run that must fail with a message holding `what`.
    void expect_refused_run(const std::string &env, const std::string &args, const std::string &what) {
        const run_result_t r = run_tool(env, args);
        EXPECT_NE(r.exit_code, 0) << args;
        EXPECT_NE(r.out.find(what), std::string::npos) << r.out;
    }

private:
    const char *var_;
    std::string exe_;
};

class Kernelgen : public tool_test {
protected:
    Kernelgen() : tool_test("BLOCKDNN_TEST_KERNELGEN") {}
    run_result_t run(const std::string &args) { return run_tool("", args); }
    void expect_refused(const std::string &args, const std::string &what) { expect_refused_run("", args, what); }
};

class BlockdnnBench : public tool_test {
protected:
    BlockdnnBench() : tool_test("BLOCKDNN_TEST_BENCH") {}
    run_result_t run(const std::string &env, const std::string &args) { return run_tool(env, args); }
};

} // namespace

TEST_F(Kernelgen, DisassemblesForEachIsaHeadedByTheConf) {
    for (const char *isa : {"avx512", "avx2"}) {
        const run_result_t r = run(std::string("eltwise --alg=tanh 8x16x56x56 --isa=") + isa);
        ASSERT_EQ(r.exit_code, 0) << r.out;
        const std::string level = std::string(isa) == "avx512" ? "avx512_core" : "avx2";
        EXPECT_NE(r.out.find("; op: eltwise_fwd, impl: jit:" + level
                          + ", problem: alg:tanh alpha:0 beta:0 nchw:8x16x56x56"),
                std::string::npos)
                << r.out.substr(0, 300);
        EXPECT_NE(r.out.find("; conf: isa=" + level + " alg=tanh"), std::string::npos);
        EXPECT_NE(r.out.find("; vector registers:"), std::string::npos);
        if (r.out.find("built without Zydis") != std::string::npos) continue;
        const bool z = level == "avx512_core";
        // An FMA on full-width registers, e.g. "vfmadd231ps zmm0, zmm8, zmm16".
        const std::string fma = z ? "vfmadd231ps zmm" : "vfmadd231ps ymm";
        const std::size_t at = r.out.find(fma);
        ASSERT_NE(at, std::string::npos) << isa;
        const std::string insn = r.out.substr(at, r.out.find('\n', at) - at);
        EXPECT_NE(insn.find(z ? ", zmm" : ", ymm"), std::string::npos) << insn;
        EXPECT_EQ(r.out.find(z ? "ymm" : "zmm"), std::string::npos) << isa << " code uses the other width";
        EXPECT_NE(r.out.find(z ? "kmovw k1" : "vmaskmovps"), std::string::npos) << "tail handling";
    }
}

// kernelgen sets the cap itself: BLOCKDNN_MAX_ISA is its --isa default, an explicit --isa
// that differs says it overrides the variable, and a cap without JIT kernels is refused.
TEST_F(Kernelgen, TakesTheIsaFromBlockdnnMaxIsa) {
    const std::string args = "eltwise --alg=relu 8x16";
    const run_result_t env_avx2 = run_tool("BLOCKDNN_MAX_ISA=avx2", args);
    ASSERT_EQ(env_avx2.exit_code, 0) << env_avx2.out;
    EXPECT_NE(env_avx2.out.find("impl: jit:avx2,"), std::string::npos) << env_avx2.out.substr(0, 300);
    EXPECT_EQ(env_avx2.out.find("overrides"), std::string::npos) << env_avx2.out.substr(0, 300);
    const run_result_t no_env = run(args);
    ASSERT_EQ(no_env.exit_code, 0) << no_env.out;
    EXPECT_NE(no_env.out.find("impl: jit:avx512_core,"), std::string::npos) << no_env.out.substr(0, 300);
    const run_result_t both = run_tool("BLOCKDNN_MAX_ISA=avx2", args + " --isa=avx512");
    ASSERT_EQ(both.exit_code, 0) << both.out;
    EXPECT_NE(both.out.find("impl: jit:avx512_core,"), std::string::npos) << both.out.substr(0, 300);
    EXPECT_NE(both.out.find("kernelgen: --isa=avx512 overrides BLOCKDNN_MAX_ISA=avx2"), std::string::npos)
            << both.out.substr(0, 300);
    const run_result_t same = run_tool("BLOCKDNN_MAX_ISA=avx2", args + " --isa=avx2");
    ASSERT_EQ(same.exit_code, 0) << same.out;
    EXPECT_EQ(same.out.find("overrides"), std::string::npos) << same.out.substr(0, 300);
    // Refused as bad arguments (exit 2), naming the variable and its value; an unknown name
    // even beside --isa, as every program refuses it.
    for (const auto &[env, extra, what] :
            {std::tuple<std::string, std::string, std::string> {
                     "BLOCKDNN_MAX_ISA=scalar", "", "kernelgen: BLOCKDNN_MAX_ISA=scalar leaves no JIT kernel to show"},
                    {"BLOCKDNN_MAX_ISA=sse4", "", "BLOCKDNN_MAX_ISA: isa: unknown ISA name 'sse4'"},
                    {"BLOCKDNN_MAX_ISA=sse4", " --isa=avx2", "BLOCKDNN_MAX_ISA: isa: unknown ISA name 'sse4'"}}) {
        const run_result_t r = run_tool(env, args + extra);
        EXPECT_EQ(r.exit_code, 2) << env << extra << ": " << r.out;
        EXPECT_NE(r.out.find(what), std::string::npos) << env << extra << ": " << r.out;
        EXPECT_EQ(r.out.find("; op:"), std::string::npos) << env << extra << ": " << r.out;
    }
    const run_result_t over_scalar = run_tool("BLOCKDNN_MAX_ISA=scalar", args + " --isa=avx2");
    ASSERT_EQ(over_scalar.exit_code, 0) << over_scalar.out;
    EXPECT_NE(over_scalar.out.find("impl: jit:avx2,"), std::string::npos) << over_scalar.out.substr(0, 300);
    EXPECT_NE(over_scalar.out.find("kernelgen: --isa=avx2 overrides BLOCKDNN_MAX_ISA=scalar"), std::string::npos)
            << over_scalar.out.substr(0, 300);
    // Names in any case, in the variable and in --isa.
    for (const auto &[env, extra] : {std::pair<std::string, std::string> {"BLOCKDNN_MAX_ISA=AVX2", ""},
                 {"", " --isa=AVX2"}, {"BLOCKDNN_MAX_ISA=Avx2", " --isa=AVX2"}}) {
        const run_result_t r = run_tool(env, args + extra);
        ASSERT_EQ(r.exit_code, 0) << env << extra << ": " << r.out;
        EXPECT_NE(r.out.find("impl: jit:avx2,"), std::string::npos) << env << extra << ": " << r.out.substr(0, 300);
        EXPECT_EQ(r.out.find("overrides"), std::string::npos) << env << extra << ": " << r.out.substr(0, 300);
    }
}

TEST_F(Kernelgen, WritesFilesAndTakesBenchdnnSyntax) {
    char dir[] = "/tmp/blockdnn_kernelgen_XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    const run_result_t r =
            run(std::string("eltwise --alg=clip --alpha=-1 --beta=6 --tag=aBx16b 2x17x5x5 --isa=avx2 --out=") + dir);
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const std::string stem = std::string(dir) + "/jit_eltwise_fwd_clip.avx2";
    EXPECT_NE(r.out.find("wrote " + stem + ".bin"), std::string::npos) << r.out;
    const std::string bin = read_file(stem + ".bin"), text = read_file(stem + ".asm");
    EXPECT_GT(bin.size(), 0u);
    EXPECT_NE(text.find("; conf: isa=avx2 alg=clip alpha=-1 beta=6"), std::string::npos) << text.substr(0, 400);
    std::remove((stem + ".bin").c_str());
    std::remove((stem + ".asm").c_str());
    const run_result_t only_bin = run(std::string("eltwise 64 --format=bin --out=") + dir);
    EXPECT_EQ(only_bin.exit_code, 0) << only_bin.out;
    EXPECT_EQ(std::remove((std::string(dir) + "/jit_eltwise_fwd_relu.avx512_core.bin").c_str()), 0);
    EXPECT_EQ(rmdir(dir), 0) << "only the requested files were written";
}

TEST_F(Kernelgen, RnnAndGemm) {
    const run_result_t r = run("rnn --alg=VANILLA_GRU --direction=concat l1t10mb2sic256 --isa=avx2");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    for (const char *f : {"; op: rnn_fwd, impl: jit:avx2, problem: gru:bi_concat l1t10mb2slc256sic256dhc256dic256",
                 "kernels: 5", "; kernel: jit_rnn_cell_fwd_gru", "gru:part1", "gru:part2",
                 "; kernel: jit_brgemm_kernel", "; plan:"})
        EXPECT_NE(r.out.find(f), std::string::npos) << "lacks " << f << "\n" << r.out.substr(0, 600);
    const run_result_t g = run("gemm 100 70 33");
    ASSERT_EQ(g.exit_code, 0) << g.out;
    EXPECT_NE(g.out.find("; op: gemm, impl: jit:avx512_core, problem: M100N70K33"), std::string::npos) << g.out;
    EXPECT_NE(g.out.find("kernels: 2"), std::string::npos) << "a full panel and the N tail";
    EXPECT_NE(g.out.find("n_tail6"), std::string::npos);
    expect_refused("rnn --alg=AUGRU l1t1sic4", "--alg=AUGRU");
    expect_refused("rnn t5mb2", "sic is required");
}

TEST_F(Kernelgen, BnormKernelsFromBenchdnnDescriptors) {
    // Small enough for regular stores on any machine (no streaming-store variant).
    const run_result_t fwd = run("bnorm mb2ic64ih28 --isa=avx512");
    ASSERT_EQ(fwd.exit_code, 0) << fwd.out;
    EXPECT_NE(fwd.out.find("; op: bnorm, impl: jit:avx512_core, problem: mb2ic64ih28 nChw16c, kernels: 2"),
            std::string::npos)
            << fwd.out.substr(0, 300);
    for (const char *k :
            {"; kernel: jit_bnorm_fwd_stats", "; kernel: jit_bnorm_fwd_norm", "; conf: fwd_stats:avx512_core"})
        EXPECT_NE(fwd.out.find(k), std::string::npos) << k;
    // Backward, channels last with a channel tail (100 = 12 x 8 + 4) on avx2: masked tails.
    const run_result_t bwd = run("bnorm --dir=BWD_DW --flags=CHR --tag=axb mb2ic100ih7 --isa=avx2");
    ASSERT_EQ(bwd.exit_code, 0) << bwd.out;
    for (const char *k : {"impl: jit:avx2", "nhwc", "; kernel: jit_bnorm_bwd_stats", "; kernel: jit_bnorm_bwd_norm",
                 ":relu", ":c_tail4"})
        EXPECT_NE(bwd.out.find(k), std::string::npos) << k;
    if (bwd.out.find("built without Zydis") == std::string::npos) {
        EXPECT_NE(bwd.out.find("vmaskmovps"), std::string::npos) << "tail handling";
    }
    // Inference has no statistics kernel; 23 channels in nc split into 16 + a narrower 7.
    const run_result_t inf = run("bnorm --dir=FWD_I --tag=abx ic23 --isa=avx2");
    ASSERT_EQ(inf.exit_code, 0) << inf.out;
    EXPECT_NE(inf.out.find("kernels: 2"), std::string::npos) << inf.out.substr(0, 300);
    EXPECT_EQ(inf.out.find("jit_bnorm_fwd_stats"), std::string::npos);
    expect_refused("bnorm --flags=X mb2ic3ih4", "--flags=X");
    expect_refused("bnorm mb2kh3", "unknown key 'kh'");
}

TEST_F(Kernelgen, SoftmaxLinesLanesAndBlocked) {
    // The axis innermost in memory (nc, axis 1): lines mode.
    const run_result_t lines = run("softmax 64x1000");
    ASSERT_EQ(lines.exit_code, 0) << lines.out;
    for (const char *f : {"; op: softmax_fwd, impl: jit:avx512_core, problem: axis:1 src:nc:64x1000 dst:nc:64x1000,"
                          " kernels: 1",
                 "; mode: lines", "; driver (", "inner=1 lines_per_call=", "; kernel: jit_softmax_fwd_lines",
                 "; conf: isa=avx512_core mode=lines"})
        EXPECT_NE(lines.out.find(f), std::string::npos) << "lacks " << f << "\n" << lines.out.substr(0, 600);
    // Any other axis of a layout where it is not blocked: lanes mode.
    const run_result_t lanes = run("softmax --axis=1 --tag=nchw 1x21x64x64 --isa=avx2");
    ASSERT_EQ(lanes.exit_code, 0) << lanes.out;
    for (const char *f : {"; op: softmax_fwd, impl: jit:avx2, problem: axis:1 src:nchw:1x21x64x64", "; mode: lanes",
                 "len=21 inner=4096 lanes_per_call=", "; kernel: jit_softmax_fwd_lanes", "; conf: isa=avx2 mode=lanes"})
        EXPECT_NE(lanes.out.find(f), std::string::npos) << "lacks " << f << "\n" << lanes.out.substr(0, 600);
    // The kernel depends on the mode and the ISA only: other dims, axis and layout in the same
    // mode give the same code, from its header on.
    auto kernel_part = [](const std::string &out) { return out.substr(std::min(out.find("; kernel:"), out.size())); };
    const run_result_t lines2 = run("softmax --axis=0 7_nsmall");
    ASSERT_EQ(lines2.exit_code, 0) << lines2.out;
    EXPECT_EQ(kernel_part(lines2.out), kernel_part(lines.out));
    const run_result_t lanes2 = run("softmax --axis=0 --tag=aBx8b 3x8x2 --isa=avx2");
    ASSERT_EQ(lanes2.exit_code, 0) << lanes2.out;
    EXPECT_EQ(kernel_part(lanes2.out), kernel_part(lanes.out));
    // A blocked axis runs the kernel in the plain layout, between reorders the driver line names.
    const run_result_t blocked = run("softmax --axis=1 --tag=nChw16c 2x32x4x4");
    ASSERT_EQ(blocked.exit_code, 0) << blocked.out;
    EXPECT_NE(blocked.out.find("src reordered to nchw; dst reordered from nchw; outer=2 len=32 inner=16"),
            std::string::npos)
            << blocked.out.substr(0, 600);
    EXPECT_EQ(kernel_part(blocked.out).substr(0, 200),
            kernel_part(run("softmax --axis=1 --tag=nchw 2x32x4x4").out).substr(0, 200));
    // Files, as for the other ops.
    char dir[] = "/tmp/blockdnn_kernelgen_XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    const run_result_t files = run(std::string("softmax --tag=axb 2x32x4x4 --isa=avx2 --format=asm --out=") + dir);
    EXPECT_EQ(files.exit_code, 0) << files.out;
    const std::string asm_file = std::string(dir) + "/jit_softmax_fwd_lines.avx2.asm";
    EXPECT_NE(read_file(asm_file).find("; conf: isa=avx2 mode=lines"), std::string::npos) << files.out;
    EXPECT_EQ(std::remove(asm_file.c_str()), 0);
    EXPECT_EQ(rmdir(dir), 0) << "only the requested file was written";
    const run_result_t bad_axis = run("softmax --axis=2 64x1000");
    EXPECT_EQ(bad_axis.exit_code, 2) << bad_axis.out;
    EXPECT_NE(bad_axis.out.find("axis = 2 is outside [0, 2)"), std::string::npos) << bad_axis.out;
    expect_refused("softmax --tag=nChw8c 2x3", "nChw8c");
}

TEST_F(Kernelgen, BinaryRowScalarAndRef) {
    // src1 as large as src0 (a residual add): one row of src1 beside each row of dst.
    const run_result_t row = run("binary 8x64x56x56:8x64x56x56");
    ASSERT_EQ(row.exit_code, 0) << row.out;
    for (const char *f : {"; op: binary_fwd, impl: jit:avx512_core, problem: alg:add src0:nchw:8x64x56x56"
                          " src1:nchw:8x64x56x56 dst:nchw:8x64x56x56, kernels: 1",
                 "; mode: row", "; driver (", "rows=1 len=1605632 src1=row", "; kernel: jit_binary_fwd_add\n",
                 "; conf: isa=avx512_core alg=add src1=row post_ops=none"})
        EXPECT_NE(row.out.find(f), std::string::npos) << "lacks " << f << "\n" << row.out.substr(0, 600);
    // A per-channel operand on a plain layout: one src1 value a row of h * w floats.
    const run_result_t scalar = run("binary --alg=mul 8x64x56x56:1x64x1x1 --isa=avx2");
    ASSERT_EQ(scalar.exit_code, 0) << scalar.out;
    for (const char *f : {"; op: binary_fwd, impl: jit:avx2, problem: alg:mul src0:nchw:8x64x56x56 src1:nchw:1x64x1x1",
                 "; mode: scalar", "outer=8 rows=64 len=3136 src1=scalar src1_row_stride=1",
                 "; kernel: jit_binary_fwd_mul_scalar", "; conf: isa=avx2 alg=mul src1=scalar"})
        EXPECT_NE(scalar.out.find(f), std::string::npos) << "lacks " << f << "\n" << scalar.out.substr(0, 600);
    // The kernel depends on the kind, the alg, the post-ops and the ISA only: other dims and
    // layouts of the same kind give the same code, from its header on. The per-channel operand
    // on nhwc is a row kind (a row of c floats); on nChw8c, a broadcast c is a scalar kind.
    auto kernel_part = [](const std::string &out) { return out.substr(std::min(out.find("; kernel:"), out.size())); };
    const run_result_t row2 = run("binary --tag=axb 2x3x4x5:1x3x1x1");
    ASSERT_EQ(row2.exit_code, 0) << row2.out;
    EXPECT_NE(row2.out.find("rows=40 len=3 src1=row"), std::string::npos) << row2.out.substr(0, 600);
    EXPECT_EQ(kernel_part(row2.out), kernel_part(row.out));
    const run_result_t scalar2 = run("binary --alg=MUL --tag=aBx8b 2x16x3x3:2x1x3x3_nname --isa=avx2");
    ASSERT_EQ(scalar2.exit_code, 0) << scalar2.out;
    EXPECT_NE(scalar2.out.find("src0:nChw8c:2x16x3x3 src1:nchw:2x1x3x3"), std::string::npos) << scalar2.out;
    EXPECT_EQ(kernel_part(scalar2.out), kernel_part(scalar.out));
    // Post-ops are part of the kernel (and of its conf).
    const run_result_t po = run("binary --post-ops=sum:1+relu:0:0 8x64x56x56:8x64x56x56");
    ASSERT_EQ(po.exit_code, 0) << po.out;
    EXPECT_NE(po.out.find("; conf: isa=avx512_core alg=add src1=row post_ops=sum:1+relu:0:0"), std::string::npos)
            << po.out.substr(0, 600);
    EXPECT_NE(kernel_part(po.out), kernel_part(row.out));
    // src1 in a layout the kernel cannot read in place: the driver line names its reorder.
    const run_result_t reorder = run("binary --tag=aBx16b --src1-tag=axb 2x20x3x3:1x20x3x3");
    ASSERT_EQ(reorder.exit_code, 0) << reorder.out;
    EXPECT_NE(reorder.out.find("): src1 reordered to nChw16c; outer="), std::string::npos) << reorder.out;
    // A dst with two inner blocks runs ref, which has no JIT kernel: exit 1, saying why.
    const run_result_t ref = run("binary --tag=OIhw16i16o 16x16x3x3:1x16x1x1");
    EXPECT_EQ(ref.exit_code, 1) << ref.out;
    EXPECT_NE(ref.out.find("no JIT kernel for alg:add src0:OIhw16i16o:16x16x3x3"), std::string::npos) << ref.out;
    EXPECT_NE(ref.out.find("dst OIhw16i16o has two inner blocks"), std::string::npos) << ref.out;
    EXPECT_EQ(ref.out.find("; op:"), std::string::npos) << ref.out;
    // Files, as for the other ops.
    char dir[] = "/tmp/blockdnn_kernelgen_XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    const run_result_t files = run(std::string("binary 8x1:8x1 --isa=avx2 --format=asm --out=") + dir);
    EXPECT_EQ(files.exit_code, 0) << files.out;
    const std::string asm_file = std::string(dir) + "/jit_binary_fwd_add.avx2.asm";
    EXPECT_NE(read_file(asm_file).find("; conf: isa=avx2 alg=add src1=row"), std::string::npos) << files.out;
    EXPECT_EQ(std::remove(asm_file.c_str()), 0);
    EXPECT_EQ(rmdir(dir), 0) << "only the requested file was written";
    // Bad arguments: exit 2, naming them.
    const run_result_t bad_alg = run("binary --alg=sub 8x8:8x8");
    EXPECT_EQ(bad_alg.exit_code, 2) << bad_alg.out;
    EXPECT_NE(bad_alg.out.find("--alg=sub is not add or mul"), std::string::npos) << bad_alg.out;
    const run_result_t bad_dims = run("binary 8x64:8x32");
    EXPECT_EQ(bad_dims.exit_code, 2) << bad_dims.out;
    EXPECT_NE(bad_dims.out.find("src1_dims[1] = 32 must be 1 (broadcast) or src0's 64"), std::string::npos)
            << bad_dims.out;
    expect_refused("binary 8x64", "no ':' between src0's and src1's dims");
    expect_refused("binary --src1-tag=nChw8c 2x3:2x3", "nChw8c");
    expect_refused("binary --post-ops=softplus 8x8:8x8", "--post-ops");
}

TEST_F(Kernelgen, HelpAndErrors) {
    const run_result_t help = run("--help");
    EXPECT_EQ(help.exit_code, 0);
    for (const char *f : {"OP DESCRIPTOR", "--isa", "--out", "--format", "eltwise", "--alg=ALG", "aBx16b", "rnn",
                 "gemm", "l1t50mb64sic512slc512dhc512dic512", "softmax", "--axis=N", "jit_softmax_fwd_lanes", "binary",
                 "--src1-tag=TAG", "SRC0DIMS:SRC1DIMS", "jit_binary_fwd_ALG_scalar"})
        EXPECT_NE(help.out.find(f), std::string::npos) << "help lacks " << f;
    expect_refused("eltwise --alg=softplus 8x8", "softplus");
    expect_refused("eltwise 8x0x3", "dims[1] = 0");
    expect_refused("eltwise 64 --format=bin", "--format=bin needs --out");
    EXPECT_NE(run("eltwise 64 --isa=sse4").exit_code, 0);
    // conv: the dispatch table's kernel for the descriptor, headed by its conf.
    const run_result_t conv = run("conv mb1ic64ih56oc64oh56kh3ph1 --isa=avx2");
    EXPECT_EQ(conv.exit_code, 0) << conv.out;
    for (const char *f : {"op: conv_fwd, impl: jit:avx2", "nb_oc_blocking=", "vfmadd231ps"})
        EXPECT_NE(conv.out.find(f), std::string::npos) << "kernelgen conv lacks " << f;
    // dst defaults to a blocked src's layout, not the ISA's: nChw16c under the AVX2 cap.
    const run_result_t c16 = run("conv mb1ic64ih56oc64oh56kh3ph1 --isa=avx2 --stag=nChw16c");
    EXPECT_EQ(c16.exit_code, 0) << c16.out;
    EXPECT_NE(c16.out.find("impl: jit:avx2, problem: src:nChw16c wei:oihw dst:nChw16c"), std::string::npos) << c16.out;
    // 3-D and 1-D problems get weights of their own rank (oidhw, oiw).
    for (const char *d :
            {"conv mb1ic16id5ih5iw5oc16kd3kh3kw3pd1ph1pw1 --isa=avx2", "conv mb1ic16iw9oc16kw3pw1 --isa=avx2"}) {
        const run_result_t r = run(d);
        EXPECT_EQ(r.exit_code, 0) << d << ": " << r.out;
        EXPECT_NE(r.out.find("op: conv_fwd, impl: jit:avx2"), std::string::npos) << d << ": " << r.out;
    }
    const run_result_t dw = run("conv g32mb1ic32ih10oc32oh10kh3ph1 --post-ops=relu:0:0");
    EXPECT_EQ(dw.exit_code, 0) << dw.out;
    EXPECT_NE(dw.out.find("impl: jit:avx512_core:dw"), std::string::npos) << dw.out;
    const run_result_t bad_conv = run("conv mb1ic64ix56oc64kh3");
    EXPECT_EQ(bad_conv.exit_code, 2); // bad arguments exit 2, as in blockdnn-bench
    EXPECT_EQ(run("conv mb1ic16ih5oc16kh3 --no-such-option").exit_code, 2);
    const run_result_t bad_gemm = run("gemm -1 5 5");
    EXPECT_EQ(bad_gemm.exit_code, 2);
    EXPECT_NE(bad_gemm.out.find("M: Value -1 not in range 1"), std::string::npos) << bad_gemm.out;
    const run_result_t bad_po = run("conv mb1ic16ih5oc16kh3 --post-ops=foo");
    EXPECT_EQ(bad_po.exit_code, 2);
    EXPECT_NE(bad_po.out.find("--post-ops: --attr-post-ops=foo"), std::string::npos) << bad_po.out;
    EXPECT_NE(bad_conv.out.find("mb1ic64ix56oc64kh3"), std::string::npos) << bad_conv.out;
    // A missing --out directory is refused before anything is generated or written.
    const run_result_t no_dir = run("conv mb1ic16ih5oc16kh3 --isa=avx2 --out=/nonexistent/blockdnn_dir");
    EXPECT_EQ(no_dir.exit_code, 2) << no_dir.out;
    EXPECT_NE(no_dir.out.find("/nonexistent/blockdnn_dir"), std::string::npos) << no_dir.out;
    EXPECT_EQ(no_dir.out.find("; op:"), std::string::npos) << no_dir.out;
}

// Errors that would hit every problem stop the run up front with exit 2, and a failed write
// of the results is an error too, not "wrote".
TEST_F(BlockdnnBench, RunWideErrorsExitTwo) {
    const run_result_t cache = run("BLOCKDNN_KERNEL_CACHE_CAPACITY=-1", "--conv --mode=C mb1ic16ih7oc16kh3ph1");
    EXPECT_EQ(cache.exit_code, 2) << cache.out;
    EXPECT_NE(cache.out.find("BLOCKDNN_KERNEL_CACHE_CAPACITY: '-1' is not a non-negative decimal integer"),
            std::string::npos)
            << cache.out;
    const run_result_t nan = run("", "--max-ms=nan --conv mb1ic16ih7oc16kh3ph1");
    EXPECT_EQ(nan.exit_code, 2) << nan.out;
    EXPECT_NE(nan.out.find("--max-ms: NaN is not a time"), std::string::npos) << nan.out;
    if (access("/dev/full", W_OK) != 0) return;
    const run_result_t full = run("", "--conv --mode=C mb1ic16ih7oc16kh3ph1 --csv=/dev/full");
    EXPECT_EQ(full.exit_code, 2) << full.out;
    EXPECT_NE(full.out.find("--csv=/dev/full: write failed"), std::string::npos) << full.out;
    EXPECT_EQ(full.out.find("wrote /dev/full"), std::string::npos) << full.out;
}
