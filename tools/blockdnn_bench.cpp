// SPDX-License-Identifier: Apache-2.0
// blockdnn-bench: the benchdnn-style driver and the README's main job. It reads problems in
// oneDNN benchdnn's syntax (command line or --batch files) for conv, bnorm, rnn, pool, eltwise
// and softmax, or runs embedded ResNet-50 / RNN defaults, checks each against the reference and
// times it per ISA (alone, and with --streams as copies on CPU streams against the same copies
// one after another), and prints one table per op with geometric means (tools/driver/).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "blockdnn/blockdnn.hpp"
#include "core/memory.hpp"
#include "driver/baseline_onednn.hpp"
#include "testing/batch.hpp"
#include "driver/defaults.hpp"
#include "driver/machine.hpp"
#include "driver/report.hpp"
#include "driver/runner.hpp"
#include "jit/jit_kernel_cache.hpp"

using namespace blockdnn;

namespace {

const char *footer = R"(PROBLEMS (benchdnn syntax, oneDNN tests/benchdnn/doc/knobs_common.md)
  --conv | --bnorm | --rnn | --pool | --eltwise | --softmax
                                  choose the driver (or it comes from a batch file's
                                  directory name: .../conv/shapes_basic is conv)
  --batch=FILE                    read problems and options from FILE (nested --batch= is
                                  relative to the including file; '#' comments)
  --KEY=V1,V2                     an option for the descriptors after it, one run per value;
                                  --reset clears them. Driver options:
    conv:    --dir=FWD_B|FWD_D|FWD_I --stag/--dtag=any|abx|axb|aBx8b|aBx16b, or a layout's
             name (nchw, nhwc, nChw8c, nChw16c, ...); --wtag=any|abx, or a weights layout's
             name (oihw, goihw, hwio, OIhw16i16o, ...)
             --attr-post-ops=relu|sum[:SCALE]|ALG:ALPHA:BETA joined by '+'
    bnorm:   --dir=FWD_D|FWD_I|BWD_D|BWD_DW --flags=[G][C][H][R] --tag=... --inplace=true|false
    rnn:     --alg=VANILLA_LSTM|VANILLA_GRU|LBR_GRU|VANILLA_RNN --activation=RELU|TANH|LOGISTIC
             --direction=left2right|right2left|concat|sum --prop=FWD_I|FWD_D --tag=tnc:any:tnc
             --l=N --t=N (--skip-nonlinear=true runs the real activations: the
             reference computes them in double)
    pool:    --alg=max|avg_np|avg_p --tag=...
    eltwise: --alg=relu|tanh|logistic|exp|log|elu|gelu_tanh|gelu_erf|swish|clip|linear
             --alpha=F --beta=F --tag=...  (descriptor: dims such as 2x16x28x28)
    softmax: --axis=N (default 1) --tag=... (or --stag=..., with a --dtag of the same layout)
             --inplace=true|false  (descriptor: dims such as 64x1000)
    all:     --dt=f32 and --cfg=f32 (older lists), --mb=N (0: the descriptor's), --match=REGEX
  A problem blockdnn cannot run (backward conv, bf16, LSTM projection...) is listed with the
  reason and counted as skipped; a malformed one as invalid.

STREAMS (--streams=N, performance modes)
  Serving many requests with one model: for each problem and ISA, K copies (--copies=K,
  default 2N: two per stream) share the one op object, each with inputs and outputs of its
  own; copy k runs on stream k % N of blockdnn::make_streams(N), which share out the threads
  (the budgets are printed). Beside it, the same K copies run one after another on all
  threads; the two are timed alternately in the same run (median of --reps each). A table per
  op prints copies/s and the rate of both, the gain (sequential time / streams time) and
  whether every copy's outputs on the streams equal its sequential run's bit for bit (if
  not, the row fails, exit 1).

WITHOUT PROBLEMS
  The embedded defaults: ResNet-50 convolutions (mb 1) and batch normalizations (mb 2) and
  five RNNs, on every ISA the CPU has, correctness and performance. --full: larger minibatches.

EXAMPLES
  blockdnn-bench
  blockdnn-bench --conv mb1ic64ih56oc64oh56kh3ph1 --isa=avx2 --mode=P
  blockdnn-bench --batch=inputs/conv/shapes_resnet_50 --mb=1 --csv=rn50.csv --plot=rn50.svg
  blockdnn-bench --bnorm --dir=FWD_D,BWD_DW --flags=CH mb16ic64ih56 --threads=1
  blockdnn-bench --rnn --alg=VANILLA_GRU --direction=concat l1t10mb2sic256
  blockdnn-bench --softmax --tag=nchw --axis=1 1x21x64x64 --baseline=onednn
  blockdnn-bench --mode=P --streams=2 --copies=8 --rnn --alg=VANILLA_LSTM l1t100mb1sic128
)";

} // namespace

