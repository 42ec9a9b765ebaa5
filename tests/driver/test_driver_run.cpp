// SPDX-License-Identifier: Apache-2.0
// blockdnn-bench end to end on tiny problems of every op: each checked against the reference
// on every ISA the machine has, unsupported problems listed with their reason, the CSV file
// written and read back; the embedded defaults all parse; bad ISA words are named; the streams
// mode runs copies of every op on streams and matches the sequential run bit for bit.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <tuple>

#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "driver/defaults.hpp"
#include "driver/report.hpp"
#include "driver/runner.hpp"
#include "common/test_util.hpp"

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
    const std::vector<problem_t> p = read({"--conv", "--dir=FWD_B,FWD_D", "mb2ic16ih6oc32oh6kh3ph1",
            "g8mb1ic8ih5oc8oh5kh3ph1", "mb1ic3ih9oc16oh4kh3sh2", "--attr-post-ops=sum:0.5+relu",
            "mb1ic16iw7oc16ow7kw3pw1", "--bnorm", "--dir=FWD_D,FWD_I,BWD_DW", "--flags=,GCHR", "mb2ic19ih3", "--rnn",
            "--alg=VANILLA_LSTM,LBR_GRU", "--direction=left2right,sum", "l2t3mb2sic8", "--pool", "--alg=max,avg_np",
            "mb2ic16ih5kh3ph1", "--eltwise", "--alg=tanh,gelu_erf", "--inplace=false,true", "2x20x3x3", "--softmax",
            "--axis=1,3", "--inplace=false,true", "2x20x3x3"});
    const run_opts_t opts = check_only();
    const std::vector<row_t> rows = run_problems(p, opts, machine_t {});
    ASSERT_EQ(rows.size(), p.size() * opts.isas.size());
    std::map<std::string, int> per_driver;
    for (const row_t &r : rows) {
        EXPECT_EQ(r.status, "passed") << r.driver << " " << r.isa << " " << r.prb << ": " << r.reason << " err "
                                      << r.err;
        EXPECT_GE(r.err, 0);
        EXPECT_FALSE(r.impl.empty());
        if (r.isa != "ref" && r.driver != "pool") {
            EXPECT_EQ(r.impl.rfind("jit", 0), 0u) << r.driver << " " << r.prb << " " << r.impl;
        }
        ++per_driver[r.driver];
    }
    EXPECT_EQ(per_driver.size(), 6u);
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

