// SPDX-License-Identifier: Apache-2.0
// blockdnn-bench end to end on tiny problems of every op: each checked against the reference
// on every ISA the machine has, unsupported problems listed with their reason, the CSV file
// written and read back; the embedded defaults all parse; bad ISA words are named.
#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <unistd.h>

#include <gtest/gtest.h>

#include "driver/defaults.hpp"
#include "driver/report.hpp"
#include "driver/runner.hpp"
#include "test_util.hpp"

using namespace bdrv;

namespace {

std::vector<problem_t> read(const std::vector<std::string> &args) {
    batch_reader_t r;
    r.read_args(args);
    return r.problems();
}

run_opts_t check_only() {
    run_opts_t o;
    o.correctness = true;
    o.performance = false;
    o.progress = false;
    o.isas = available_isas(); // ref, avx2, avx512 as the CPU has them
    return o;
}

// check_only() with `reps` timed repetitions per row.
run_opts_t timed(int reps) {
    run_opts_t o = check_only();
    o.performance = true;
    o.reps = reps;
    return o;
}

// Round peaks, so that the rates of a run can be checked against them.
machine_t round_machine() {
    machine_t m;
    m.peak_avx512 = m.peak_avx2 = 100;
    m.peak_scalar = 10;
    m.copy_gbps = 10;
    return m;
}

} // namespace

TEST(DriverRun, TinyProblemsOfEveryOpPassOnEveryIsa) {
    isa_guard guard;
    const std::vector<problem_t> p = read({"--conv", "--dir=FWD_B,FWD_D", "mb2ic16ih6oc32oh6kh3ph1", "g8mb1ic8ih5oc8oh5kh3ph1",
            "mb1ic3ih9oc16oh4kh3sh2", "--attr-post-ops=sum:0.5+relu", "mb1ic16iw7oc16ow7kw3pw1", "--bnorm",
            "--dir=FWD_D,FWD_I,BWD_DW", "--flags=,GCHR", "mb2ic19ih3", "--rnn", "--alg=VANILLA_LSTM,LBR_GRU",
            "--direction=left2right,sum", "l2t3mb2sic8", "--pool", "--alg=max,avg_np", "mb2ic16ih5kh3ph1", "--eltwise",
            "--alg=tanh,gelu_erf", "--inplace=false,true", "2x20x3x3"});
    const run_opts_t opts = check_only();
    const std::vector<row_t> rows = run_problems(p, opts, machine_t {});
    ASSERT_EQ(rows.size(), p.size() * opts.isas.size());
    std::map<std::string, int> per_driver;
    for (const row_t &r : rows) {
        EXPECT_EQ(r.status, "passed") << r.driver << " " << r.isa << " " << r.prb << ": " << r.reason << " err " << r.err;
        EXPECT_GE(r.err, 0);
        EXPECT_FALSE(r.impl.empty());
        if (r.isa != "ref" && r.driver != "pool") {
            EXPECT_EQ(r.impl.rfind("jit", 0), 0u) << r.driver << " " << r.prb << " " << r.impl;
        }
        ++per_driver[r.driver];
    }
    EXPECT_EQ(per_driver.size(), 5u);
    EXPECT_EQ(tally(rows).passed, static_cast<int>(rows.size()));
}

TEST(DriverRun, UnsupportedAndInvalidProblemsAreListedWithTheReason) {
    isa_guard guard;
    const std::vector<problem_t> p = read({"--conv", "--dir=BWD_D", "ic3ih5oc4oh5kh3", "--reset", "ic3ih5oc4oh5kh3zz1",
            "--rnn", "l1t2sic16dic8", "--bnorm", "mb100000000ic64ih100"});
    const std::vector<row_t> rows = run_problems(p, check_only(), machine_t {});
    ASSERT_EQ(rows.size(), 4u);
    EXPECT_EQ(rows[3].status, "skipped"); // 2.56 TB: refused before anything is allocated
    EXPECT_NE(rows[3].reason.find("GB of memory"), std::string::npos) << rows[3].reason;
    EXPECT_EQ(rows[0].status, "skipped");
    EXPECT_NE(rows[0].reason.find("--dir=BWD_D"), std::string::npos) << rows[0].reason;
    EXPECT_EQ(rows[1].status, "invalid");
    EXPECT_NE(rows[1].reason.find("unknown key 'zz'"), std::string::npos) << rows[1].reason;
    EXPECT_EQ(rows[2].status, "skipped");
    EXPECT_NE(rows[2].reason.find("projection"), std::string::npos) << rows[2].reason;
    const tally_t t = tally(rows);
    EXPECT_EQ(t.skipped, 3);
    EXPECT_EQ(t.invalid, 1);
}