int main(int argc, char **argv) {
    CLI::App app {"blockdnn-bench: benchdnn-style correctness and performance driver for blockdnn\n"
                  "Usage: blockdnn-bench [OPTIONS] [--conv|--bnorm|--rnn|--pool|--eltwise|--softmax] [--KEY=VALUE...] "
                  "[DESCRIPTOR|--batch=FILE]..."};
    app.footer(footer);
    app.allow_extras();
    std::string mode = "CP", isa_list = "all", csv, plot_path, baseline;
    int threads = 0, reps = 5, streams = 0, copies = 0;
    long mb = 0;
    double max_ms = 3000;
    bool full = false, verbose = false, reorders = false, no_progress = false;
    app.add_option("--mode", mode, "C (correctness), P (performance) or CP (both; default)")
            ->check(CLI::IsMember({"C", "P", "CP", "PC"}));
    app.add_option("--isa", isa_list,
            "comma list of avx512, avx2, ref, or all (the JIT ISAs the CPU has under BLOCKDNN_MAX_ISA; default)");
    app.add_option("--threads", threads, "threads (default: all cores)")->check(CLI::Range(1, 1024));
    app.add_option("--mb", mb, "minibatch for every problem, overriding descriptors and files (0: keep)")
            ->check(CLI::Range(0L, 1L << 30));
    app.add_option("--reps", reps, "timed repetitions per problem and ISA (median reported)")
            ->check(CLI::Range(1, 100000));
    app.add_option("--max-ms", max_ms, "stop timing a problem after this many ms (at least one repetition)")
            ->check(CLI::Range(0.0, 1e9))
            ->check(CLI::Validator( // NaN passes the range check
                    [](std::string &v) {
                        return std::isnan(std::strtod(v.c_str(), nullptr)) ? std::string("NaN is not a time")
                                                                           : std::string();
                    },
                    "NOT NAN"));
    app.add_option("--streams", streams,
               "N: also run copies of each problem on N streams sharing out the threads, "
               "against the same copies one after another (performance modes; see STREAMS)")
            ->check(CLI::Range(1, 1024));
    app.add_option("--copies", copies, "K: copies per problem on the streams (default 2N); needs --streams")
            ->check(CLI::Range(1, 4096));
    app.add_option("--csv", csv, "write one row per problem and ISA to FILE (-: standard output, after the report)");
    app.add_option("--plot", plot_path,
            "draw rates per problem and ISA against the peaks into FILE.svg or FILE.png (gnuplot)");
    app.add_option("--baseline", baseline,
               "onednn: time oneDNN beside each convolution and softmax (softmax in plain layouts)")
            ->check(CLI::IsMember({"onednn"}));
    app.add_flag("--full", full, "the embedded defaults at larger minibatches (a longer run)");
    app.add_flag(
            "--reorders", reorders, "also run the reorder round-trip section (nchw <-> nChw16c/8c, mb32 c64 56x56)");
    app.add_flag("-v,--verbose", verbose, "list every problem's status");
    app.add_flag("--no-progress", no_progress, "no progress line on stderr");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError &e) {
        // --help and --version end with 0; every other parse error is a bad argument: 2.
        return app.exit(e) == 0 ? 0 : 2;
    }
    if (copies > 0 && streams == 0) {
        std::fprintf(stderr, "blockdnn-bench: --copies=%d needs --streams=N (the copies run on the streams)\n", copies);
        return 2;
    }
    if (streams > 0 && mode.find('P') == std::string::npos) {
        std::fprintf(stderr, "blockdnn-bench: --streams=%d times problems: give --mode=P or CP, not --mode=%s\n",
                streams, mode.c_str());
        return 2;
    }

    try {
        bdrv::run_opts_t opts;
        opts.correctness = mode.find('C') != std::string::npos;
        opts.performance = mode.find('P') != std::string::npos;
        opts.isas = bdrv::parse_isa_list(isa_list);
        opts.reps = reps;
        opts.max_ms = max_ms;
        opts.mb = mb;
        opts.progress = !no_progress;
        opts.streams = streams;
        opts.copies = copies;
        if (threads > 0) set_num_threads(threads);

        // Output files are checked before the run, not found unwritable after it.
        std::string bad_output;
        if (!csv.empty()) bad_output = bdrv::output_path_problem("--csv", csv);
        if (bad_output.empty() && !plot_path.empty()) bad_output = bdrv::output_path_problem("--plot", plot_path);
        if (bad_output.empty()) bad_output = bdrv::output_paths_clash(csv, plot_path);
        if (!bad_output.empty()) {
            std::fprintf(stderr, "blockdnn-bench: %s\n", bad_output.c_str());
            return 2;
        }
        // A bad BLOCKDNN_HUGE_PAGES fails every allocation, a bad BLOCKDNN_DENORMALS every op,
        // and a bad BLOCKDNN_KERNEL_CACHE_CAPACITY every JIT kernel: say so once, not per problem.
        (void)blockdnn::impl::huge_pages_enabled();
        (void)blockdnn::get_denormals_mode();
        if (const char *v = std::getenv("BLOCKDNN_KERNEL_CACHE_CAPACITY")) {
            std::size_t capacity = 0;
            std::string why;
            if (!blockdnn::impl::parse_kernel_cache_capacity(v, capacity, why)) {
                std::fprintf(stderr, "blockdnn-bench: BLOCKDNN_KERNEL_CACHE_CAPACITY: %s\n", why.c_str());
                return 2;
            }
        }

        // Problems: the command line's, or the embedded defaults (whose includes are embedded).
        bdrv::batch_reader_t reader([&](const std::string &path) -> std::optional<std::string> {
            if (path == "resnet_50_conv") return std::string(bdrv::resnet_50_conv);
            if (path == "resnet_50_bnorm") return std::string(bdrv::resnet_50_bnorm);
            return std::nullopt;
        });
        const std::vector<std::string> args = app.remaining();
        bdrv::batch_reader_t file_reader;
        bdrv::batch_reader_t &r = args.empty() ? reader : file_reader;
        if (args.empty()) r.read_text(full ? bdrv::full_defaults : bdrv::quick_defaults, "defaults");
        else r.read_args(args);
        if (r.problems().empty()) {
            std::fprintf(
                    stderr, "blockdnn-bench: no problems given (descriptors after --conv etc., or --batch=FILE)\n");
            return 2;
        }
        const std::vector<bdrv::problem_t> problems = bdrv::matched_problems(r.problems());
        if (problems.empty()) {
            std::fprintf(
                    stderr, "blockdnn-bench: --match leaves none of the %zu problems to run\n", r.problems().size());
            return 2;
        }

        bdrv::print_cpu(stdout);
        // The peaks divide the timed rows only: a correctness run (--mode=C) does not measure them.
        bdrv::machine_t m;
        m.threads = get_num_threads();
        if (opts.performance) {
            m = bdrv::measure_machine(m.threads);
            std::printf("peaks: FMA per core %s; memcpy %.1f GB/s with %d thread%s\n", m.fma_peaks_text().c_str(),
                    m.copy_gbps, m.threads, m.threads == 1 ? "" : "s");
        }
        std::printf("problems: %zu, ISAs:", problems.size());
        for (isa l : opts.isas) std::printf(" %s", bdrv::isa_word(l));
        std::printf(", mode %s, %d thread%s, %d reps\n", mode.c_str(), m.threads, m.threads == 1 ? "" : "s", reps);
        if (streams > 0) {
            const int n = copies > 0 ? copies : 2 * streams;
            std::printf("streams: %d, threads per stream %s (make_streams(%d) of %d), %d cop%s of each problem\n",
                    streams, bdrv::stream_budgets(streams).c_str(), streams, m.threads, n, n == 1 ? "y" : "ies");
        }
        for (const std::string &n : r.notes()) std::printf("note: %s\n", n.c_str());
        std::fflush(stdout);

        bdrv::baseline_t base;
        if (!baseline.empty()) {
            std::string why;
            base = bdrv::onednn_baseline(opts.isas, why);
            if (!base) std::printf("note: no oneDNN baseline: %s\n", why.c_str());
        }

        const std::vector<bdrv::row_t> rows = bdrv::run_problems(problems, opts, m, base);
        bdrv::print_report(stdout, rows, m, verbose);
        const bdrv::tally_t counts = bdrv::tally(rows);
        int failures = counts.failed;
        if (!csv.empty()) {
            std::fflush(stdout); // the report first, then the CSV when it goes to standard output
            bdrv::write_csv(csv, rows);
            if (csv != "-") std::printf("wrote %s\n", csv.c_str());
        }
        if (!plot_path.empty()) {
            const std::string why = bdrv::plot(plot_path, rows, m);
            if (why.empty()) std::printf("wrote %s\n", plot_path.c_str());
            else std::printf("note: %s\n", why.c_str());
        }
        if (reorders) failures += bdrv::reorder_report(stdout, {32, 64, 56, 56}, 20);
        // A failed check is 1; malformed problems (counted invalid) are bad arguments: 2.
        return failures ? 1 : counts.invalid ? 2 : 0;
    } catch (const error &e) {
        std::fprintf(stderr, "blockdnn-bench: %s\n", e.what());
        return 2;
    }
}