// A problem the library's rules refuse is malformed (invalid, a failing exit), not one that
// cannot run here (skipped): they used to reach the op and count as skipped.
TEST(DriverRun, ProblemsBreakingTheLibrarysRulesAreInvalid) {
    isa_guard guard;
    const std::vector<problem_t> p =
            read({"--eltwise", "--alg=clip", "--alpha=2", "--beta=1", "1x17", "--rnn", "l2t5mb1sic3slc9"});
    const std::vector<row_t> rows = run_problems(p, check_only(), machine_t {});
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows[0].status, "invalid");
    EXPECT_NE(rows[0].reason.find("alpha = 2 exceeds upper bound beta = 1"), std::string::npos) << rows[0].reason;
    EXPECT_EQ(rows[1].status, "invalid");
    EXPECT_NE(rows[1].reason.find("slc = 9 must equal dhc = 3"), std::string::npos) << rows[1].reason;
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
    const std::vector<problem_t> p = read(
            {"--conv", "mb1ic16ih4oc16oh4kh1n\"a,b c\"", "--bnorm", "mb1ic8ih4", "--rnn", "--prop=BWD_DW", "l1t2sic8"});
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
    ASSERT_EQ(csv[0].size(), 22u);
    EXPECT_EQ(csv[0][0], "driver");
    EXPECT_EQ(csv[0][10], "ms");
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const row_t &r = rows[i];
        ASSERT_EQ(csv[i + 1].size(), 22u) << i;
        EXPECT_EQ(csv[i + 1][16], "") << "no streams mode, no streams columns";
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
    expect_error(
            blockdnn::status::runtime_error, {"--csv=/dev/full: write failed"}, [&] { write_csv("/dev/full", {r}); });
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
    EXPECT_EQ(
            parse_isa_list("ref,avx2,avx2"), (std::vector<blockdnn::isa> {blockdnn::isa::scalar, blockdnn::isa::avx2}));
    expect_error(
            blockdnn::status::invalid_arguments, {"--isa=avx2,sse4", "'sse4'"}, [] { parse_isa_list("avx2,sse4"); });
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
    EXPECT_EQ(output_path_problem("--plot", "a\nb.svg"),
            "--plot=a\nb.svg: the file name may not hold a ' or a control character");
    EXPECT_EQ(output_path_problem("--csv", "/tmp/"), "--csv=/tmp/: names a directory, not a file");
    EXPECT_EQ(output_path_problem("--csv", "/tmp"), "--csv=/tmp: names a directory, not a file");
    // --csv must not be overwritten by what --plot writes beside the plot.
    for (auto [csv, plot, problem] : {std::tuple {"r.dat", "r.svg", "--csv=r.dat is a file --plot=r.svg writes"},
                 {"r.gp", "r.svg", "--csv=r.gp is a file --plot=r.svg writes"},
                 {"r.svg", "r.svg", "--csv=r.svg is a file --plot=r.svg writes"},
                 {"./r.dat", "r.svg", "--csv=./r.dat is a file --plot=r.svg writes"},
                 {"/tmp/x/../r.gp", "/tmp/r.png", "--csv=/tmp/x/../r.gp is a file --plot=/tmp/r.png writes"},
                 {"r.csv", "r.svg", ""}, {"", "r.svg", ""}})
        EXPECT_EQ(output_paths_clash(csv, plot), problem) << csv << " " << plot;
    // --csv=- is standard output: no file to check or to clash with.
    EXPECT_EQ(output_path_problem("--csv", "-"), "");
    EXPECT_EQ(output_paths_clash("-", "-.svg"), "");
    EXPECT_EQ(output_path_problem("--plot", "-"), "--plot=-: the file name must end in .svg or .png");
}

// The streams mode through the one op_case path: every op kind (with in-place runs and a sum
// post-op, whose inputs each check refills) on two streams, each copy's outputs equal to its
// sequential run's bit for bit, timed beside it. No timed assertions: only that both ran.
TEST(DriverRun, StreamsModeRunsCopiesOfEveryOpAndMatchesTheSequentialRun) {
    isa_guard guard;
    run_opts_t opts = timed(2);
    opts.streams = 2;
    const std::vector<problem_t> p = read({"--conv", "mb2ic16ih6oc16oh6kh3ph1", "--attr-post-ops=sum:0.5",
            "mb1ic16ih5oc16oh5kh3ph1", "--bnorm", "--dir=FWD_D,BWD_DW", "--inplace=true", "mb2ic19ih3", "--rnn",
            "--alg=VANILLA_LSTM,LBR_GRU", "l1t4mb2sic8", "--pool", "mb2ic16ih5kh3ph1", "--eltwise", "--alg=tanh",
            "--inplace=false,true", "2x20x3x3", "--softmax", "--inplace=false,true", "2x20x3x3"});
    const std::vector<row_t> rows = run_problems(p, opts, round_machine());
    ASSERT_EQ(rows.size(), p.size() * opts.isas.size());
    const std::string budgets = stream_budgets(2);
    EXPECT_EQ(std::count(budgets.begin(), budgets.end(), '+'), 1) << budgets;
    for (const row_t &r : rows) {
        EXPECT_EQ(r.status, "passed") << r.driver << " " << r.isa << " " << r.prb << ": " << r.reason;
        EXPECT_EQ(r.streams, 2) << r.prb;
        EXPECT_EQ(r.copies, 4) << r.prb << ": two per stream by default";
        EXPECT_EQ(r.budgets, budgets);
        EXPECT_GT(r.seq_ms, 0) << r.prb;
        EXPECT_GT(r.streams_ms, 0) << r.prb;
    }
    char *text = nullptr;
    std::size_t size = 0;
    std::FILE *out = open_memstream(&text, &size);
    ASSERT_NE(out, nullptr);
    print_report(out, rows, round_machine(), false);
    std::fclose(out);
    const std::string report(text, size);
    std::free(text);
    for (const char *f :
            {"-- on streams: 4 copies of each problem on 2 streams (threads ", "gain = sequential time / streams time",
                    "seq /s", "streams /s", "bitwise equal", "geomean gain", "streams gain", "copies per problem"})
        EXPECT_NE(report.find(f), std::string::npos) << "the report lacks " << f << "\n" << report;
    EXPECT_EQ(report.find("DIFFER"), std::string::npos) << report;
    std::ostringstream os;
    write_csv(os, rows);
    EXPECT_NE(os.str().find(",streams,stream_threads,copies,seq_ms,streams_ms,streams_gain\n"), std::string::npos);
    EXPECT_NE(os.str().find(",2," + budgets + ",4,"), std::string::npos) << os.str();

    // --copies: any count, also fewer than the streams.
    opts.copies = 1;
    const std::vector<row_t> one = run_problems(read({"--eltwise", "2x20x3x3"}), opts, round_machine());
    for (const row_t &r : one) {
        EXPECT_EQ(r.status, "passed") << r.isa << ": " << r.reason;
        EXPECT_EQ(r.copies, 1);
    }
}

