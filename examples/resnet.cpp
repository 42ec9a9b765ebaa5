// SPDX-License-Identifier: Apache-2.0
// Example: ResNet-18 / ResNet-50 (torchvision) and a 2-layer LSTM end to end through blockdnn's
// public API: blocked layouts, batch norm folded into the convolutions, residual adds as sum
// post-ops; requests served on several streams beside one after another; images/s per ISA,
// batch and thread count beside PyTorch (dense and to_mkldnn) when python3-torch is installed.
//
//   resnet --model=resnet50 --mb=1 --streams=2              (seeded weights)
//   resnet --model=resnet18 --weights=resnet18.bdw --table      (PyTorch beside: --no-torch to skip)
//   resnet --model=lstm --weights=lstm.bdw
// Weights files (.bdw, format in nets/weights_file.hpp) come from examples/export_torch.py.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "blockdnn/blockdnn.hpp"
#include "nets/lstm.hpp"
#include "nets/resnet.hpp"
#include "nets/weights_file.hpp"

using namespace blockdnn;

namespace {

// How far blockdnn's logits may be from PyTorch's float32 ones, relative to max(1, |logit|):
// tests/tolerances.hpp's network_f32 (JIT convolutions accumulate in float as PyTorch's do).
constexpr double logits_tolerance = 2e-4;

struct options_t {
    std::string model = "resnet50", weights, layout = "auto", isa_cap, python = "/usr/bin/python3";
    std::string torch_script = BLOCKDNN_EXAMPLES_DIR "/torch_time.py";
    int mb = 1, size = 224, streams = 1, threads = 0, iters = 3, t = 16, hidden = 256, input = 128;
    bool table = false, torch = true;
};

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

double max_rel_err(const float *got, const float *want, std::size_t n) {
    double e = 0;
    for (std::size_t i = 0; i < n; ++i) {
        if (std::isnan(got[i])) return INFINITY;
        e = std::max(e, std::fabs(double(got[i]) - want[i]) / std::max(1.0, std::fabs(double(want[i]))));
    }
    return e;
}

// A model behind one interface: the ResNets and the LSTM.
struct model_t {
    virtual ~model_t() = default;
    virtual tensor_desc src_desc() const = 0;
    virtual tensor forward(const tensor &src) const = 0; // dense result
    virtual std::string impls() const = 0;
    virtual double flops() const = 0;
    virtual dim_t items() const = 0;        // images (or sequences) per forward
    virtual std::string layout() const = 0; // of the activations inside
    virtual const char *unit() const { return "images"; }
};

struct resnet_model : model_t {
    nets::resnet net;
    resnet_model(
            const nets::resnet_config &c, dim_t mb, dim_t size, const nets::net_options &o, const nets::param_source &p)
        : net(c, mb, size, size, o, p), act(o.act) {}
    tensor_desc src_desc() const override { return net.src_desc(); }
    tensor forward(const tensor &src) const override { return net.forward(src); }
    std::string impls() const override { return net.impl_summary(); }
    double flops() const override { return net.flops(); }
    dim_t items() const override { return net.src_desc().dim(0); }
    std::string layout() const override { return to_string(act); }
    format_tag act;
};

struct lstm_model : model_t {
    nets::lstm net;
    lstm_model(dim_t t, dim_t mb, dim_t input, dim_t hidden, const nets::param_source &p)
        : net(2, t, mb, input, hidden, p) {}
    tensor_desc src_desc() const override { return net.src_desc(); }
    tensor forward(const tensor &src) const override { return net.forward(src); }
    std::string impls() const override { return net.impl_names(); }
    double flops() const override { return net.flops(); }
    dim_t items() const override { return net.src_desc().dim(1); }
    std::string layout() const override { return "tnc"; }
    const char *unit() const override { return "sequences"; }
};

std::unique_ptr<model_t> make_model(const options_t &o, dim_t mb, const nets::param_source &params) {
    if (o.model == "lstm") return std::make_unique<lstm_model>(o.t, mb, o.input, o.hidden, params);
    const nets::resnet_config c = o.model == "resnet18" ? nets::resnet18 : nets::resnet50;
    nets::net_options opt = nets::fastest_options();
    if (o.layout != "auto") opt = nets::options_for(format_tag_from_string(o.layout));
    return std::make_unique<resnet_model>(c, mb, o.size, opt, params);
}

// Input i of a batch: image/sequence k of the file's "x" (cycled) if there is one, else seeded.
tensor make_input(const model_t &m, const nets::weight_store *file, std::uint64_t seed) {
    const tensor_desc d = m.src_desc();
    const format_tag plain = d.ndims() == 4 ? format_tag::nchw : d.tag();
    const tensor t(tensor_desc(d.dims(), plain));
    const std::size_t n = static_cast<std::size_t>(d.nelems());
    if (file && file->contains("x")) {
        const nets::named_array &x = file->at("x");
        for (std::size_t i = 0; i < n; ++i) t.f32()[i] = x.data[i % x.data.size()];
    } else {
        const std::vector<float> v = nets::seeded_params(seed)("input", {dim_t(n), 1});
        std::memcpy(t.f32(), v.data(), n * sizeof(float));
    }
    return plain == d.tag() ? t : reorder(t, d.tag());
}

// Seconds per forward: the best of `iters` timed runs after one warm-up.
double time_forward(const model_t &m, const tensor &src, int iters) {
    m.forward(src);
    double best = 1e30;
    for (int k = 0; k < iters; ++k) {
        const double t0 = now_s();
        m.forward(src);
        best = std::min(best, now_s() - t0);
    }
    return best;
}

// PyTorch's images/s, dense and to_mkldnn, from examples/torch_time.py; {-1, -1} and a note if
// it cannot run.
std::pair<double, double> torch_rate(const options_t &o, int mb, int threads) {
    std::string cmd = o.python + " " + o.torch_script + " --model=" + o.model + " --mb=" + std::to_string(mb)
            + " --threads=" + std::to_string(threads) + " --size=" + std::to_string(o.size)
            + " --iters=" + std::to_string(o.iters) + " --t=" + std::to_string(o.t)
            + " --input=" + std::to_string(o.input) + " --hidden=" + std::to_string(o.hidden);
    if (!o.weights.empty()) cmd += " --weights=" + o.weights;
    cmd += " 2>/dev/null";
    FILE *p = popen(cmd.c_str(), "r");
    double dense = -1, mkldnn = -1;
    if (p) {
        char line[256];
        while (std::fgets(line, sizeof line, p)) {
            std::sscanf(line, "dense %lf", &dense);
            std::sscanf(line, "mkldnn %lf", &mkldnn);
        }
        pclose(p);
    }
    return {dense, mkldnn};
}

bool have_torch(const options_t &o) {
    const std::string cmd = o.python + " -c 'import torch, torchvision' >/dev/null 2>&1";
    return std::system(cmd.c_str()) == 0;
}

// The table of the issue: images/s at mb 1 and 16, 1 and 2 threads, per ISA, beside PyTorch.
void print_table(const options_t &o, const nets::param_source &params, const nets::weight_store *file) {
    const bool torch = o.torch && have_torch(o);
    if (o.torch && !torch) std::printf("note: PyTorch columns skipped (%s cannot import torch)\n", o.python.c_str());
    std::printf("%s per second:\n%-12s %3s %7s %-10s %12s %12s %12s\n", o.model == "lstm" ? "sequences" : "images",
            "isa", "mb", "threads", "layout", "blockdnn", "torch", "to_mkldnn");
    std::vector<isa> isas;
    for (isa i : {isa::avx512_core, isa::avx2, isa::scalar})
        if (isa_usable(i) && i != isa::scalar) isas.push_back(i);
    for (const int mb : {1, 16}) {
        for (const int threads : {1, 2}) {
            set_num_threads(threads);
            std::pair<double, double> pt {-1, -1};
            if (torch) pt = torch_rate(o, mb, threads);
            for (const isa i : isas) {
                set_max_isa(i);
                const auto m = make_model(o, mb, params);
                const tensor src = make_input(*m, file, 1);
                const double s = time_forward(*m, src, o.iters);
                std::printf("%-12s %3d %7d %-10s %12.1f", to_string(i), mb, threads, m->layout().c_str(),
                        double(m->items()) / s);
                if (torch)
                    for (const double r : {pt.first, pt.second}) {
                        if (r < 0) std::printf(" %12s", "n/a");
                        else std::printf(" %12.1f", r);
                    }
                std::printf("\n");
                std::fflush(stdout);
            }
            reset_max_isa();
        }
    }
    reset_num_threads();
}

// What a correctness check found: passed, failed, or could not check (the reason printed).
enum class check_t { passed, failed, not_checked };

// Logits against PyTorch's ("logits" in the file, for the file's "x" images in order).
check_t check_against_file(const model_t &m, const tensor &out, const nets::weight_store &file) {
    if (!file.contains("logits") || !file.contains("x")) {
        std::printf("correctness: no reference logits in the weights file (export with --reference)\n");
        return check_t::not_checked;
    }
    const nets::named_array &ref = file.at("logits");
    const tensor d = nets::dense(out);
    const std::size_t n_ref = std::size_t(ref.dims[0]), per = ref.data.size() / n_ref;
    double e = 0;
    if (m.src_desc().ndims() == 4) {
        // Image k of the batch is the file's image k % n_ref (make_input cycles them).
        for (std::size_t k = 0; k < std::size_t(m.items()); ++k)
            e = std::max(e, max_rel_err(d.f32() + k * per, ref.data.data() + (k % n_ref) * per, per));
    } else if (d.desc().dims() == dims_t(ref.dims.begin(), ref.dims.end())) {
        e = max_rel_err(d.f32(), ref.data.data(), ref.data.size());
    } else {
        std::printf("correctness: the file's reference output is for another t / mb, not compared\n");
        return check_t::not_checked;
    }
    const bool ok = e <= logits_tolerance;
    std::printf("correctness: %s (max error vs PyTorch %.3g, tolerance %.0e)\n", ok ? "passed" : "FAILED", e,
            logits_tolerance);
    return ok ? check_t::passed : check_t::failed;
}

// Most items the reference-kernel check runs for (about 5 s per ResNet-50 image on one core).
constexpr dim_t max_reference_items = 4;

// Without reference logits: the same forward on the other ISA's kernels (16- vs 8-channel
// blocks, different register blocking) must agree within the tolerance. With one JIT ISA only
// (AVX2 and no AVX-512), the reference kernels (isa scalar) take the other ISA's place, for
// small batches.
check_t check_across_isas(const options_t &o, const model_t &m, const tensor &out, const nets::param_source &params,
        const nets::weight_store *file) {
    const bool both = isa_usable(isa::avx512_core) && isa_usable(isa::avx2);
    if (o.layout != "auto" || effective_isa() == isa::scalar || (!both && m.items() > max_reference_items)) {
        std::printf("correctness: cross-ISA check not run (needs layout auto and avx512_core and avx2, or one JIT ISA "
                    "and at most %lld items for the reference kernels)\n",
                static_cast<long long>(max_reference_items));
        return check_t::not_checked;
    }
    const isa other = !both ? isa::scalar : effective_isa() == isa::avx512_core ? isa::avx2 : isa::avx512_core;
    set_max_isa(other);
    const auto m2 = make_model(o, m.items(), params);
    const tensor out2 = m2->forward(make_input(*m2, file, 1));
    reset_max_isa();
    const tensor a = nets::dense(out), b = nets::dense(out2);
    const double e = max_rel_err(a.f32(), b.f32(), std::size_t(a.desc().nelems()));
    const bool ok = e <= logits_tolerance;
    std::printf("correctness: %s (max difference vs the %s kernels %.3g, tolerance %.0e)\n", ok ? "passed" : "FAILED",
            other == isa::scalar ? "reference (scalar)" : to_string(other), e, logits_tolerance);
    return ok ? check_t::passed : check_t::failed;
}

// Seconds one call of run() takes.
template <typename Run>
double seconds(Run &&run) {
    const double t0 = now_s();
    run();
    return now_s() - t0;
}

// N independent requests served two ways: one after another on all the library's threads, and
// on N streams sharing the threads out (make_streams), each request on its own stream. Beside
// them, one request alone on a stream of each budget the N streams got: the N streams can at
// best run their requests at that speed all at once (min(N, threads) of them when N exceeds
// the threads), the "ideal". Each figure is the best of o.iters rounds, the runs alternating
// within a round. Returns false if a stream result differs from the sequential one.
bool serve_on_streams(const options_t &o, const model_t &m, const nets::weight_store *file) {
    const int n = o.streams, threads = get_num_threads();
    const std::size_t un = static_cast<std::size_t>(n);
    std::vector<tensor> in, seq(un), par(un);
    for (int k = 0; k < n; ++k) in.push_back(make_input(m, file, std::uint64_t(k + 1)));
    const auto streams = make_streams(n);
    // The budgets the streams got, largest first (make_streams gives the extra threads to the
    // first ones), and how many streams have each.
    std::vector<std::pair<int, int>> budgets;
    std::string shares;
    for (const auto &s : streams) {
        shares += (shares.empty() ? "" : "+") + std::to_string(s->threads());
        if (budgets.empty() || budgets.back().first != s->threads()) budgets.push_back({s->threads(), 0});
        ++budgets.back().second;
    }
    std::vector<std::unique_ptr<stream>> alone;
    for (const auto &b : budgets) alone.push_back(std::make_unique<stream>(stream_options {.threads = b.first}));

    const auto sequential = [&] {
        for (std::size_t k = 0; k < un; ++k) seq[k] = m.forward(in[k]);
    };
    // Each request's forward is one operation of its stream: the ops inside run inline on the
    // thread that took it, one after another, their parallel loops split for the stream's
    // budget. (The forward reads no op's output on the host, so `stream_scope on(s);
    // par[k] = m.forward(in[k]);` would queue its ops one by one, correctly too, at the cost of
    // a hand-over between threads after each op.)
    const auto on_streams = [&] {
        for (std::size_t k = 0; k < un; ++k) streams[k]->submit([&, k] { par[k] = m.forward(in[k]); });
        for (const auto &s : streams) s->synchronize();
    };
    on_streams(); // warm-up: the streams' first run
    double best_seq = 1e30, best_par = 1e30;
    std::vector<double> best_alone(alone.size(), 1e30);
    for (int it = 0; it < o.iters; ++it) {
        best_seq = std::min(best_seq, seconds(sequential));
        best_par = std::min(best_par, seconds(on_streams));
        for (std::size_t b = 0; b < alone.size(); ++b)
            best_alone[b] = std::min(best_alone[b], seconds([&] {
                alone[b]->submit([&] { m.forward(in[0]); });
                alone[b]->synchronize();
            }));
    }
    bool same = true;
    for (std::size_t k = 0; k < un; ++k)
        same = same && std::memcmp(seq[k].data(), par[k].data(), seq[k].desc().size_bytes()) == 0;

    const double items = double(m.items()), all = double(n) * items;
    const double seq_rate = all / best_seq, par_rate = all / best_par;
    std::printf("%d requests one after another: %.2f ms, %.1f %s/s\n", n, best_seq * 1e3, seq_rate, m.unit());
    std::printf("%d requests on %d streams (%s threads): %.2f ms, %.1f %s/s, gain %.2fx\n", n, n, shares.c_str(),
            best_par * 1e3, par_rate, m.unit(), par_rate / seq_rate);
    // With more streams than threads only `threads` requests can run at once, on 1 thread each.
    double ideal = 0;
    std::string terms;
    for (std::size_t b = 0; b < budgets.size(); ++b) {
        const int b_threads = budgets[b].first, count = n > threads ? threads : budgets[b].second;
        std::printf("one request on %d thread%s: %.2f ms, %.1f %s/s\n", b_threads, b_threads == 1 ? "" : "s",
                best_alone[b] * 1e3, items / best_alone[b], m.unit());
        ideal += count * items / best_alone[b];
        terms += (terms.empty() ? "" : " + ") + std::to_string(count) + " x one request on " + std::to_string(b_threads)
                + (b_threads == 1 ? " thread" : " threads");
    }
    std::printf("ideal (%s): %.1f %s/s, %.2fx the sequential run; streams reach %.0f%% of it\n", terms.c_str(), ideal,
            m.unit(), ideal / seq_rate, 100.0 * par_rate / ideal);
    std::printf("stream results identical to the sequential run: %s (memcmp)\n", same ? "yes" : "NO");
    return same;
}

} // namespace