TEST(DriverRun, FmaPeaksTextSaysWhichIsasTheCpuLacks) {
    machine_t m;
    m.peak_avx512 = 271.26;
    m.peak_avx2 = 135.94;
    EXPECT_EQ(m.fma_peaks_text(), "avx512 271.3 GFLOP/s, avx2 135.9 GFLOP/s");
    m.peak_avx512 = 0;
    EXPECT_EQ(m.fma_peaks_text(), "avx512 (not on this CPU), avx2 135.9 GFLOP/s");
    m.peak_avx2 = 0;
    EXPECT_EQ(m.fma_peaks_text(), "avx512 (not on this CPU), avx2 (not on this CPU)");
}

// A convolution counts only the taps inside its input (conv_desc::flops, benchdnn's count). One
// whose every tap falls on padding does no FLOPs and still reports GFLOP/s (0), not GB/s.
TEST(DriverRun, ConvRatesCountOnlyTapsInsideTheInput) {
    isa_guard guard;
    const run_opts_t opts = timed(1);
    const machine_t m = round_machine();
    const std::vector<problem_t> p = read({"--conv", "mb1ic16ih1oc16oh2kh1sh2ph1", "mb1ic16ih7oc16oh7kh3ph1"});
    const std::vector<row_t> rows = run_problems(p, opts, m);
    ASSERT_EQ(rows.size(), 2 * opts.isas.size());
    for (const row_t &r : rows) {
        ASSERT_EQ(r.status, "passed") << r.prb << " " << r.isa << ": " << r.reason;
        EXPECT_TRUE(r.flops) << r.prb;
        EXPECT_GT(r.ms, 0);
        if (r.prb.find("ih1") != std::string::npos) {
            EXPECT_EQ(r.rate, 0) << r.prb;
        } else { // 2 * 16 * 16 * 19 * 19 FLOPs: per dim the border outputs have 2 taps inside, not 3
            EXPECT_NEAR(r.rate, 2.0 * 16 * 16 * 19 * 19 / (r.ms * 1e-3) * 1e-9, 1e-9 * r.rate) << r.prb;
        }
    }
}

TEST(DriverRun, PerformanceRowsAndCsvRoundTrip) {
    isa_guard guard;
    const run_opts_t opts = timed(2);
    const machine_t m = round_machine();
    const std::vector<problem_t> p = read({"--conv", "mb1ic16ih4oc16oh4kh1n\"a,b c\"", "--bnorm", "mb1ic8ih4",
            "--rnn", "--prop=BWD_DW", "l1t2sic8"});
    const std::vector<row_t> rows = run_problems(p, opts, m);
    char path[] = "/tmp/blockdnn_driver_csvXXXXXX";
    const int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    close(fd);
    write_csv(path, rows);
    const std::vector<std::vector<std::string>> csv = read_csv(path);
    std::remove(path);
    std::ostringstream os; // the same lines through the stream form (--csv=- writes std::cout)
    write_csv(os, rows);
    const std::string text = os.str();
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), static_cast<long>(rows.size() + 1));
    EXPECT_EQ(text.rfind("driver,name,problem,", 0), 0u);
    ASSERT_EQ(csv.size(), rows.size() + 1);
    ASSERT_EQ(csv[0].size(), 16u);
    EXPECT_EQ(csv[0][0], "driver");
    EXPECT_EQ(csv[0][10], "ms");
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const row_t &r = rows[i];
        ASSERT_EQ(csv[i + 1].size(), 16u) << i;
        EXPECT_EQ(csv[i + 1][0], r.driver);
        EXPECT_EQ(csv[i + 1][1], r.name);
        EXPECT_EQ(csv[i + 1][4], r.isa);
        EXPECT_EQ(csv[i + 1][6], r.status);
        if (r.status == "passed") {
            EXPECT_GT(r.ms, 0);
            EXPECT_GT(r.rate, 0);
            EXPECT_GT(std::stod(csv[i + 1][10]), 0);
            EXPECT_EQ(csv[i + 1][12], r.driver == "conv" ? "GFLOP/s" : "GB/s");
        } else {
            EXPECT_EQ(csv[i + 1][10], "");
        }
    }
    EXPECT_EQ(rows[0].name, "a,b c");
    EXPECT_EQ(rows.back().status, "skipped");
    EXPECT_NE(csv.back()[7].find("--prop=BWD_DW"), std::string::npos);
}

// The CSV of a few rows fits the stream's buffer, so a full disk (/dev/full) shows only when
// the file is closed; that must still be an error, not "wrote".
TEST(DriverRun, CsvWriteFailureIsAnError) {
    if (access("/dev/full", W_OK) != 0) GTEST_SKIP() << "no writable /dev/full";
    row_t r;
    r.driver = "conv";
    r.name = "mb1ic16ih4oc16oh4kh1";
    r.status = "passed";
    expect_error(blockdnn::status::runtime_error, {"--csv=/dev/full: write failed"},
            [&] { write_csv("/dev/full", {r}); });
}