TEST(DriverRun, BitwiseDifferenceNamesTheFirstDifferentValue) {
    EXPECT_EQ(bitwise_difference({{1, 2}, {3}}, {{1, 2}, {3}}), "");
    EXPECT_EQ(bitwise_difference({{1, 2}, {3.5f}}, {{1, 2}, {3}}),
            "output 1 value 0 is 3.5 (0x40600000) on the streams, 3 (0x40400000) alone");
    // Bits, not values: -0 is not 0, and a NaN equals the same NaN.
    EXPECT_NE(bitwise_difference({{-0.f}}, {{0.f}}), "");
    EXPECT_EQ(bitwise_difference({{std::nanf("")}}, {{std::nanf("")}}), "");
    EXPECT_EQ(bitwise_difference({{1}}, {{1}, {2}}), "1 outputs, not 2");
    EXPECT_EQ(bitwise_difference({{1}}, {{1, 2}}), "output 0 has 1 values, not 2");
}

namespace {

// blockdnn-bench itself (meson passes its path in BLOCKDNN_TEST_BENCH), its output and status.
run_result_t run_bench(const std::string &args) {
    return run_command("", std::string(std::getenv("BLOCKDNN_TEST_BENCH")) + " --no-progress " + args);
}

} // namespace

TEST(DriverRun, BenchStreamsOptionPrintsBudgetsAndGainAndNamesBadValues) {
    const char *exe = std::getenv("BLOCKDNN_TEST_BENCH");
    if (!exe) GTEST_SKIP() << "BLOCKDNN_TEST_BENCH not set (run through meson test)";
    // Builds that compile only the test programs (.ci/run's sanitizer phases) lack the tool.
    if (access(exe, X_OK) != 0) GTEST_SKIP() << exe << " is not built in this build directory";
    const run_result_t r = run_bench("--mode=P --reps=1 --streams=2 --copies=3 --eltwise 2x16x4x4 --rnn l1t3mb1sic8");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    for (const char *f : {"streams: 2, threads per stream ", "3 copies of each problem", "-- on streams: 3 copies",
                 "bitwise equal", "gain"})
        EXPECT_NE(r.out.find(f), std::string::npos) << "lacks " << f << "\n" << r.out;
    const run_result_t help = run_bench("--help");
    EXPECT_EQ(help.exit_code, 0);
    for (const char *f : {"--streams", "--copies", "STREAMS (--streams=N", "make_streams(N)"})
        EXPECT_NE(help.out.find(f), std::string::npos) << "help lacks " << f;
    // Usage errors exit 2 and name the value.
    const std::pair<const char *, const char *> bad[] = {{"--streams=0", "Value 0"}, {"--streams=two", "Value two"},
            {"--streams=2 --copies=0", "Value 0"}, {"--copies=3", "--copies=3 needs --streams"},
            {"--streams=2 --mode=C", "--streams=2 times problems: give --mode=P or CP, not --mode=C"}};
    for (const auto &[args, why] : bad) {
        const run_result_t e = run_bench(std::string(args) + " --eltwise 2x3");
        EXPECT_EQ(e.exit_code, 2) << args << ": " << e.out;
        EXPECT_NE(e.out.find(why), std::string::npos) << args << ": " << e.out;
    }
}