int main(int argc, char **argv) {
    options_t o;
    CLI::App app {"blockdnn example: ResNet-18/50 and a 2-layer LSTM end to end"};
    app.add_option("--model", o.model, "resnet18, resnet50 or lstm")
            ->check(CLI::IsMember({"resnet18", "resnet50", "lstm"}));
    app.add_option("--weights", o.weights, "weights file (.bdw, examples/export_torch.py); seeded weights without");
    app.add_option("--mb", o.mb, "batch per request")->check(CLI::Range(1, 1024));
    app.add_option("--size", o.size, "ResNet input height and width")->check(CLI::Range(32, 1024));
    app.add_option("--streams", o.streams,
               "requests served at once, one stream each, the threads shared out (1: no stream run)")
            ->check(CLI::Range(1, 64));
    app.add_option("--threads", o.threads, "library threads (0: all cores)")->check(CLI::Range(0, 1024));
    app.add_option("--iters", o.iters, "timed runs per figure (the best is kept)")->check(CLI::Range(1, 1000));
    app.add_option("--layout", o.layout, "activation layout: auto (blocked for the ISA), nchw, nChw8c, nChw16c");
    app.add_option("--isa", o.isa_cap, "highest ISA to use: avx512_core, avx2, scalar");
    app.add_option("--t", o.t, "LSTM time steps");
    app.add_option("--input", o.input, "LSTM input size");
    app.add_option("--hidden", o.hidden, "LSTM hidden size");
    app.add_flag("--table", o.table, "images/s at mb 1 and 16, 1 and 2 threads, per ISA");
    app.add_flag("--torch,!--no-torch", o.torch,
            "PyTorch dense and to_mkldnn beside the table when python3-torch is installed (default on)");
    app.add_option("--python", o.python, "python with torch for --torch");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError &e) {
        return app.exit(e) == 0 ? 0 : 2; // --help exits 0; bad arguments 2, as the tools do
    }

    try {
        if (!o.isa_cap.empty()) set_max_isa(isa_from_string(o.isa_cap));
        if (o.threads > 0) set_num_threads(o.threads);
        std::unique_ptr<nets::weight_store> file;
        nets::param_source params = nets::seeded_params(2024);
        if (!o.weights.empty()) {
            file = std::make_unique<nets::weight_store>(nets::weight_store::read(o.weights));
            params = file->source();
        }
        const double t0 = now_s();
        const auto m = make_model(o, o.mb, params);
        std::printf("model %s (%s weights), mb %d, input %s, layout %s, isa %s, threads %d\n", o.model.c_str(),
                file ? o.weights.c_str() : "seeded", o.mb, m->src_desc().str().c_str(), m->layout().c_str(),
                to_string(effective_isa()), get_num_threads());
        std::printf("created in %.0f ms; kernels: %s\n", (now_s() - t0) * 1e3, m->impls().c_str());

        // One request: the first timing and the correctness check.
        const tensor src = make_input(*m, file.get(), 1);
        const double s1 = time_forward(*m, src, o.iters);
        std::printf("one request: %.2f ms, %.1f %s/s, %.1f GFLOP/s\n", s1 * 1e3, double(m->items()) / s1, m->unit(),
                m->flops() / s1 * 1e-9);
        // Against the file's PyTorch logits when they fit this run, else against the other ISA.
        check_t check = file ? check_against_file(*m, m->forward(src), *file) : check_t::not_checked;
        if (check == check_t::not_checked) check = check_across_isas(o, *m, m->forward(src), params, file.get());
        bool ok = check != check_t::failed;

        if (o.streams > 1) ok = serve_on_streams(o, *m, file.get()) && ok;
        if (o.table) print_table(o, params, file.get());
        std::printf("%s\n",
                !ok                                ? "end-to-end: FAILED"
                        : check == check_t::passed ? "end-to-end: passed"
                                                   : "end-to-end: ran; the outputs were not checked (see above)");
        return ok ? 0 : 1;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "resnet: %s\n", e.what());
        return 2;
    }
}