TEST(DriverRun, EmbeddedDefaultsAllParse) {
    for (const char *text : {quick_defaults, full_defaults}) {
        batch_reader_t r([](const std::string &path) -> std::optional<std::string> {
            if (path == "resnet_50_conv") return std::string(resnet_50_conv);
            if (path == "resnet_50_bnorm") return std::string(resnet_50_bnorm);
            return std::nullopt;
        });
        r.read_text(text, "defaults");
        EXPECT_TRUE(r.notes().empty());
        std::map<std::string, int> n;
        for (const problem_t &p : r.problems()) {
            EXPECT_NO_THROW(EXPECT_TRUE(make_spec(p).has_value())) << p.desc;
            ++n[p.driver];
        }
        EXPECT_EQ(n["conv"], 20);
        EXPECT_GE(n["bnorm"], 18);
        EXPECT_EQ(n["rnn"], 5);
    }
}

TEST(DriverRun, IsaWordsAndGeomean) {
    EXPECT_EQ(parse_isa_list("ref,avx2,avx2"), (std::vector<blockdnn::isa> {blockdnn::isa::scalar, blockdnn::isa::avx2}));
    expect_error(blockdnn::status::invalid_arguments, {"--isa=avx2,sse4", "'sse4'"}, [] { parse_isa_list("avx2,sse4"); });
    // "all" follows the ISA cap (BLOCKDNN_MAX_ISA or set_max_isa), down to ref alone.
    {
        isa_guard guard;
        blockdnn::set_max_isa(blockdnn::isa::avx2);
        const std::vector<blockdnn::isa> all = parse_isa_list("all");
        EXPECT_EQ(std::count(all.begin(), all.end(), blockdnn::isa::avx512_core), 0);
        blockdnn::set_max_isa(blockdnn::isa::scalar);
        EXPECT_EQ(parse_isa_list("all"), (std::vector<blockdnn::isa> {blockdnn::isa::scalar}));
    }
    EXPECT_DOUBLE_EQ(geomean({2, 8, 0}), 4);
    EXPECT_DOUBLE_EQ(geomean({}), 0);
}

// blockdnn-bench checks --csv and --plot before the run (it exits 2 with this reason).
TEST(DriverRun, OutputPathsAreCheckedBeforeTheRun) {
    EXPECT_EQ(output_path_problem("--plot", "rates.svg"), "");
    EXPECT_EQ(output_path_problem("--plot", "/tmp/rates.png"), "");
    EXPECT_EQ(output_path_problem("--csv", "/tmp/rows.csv"), "");
    EXPECT_EQ(output_path_problem("--plot", "rates.pdf"), "--plot=rates.pdf: the file name must end in .svg or .png");
    EXPECT_EQ(output_path_problem("--plot", ".svg"), "--plot=.svg: the file name must end in .svg or .png");
    EXPECT_EQ(output_path_problem("--csv", "/nonexistent-blockdnn/rows.csv"),
            "--csv=/nonexistent-blockdnn/rows.csv: directory /nonexistent-blockdnn does not exist or is not writable");
    EXPECT_EQ(output_path_problem("--plot", "/nonexistent-blockdnn/r.svg"),
            "--plot=/nonexistent-blockdnn/r.svg: directory /nonexistent-blockdnn does not exist or is not writable");
    // The plot's name is quoted into a gnuplot script and a shell command.
    EXPECT_EQ(output_path_problem("--plot", "x';touch INJ;'.svg"),
            "--plot=x';touch INJ;'.svg: the file name may not hold a ' or a control character");
    EXPECT_EQ(output_path_problem("--plot", "a\nb.svg"), "--plot=a\nb.svg: the file name may not hold a ' or a control character");
    EXPECT_EQ(output_path_problem("--csv", "/tmp/"), "--csv=/tmp/: names a directory, not a file");
    EXPECT_EQ(output_path_problem("--csv", "/tmp"), "--csv=/tmp: names a directory, not a file");
    // --csv must not be overwritten by what --plot writes beside the plot.
    EXPECT_EQ(output_paths_clash("r.dat", "r.svg"), "--csv=r.dat is a file --plot=r.svg writes");
    EXPECT_EQ(output_paths_clash("r.gp", "r.svg"), "--csv=r.gp is a file --plot=r.svg writes");
    EXPECT_EQ(output_paths_clash("r.svg", "r.svg"), "--csv=r.svg is a file --plot=r.svg writes");
    EXPECT_EQ(output_paths_clash("./r.dat", "r.svg"), "--csv=./r.dat is a file --plot=r.svg writes");
    EXPECT_EQ(output_paths_clash("/tmp/x/../r.gp", "/tmp/r.png"), "--csv=/tmp/x/../r.gp is a file --plot=/tmp/r.png writes");
    EXPECT_EQ(output_paths_clash("r.csv", "r.svg"), "");
    EXPECT_EQ(output_paths_clash("", "r.svg"), "");
    // --csv=- is standard output: no file to check or to clash with.
    EXPECT_EQ(output_path_problem("--csv", "-"), "");
    EXPECT_EQ(output_paths_clash("-", "-.svg"), "");
    EXPECT_EQ(output_path_problem("--plot", "-"), "--plot=-: the file name must end in .svg or .png");
}
