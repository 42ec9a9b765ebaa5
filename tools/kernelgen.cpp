// SPDX-License-Identifier: Apache-2.0
// kernelgen: generates the JIT kernels an op would use for a problem, without running them,
// and prints or writes their disassembly (headed by the conf) and raw code bytes. It follows
// the library's own path (parse, validate, init_conf, kernel cache, generator) and writes
// files through the same dump function as BLOCKDNN_JIT_DUMP.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "blockdnn/blockdnn.hpp"
#include "core/prb_parse.hpp"
#include "core/utils.hpp"
#include "driver/spec.hpp"
#include "ops/bnorm/bnorm_jit.hpp"
#include "ops/bnorm/bnorm_shape.hpp"
#include "ops/conv/conv_fwd_jit.hpp"
#include "ops/eltwise/eltwise_impl.hpp"
#include "jit/gemm/gemm_jit.hpp"
#include "jit/jit_dump.hpp"
#include "ops/rnn/rnn_desc_parse.hpp"
#include "ops/rnn/rnn_fwd_jit.hpp"
#include "tensor/layout.hpp"

using namespace blockdnn;
using namespace blockdnn::impl;

namespace {

const char *footer = R"(OP and DESCRIPTOR
  eltwise  oneDNN benchdnn's eltwise problem syntax:
             [--alg=ALG] [--alpha=F] [--beta=F] [--tag=TAG] DIMS
           ALG: relu tanh sigmoid (logistic) exp log elu gelu_tanh (gelu) gelu_erf swish clip
           linear (default relu); alpha and beta as oneDNN defines them (default 0);
           TAG: abx (plain, default), axb (channels last), aBx8b / aBx16b (channel-blocked) or a
           blockdnn tag such as nChw16c; DIMS: e.g. 8x16x56x56, optionally followed by
           _nNAME. The eltwise kernel itself does not depend on DIMS or TAG, except that
           tensors larger than the last-level cache get a second, streaming-store kernel.
  rnn      oneDNN benchdnn's rnn problem syntax:
             [--alg=ALG] [--activation=ACT] [--direction=DIR] DESCRIPTOR
           ALG: VANILLA_LSTM (lstm, default), VANILLA_GRU (gru), LBR_GRU (lbr_gru),
           VANILLA_RNN (rnn); ACT (vanilla RNN): RELU (default, as in benchdnn), TANH, LOGISTIC;
           DIR: left2right (default), right2left, concat, sum; DESCRIPTOR: lXtXmbX_sicX_slcX_dhcX
           (benchdnn defaults: l1 t1 mb2, slc = dhc = sic), e.g. l1t50mb64sic512slc512dhc512dic512.
           Prints the layer GEMM's kernels, the per-step brgemm(s) and the fused cell(s).
  gemm     M N K: C[M x N] = A[M x K] * B, B packed; the brgemm kernels of the cache-blocked
           driver (the full tile first, then the edge cases).
  bnorm    oneDNN benchdnn's bnorm problem syntax:
             [--dir=DIR] [--flags=FLAGS] [--tag=TAG] DESCRIPTOR
           DIR: FWD_D (forward training, default), FWD_I (inference), BWD_D or BWD_DW
           (backward); FLAGS: letters of G (global statistics: a forward uses given mean and
           variance, a backward is the fixed-statistics form), C (scale), H (shift), R (fused
           relu); TAG: aBx16b (default), aBx8b, abx, axb or a blockdnn tag; DESCRIPTOR:
           mbXicX_idXihXiwX_epsF_nNAME, e.g. mb16ic64ih56. Prints the statistics and
           normalization kernels the op would run (also the narrower last-unit and
           streaming-store variants where the problem gets them).
  conv     oneDNN benchdnn's convolution descriptor, e.g. mb1ic64ih56oc64oh56kh3ph1
           [--stag=TAG] [--dtag=TAG] [--bias] [--post-ops=CHAIN]. Layouts default to the
           ISA's blocked ones (nChw16c for avx512, nChw8c for avx2), with a plain src for a
           first layer (ic <= 4), and dst to a channels-last src's layout; TAG is a blockdnn
           activation tag (nhwc, nChw16c, ...) or benchdnn's abx, axb, aBx8b, aBx16b. A problem
           the avx512 kernels refuse is shown on avx2's, as dispatch picks. CHAIN is e.g.
           sum:1+relu:0:0 (benchdnn's --attr-post-ops form: sum:SCALE, ALG:ALPHA:BETA). Prints the
           kernel the dispatch table would pick (jit:ISA:dw, jit:ISA:first or jit:ISA) and its conf.

OUTPUT
  Without --out: the disassembly of every kernel to stdout. With --out=DIR:
  DIR/<kernel>.<isa>.asm and/or DIR/<kernel>.<isa>.bin, as --format says (default both);
  rnn and gemm kernels, and conv, bnorm or eltwise kernels that share a name (an AVX2 conv's
  prefetching kernel and its twin), are DIR/<kernel>.<n>.<isa>.*, n their place in the list.
  The .asm file is headed by the kernel's conf (blocking, unroll, ISA) and register
  assignment; the .bin file holds the code and its constant pool exactly as executed
  (objdump -D -b binary -mi386:x86-64 -M intel FILE.bin reads it too).
  BLOCKDNN_JIT_DUMP=1 writes the same files for every kernel a program generates.
  Exit status 0, or 2 on bad arguments (as blockdnn-bench), or 1 when the op has no JIT
  kernel for the problem or generation fails.

EXAMPLES
  kernelgen eltwise --alg=gelu_tanh 8x16x56x56
  kernelgen eltwise --alg=tanh --tag=aBx16b 2x64x28x28 --isa=avx2 --out=dump --format=both
  kernelgen rnn l1t50mb64sic512slc512dhc512dic512
  kernelgen rnn --alg=VANILLA_GRU --direction=concat l1t10mb2sic256 --isa=avx2
  kernelgen gemm 512 512 512
  kernelgen bnorm mb16ic64ih56
  kernelgen bnorm --dir=BWD_DW --flags=CHR --tag=axb mb2ic100ih7 --isa=avx2
  kernelgen conv mb16ic256ih56oc64oh56kh1ph0 --isa=avx2
  kernelgen conv g32mb1ic32ih112oc32oh112kh3ph1 --post-ops=relu:0:0
)";

// benchdnn's --alg / --activation / --direction words (and blockdnn's), case-insensitive.
std::string lower(std::string s) {
    for (char &ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return s;
}

rnn_cell rnn_cell_from(const std::string &text) {
    const std::string t = lower(text);
    if (t == "vanilla_lstm" || t == "lstm") return rnn_cell::lstm;
    if (t == "vanilla_gru" || t == "gru") return rnn_cell::gru;
    if (t == "lbr_gru") return rnn_cell::lbr_gru;
    if (t == "vanilla_rnn" || t == "rnn") return rnn_cell::vanilla_rnn;
    fail(status::invalid_arguments, "rnn: --alg=", text, " is not VANILLA_LSTM, VANILLA_GRU, LBR_GRU or VANILLA_RNN");
}

eltwise_alg rnn_activation_from(const std::string &text) {
    const std::string t = lower(text);
    if (t == "tanh") return eltwise_alg::tanh;
    if (t == "relu" || t == "undef") return eltwise_alg::relu; // benchdnn's UNDEF: its default, RELU
    if (t == "logistic" || t == "sigmoid") return eltwise_alg::sigmoid;
    fail(status::invalid_arguments, "rnn: --activation=", text, " is not TANH, RELU or LOGISTIC");
}

rnn_direction rnn_direction_from(const std::string &text) {
    const std::string t = lower(text);
    if (t == "left2right" || t == "l2r") return rnn_direction::l2r;
    if (t == "right2left" || t == "r2l") return rnn_direction::r2l;
    if (t == "concat" || t == "bi_concat") return rnn_direction::bi_concat;
    if (t == "sum" || t == "bi_sum") return rnn_direction::bi_sum;
    fail(status::invalid_arguments, "rnn: --direction=", text, " is not left2right, right2left, concat or sum");
}

// Prints or writes one kernel, `what` saying what it does.
void emit(const jit_generator_t &k, const std::string &what, isa level, const std::string &out_dir, dump_format fmt,
        int seq) {
    if (out_dir.empty()) {
        std::printf("\n; %s\n%s", what.c_str(), disassemble(k).c_str());
        return;
    }
    std::vector<std::string> paths;
    std::string why;
    if (status st = dump_kernel(k, out_dir, cat(k.name(), ".", seq, ".", to_string(level)), fmt, paths, why);
            st != status::success)
        fail(st, why);
    for (const std::string &path : paths)
        std::printf("wrote %s (%s: %s, %zu bytes of code and pool)\n", path.c_str(), what.c_str(), k.name().c_str(),
                k.code_size());
}

// bnorm: the problem from benchdnn's options and descriptor.
bnorm_jit_prb_t bnorm_problem(const std::string &dir, const std::string &flags, const std::string &tag,
        const std::string &desc) {
    const bnorm_shape_t s = parse_bnorm_shape(desc);
    for (char f : flags)
        if (std::string("GCHR").find(f) == std::string::npos)
            fail(status::invalid_arguments, "--flags=", flags, ": '", f, "' is not one of G C H R");
    const bool global = flags.find('G') != std::string::npos;
    bnorm_jit_prb_t p;
    if (dir == "FWD_D") p.dir = global ? bnorm_dir_t::fwd_inference : bnorm_dir_t::fwd_training;
    else if (dir == "FWD_I") p.dir = bnorm_dir_t::fwd_inference;
    else p.dir = bnorm_dir_t::bwd;
    p.src = tensor_desc(s.dims(), parse_tag(tag, s.ndims));
    p.eps = s.eps;
    p.use_scale = flags.find('C') != std::string::npos;
    p.use_shift = flags.find('H') != std::string::npos;
    p.fuse_relu = flags.find('R') != std::string::npos;
    p.global_stats = global && p.dir == bnorm_dir_t::bwd;
    return p;
}

} // namespace

int main(int argc, char **argv) {
    CLI::App app {"kernelgen: generate the JIT kernels an op would use for a problem, without running them,\n"
                  "and print or write their disassembly and code bytes.\n"
                  "Usage: kernelgen OP DESCRIPTOR [--isa=avx512|avx2] [--out=DIR] [--format=asm|bin|both]"};
    app.footer(footer);
    std::string isa_name = "avx512", out_dir, format;
    app.add_option("--isa", isa_name, "ISA to generate for: avx512 (avx512_core, default) or avx2; the CPU need not have it")
            ->check(CLI::IsMember({"avx512", "avx512_core", "avx2"}));
    app.add_option("--out", out_dir, "write files into this existing directory instead of printing")
            ->check(CLI::ExistingDirectory);
    app.add_option("--format", format, "asm, bin or both (default: both with --out, asm without; bin needs --out)")
            ->check(CLI::IsMember({"asm", "bin", "both"}));
    app.require_subcommand(1);

    CLI::App *elt = app.add_subcommand("eltwise", "eltwise_fwd kernels (DESCRIPTOR: [--alg=ALG] [--alpha=F] [--beta=F] [--tag=TAG] DIMS)");
    elt->fallthrough(); // --isa, --out, --format may come after the descriptor
    std::string alg = "relu", tag = "abx", dims;
    float alpha = 0.f, beta = 0.f;
    elt->add_option("--alg", alg, "relu tanh sigmoid exp log elu gelu_tanh gelu_erf swish clip linear");
    elt->add_option("--alpha", alpha, "alpha (relu slope, elu scale, swish beta, clip lower bound, linear scale)");
    elt->add_option("--beta", beta, "beta (clip upper bound, linear shift)");
    elt->add_option("--tag", tag, "abx, axb, aBx8b, aBx16b or a blockdnn tag");
    elt->add_option("DIMS", dims, "dims, e.g. 8x16x56x56")->required();

    CLI::App *rnn = app.add_subcommand("rnn", "rnn_fwd kernels (DESCRIPTOR: [--alg=ALG] [--activation=ACT] [--direction=DIR] lXtXmbX_sicX...)");
    rnn->fallthrough();
    std::string rnn_alg = "VANILLA_LSTM", rnn_act = "RELU", rnn_dir = "left2right", rnn_text;
    rnn->add_option("--alg", rnn_alg, "VANILLA_LSTM, VANILLA_GRU, LBR_GRU or VANILLA_RNN");
    rnn->add_option("--activation", rnn_act, "RELU (default, as in benchdnn), TANH or LOGISTIC (vanilla RNN)");
    rnn->add_option("--direction", rnn_dir, "left2right, right2left, concat or sum");
    rnn->add_option("DESCRIPTOR", rnn_text, "e.g. l1t50mb64sic512slc512dhc512dic512")->required();

    CLI::App *gemm = app.add_subcommand("gemm", "brgemm kernels of C[M x N] = A[M x K] * B (packed B)");
    gemm->fallthrough();
    std::int64_t gm = 0, gn = 0, gk = 0;
    gemm->add_option("M", gm, "rows of A and C")->required()->check(CLI::Range(std::int64_t(1), std::int64_t(1) << 31));
    gemm->add_option("N", gn, "columns of B and C")->required()->check(CLI::Range(std::int64_t(1), std::int64_t(1) << 31));
    gemm->add_option("K", gk, "columns of A, rows of B")->required()->check(CLI::Range(std::int64_t(1), std::int64_t(1) << 31));
    CLI::App *bn = app.add_subcommand("bnorm", "bnorm kernels (DESCRIPTOR: [--dir=DIR] [--flags=FLAGS] [--tag=TAG] mbXicX_ihX...)");
    bn->fallthrough();
    std::string bdir = "FWD_D", bflags, btag = "aBx16b", bdesc;
    bn->add_option("--dir", bdir, "FWD_D (training), FWD_I (inference), BWD_D, BWD_DW")
            ->check(CLI::IsMember({"FWD_D", "FWD_I", "BWD_D", "BWD_DW"}));
    bn->add_option("--flags", bflags, "letters of G C H R");
    bn->add_option("--tag", btag, "aBx16b, aBx8b, abx, axb or a blockdnn tag");
    bn->add_option("DESCRIPTOR", bdesc, "e.g. mb16ic64ih56")->required();

    CLI::App *conv = app.add_subcommand("conv", "conv_fwd kernels (DESCRIPTOR: benchdnn conv descriptor [--stag=TAG] "
                                                 "[--dtag=TAG] [--bias] [--post-ops=CHAIN])");
    conv->fallthrough();
    std::string conv_desc_text, stag, dtag, po_text;
    bool with_bias = false;
    conv->add_option("DESCRIPTOR", conv_desc_text, "e.g. mb1ic64ih56oc64oh56kh3ph1")->required();
    conv->add_option("--stag", stag, "src layout (default: the ISA's blocked one; plain for ic <= 4)");
    conv->add_option("--dtag", dtag, "dst layout (default: the ISA's blocked one)");
    conv->add_flag("--bias", with_bias, "with bias");
    conv->add_option("--post-ops", po_text, "post-op chain, e.g. sum:1+relu:0:0");

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError &e) {
        return app.exit(e) == 0 ? 0 : 2; // --help is a ParseError with exit code 0
    }

    try {
        isa level = isa_from_string(isa_name); // conv may fall to avx2, as the dispatch table does
        if (format.empty()) format = out_dir.empty() ? "asm" : "both";
        if (out_dir.empty() && format != "asm") fail(status::invalid_arguments, "--format=", format, " needs --out=DIR");
        const dump_format fmt = format == "asm" ? dump_format::asm_text : format == "bin" ? dump_format::bin : dump_format::both;

        if (rnn->parsed()) {
            rnn_desc base;
            base.cell = rnn_cell_from(rnn_alg);
            base.activation = rnn_activation_from(rnn_act);
            if (base.cell != rnn_cell::vanilla_rnn) base.activation = eltwise_alg::tanh; // as blockdnn-bench
            base.direction = rnn_direction_from(rnn_dir);
            const rnn_prb_t p = make_rnn_prb(parse_rnn_desc(rnn_text, base));
            std::unique_ptr<rnn_fwd_jit_t> r;
            std::string why;
            if (status st = rnn_fwd_jit_t::create(r, p, level, why); st != status::success) fail(st, why);
            const auto gens = r->generators();
            std::printf("; op: rnn_fwd, impl: jit:%s, problem: %s (%s), kernels: %zu\n", to_string(level),
                    to_string(p).c_str(), rnn_desc_str(p.desc).c_str(), gens.size());
            std::printf("; plan:\n; %s\n", [&] {
                std::string t = r->str();
                for (std::size_t i = 0; (i = t.find('\n', i)) != std::string::npos; i += 3) t.replace(i, 1, "\n; ");
                return t;
            }().c_str());
            int seq = 0;
            for (const auto &[what, g] : gens) emit(*g, what, level, out_dir, fmt, seq++);
            return 0;
        }
        if (gemm->parsed()) {
            std::unique_ptr<gemm_jit_t> g;
            std::string why;
            if (status st = gemm_jit_t::create(g, level, gm, gn, gk, gk, gn, 0.f, why); st != status::success)
                fail(st, why);
            const auto ks = g->kernels();
            std::printf("; op: gemm, impl: jit:%s, problem: M%lldN%lldK%lld, plan: %s, kernels: %zu\n", to_string(level),
                    static_cast<long long>(gm), static_cast<long long>(gn), static_cast<long long>(gk), g->str().c_str(),
                    ks.size());
            int seq = 0;
            for (const brgemm_kernel_t *k : ks) emit(k->generator(), to_string(k->conf()), level, out_dir, fmt, seq++);
            return 0;
        }

        std::vector<kernel_ptr> kernels;
        std::string why;
        if (bn->parsed()) {
            const bnorm_jit_prb_t p = bnorm_problem(bdir, bflags, btag, bdesc);
            std::unique_ptr<bnorm_jit_t> jit;
            if (status st = bnorm_jit_t::create(jit, p, level, bnorm_this_machine(), why); st != status::success)
                fail(st, why);
            kernels = jit->kernels();
            const std::string conf = to_string(jit->conf());
            std::printf("; op: bnorm, impl: jit:%s, problem: %s %s, kernels: %zu\n; driver: %s\n", to_string(level),
                    bdesc.c_str(), to_string(p.src.tag()), kernels.size(), conf.substr(0, conf.find('\n')).c_str());
        } else if (conv->parsed()) {
            conv_prb_t p;
            p.desc = parse_conv_desc(conv_desc_text);
            p.desc.with_bias = with_bias;
            try {
                p.po = bdrv::parse_benchdnn_post_ops(po_text);
            } catch (const error &e) { // its messages name blockdnn-bench's --attr-post-ops
                fail(e.code(), "--post-ops: ", e.what());
            }
            const int nd = p.desc.ndims, blk = level == isa::avx512_core ? 16 : 8;
            const format_tag blocked = nd == 3 ? (blk == 16 ? format_tag::nCw16c : format_tag::nCw8c)
                    : nd == 4                  ? (blk == 16 ? format_tag::nChw16c : format_tag::nChw8c)
                                               : (blk == 16 ? format_tag::nCdhw16c : format_tag::nCdhw8c);
            const format_tag plain = nd == 3 ? format_tag::ncw : nd == 4 ? format_tag::nchw : format_tag::ncdhw;
            const format_tag st = stag.empty() ? (p.desc.ic <= 4 && p.desc.g == 1 ? plain : blocked) : parse_tag(stag, nd);
            // A channels-last src goes with a channels-last dst (the kernels take no mixed pair).
            const format_tag dt = !dtag.empty() ? parse_tag(dtag, nd) : is_channels_last(st) ? st : blocked;
            p.grouped_wei = p.desc.g > 1;
            p.src = tensor_desc(p.desc.src_dims(), st);
            p.dst = tensor_desc(p.desc.dst_dims(), dt);
            const bool gw = p.grouped_wei;
            const format_tag wt = nd == 3 ? (gw ? format_tag::goiw : format_tag::oiw)
                    : nd == 4             ? (gw ? format_tag::goihw : format_tag::oihw)
                                          : (gw ? format_tag::goidhw : format_tag::oidhw);
            p.wei = tensor_desc(p.desc.wei_dims(gw), wt);
            if (with_bias) p.bia = tensor_desc(p.desc.bia_dims(), format_tag::x);
            const conv_kernel_kind kind = conv_kernel_kind_for(p.desc, st);
            std::unique_ptr<conv_fwd_jit_t> jit;
            // As the dispatch table does, an AVX-512 cap falls to the AVX2 kernels (channels-last
            // groups of 8 channels, depthwise g a multiple of 8 only, nC*8c layouts).
            if (status s = conv_fwd_jit_t::create(jit, p, level, kind, why); s != status::success) {
                std::string why2;
                if (level != isa::avx512_core || conv_fwd_jit_t::create(jit, p, isa::avx2, kind, why2) != status::success)
                    fail(s, why);
                std::printf("; the avx512_core kernels refuse it (%s); the dispatch table runs avx2's\n", why.c_str());
                level = isa::avx2;
            }
            const char *variant = kind == conv_kernel_kind::depthwise ? ":dw" : kind == conv_kernel_kind::first ? ":first" : "";
            const std::vector<kernel_ptr> ks = jit->kernels_shared();
            std::printf("; op: conv_fwd, impl: jit:%s%s, problem: %s, kernels: %zu\n; %s\n", to_string(level), variant,
                    p.str().c_str(), ks.size(), to_string(jit->conf()).c_str());
            if (ks.size() > 1)
                std::printf("; the first kernel runs the last oc-block group of each chunk and prefetches the next"
                            " rows; the second, without prefetches, runs the other groups\n");
            kernels.insert(kernels.end(), ks.begin(), ks.end());
        } else {
        eltwise_prb_t p;
        p.alg = eltwise_alg_from_string(alg);
        p.alpha = alpha;
        p.beta = beta;
        const dims_t d = parse_dims(dims);
        p.desc = tensor_desc(d, parse_tag(tag, static_cast<int>(d.size())));
        check_eltwise_prb(p);

        if (status st = eltwise_jit_kernels(p, level, kernels, why); st != status::success) fail(st, why);
        std::printf("; op: eltwise_fwd, impl: jit:%s, problem: %s, kernels: %zu\n", to_string(level), p.str().c_str(),
                kernels.size());
        }
        for (std::size_t i = 0; i < kernels.size(); ++i) {
            const kernel_ptr &k = kernels[i];
            if (out_dir.empty()) {
                std::printf("\n%s", disassemble(*k).c_str());
                continue;
            }
            // Kernels of one name (a conv's prefetching kernel and its quiet twin) get their
            // index in the list, so neither file overwrites the other.
            const bool shared_name = std::count_if(kernels.begin(), kernels.end(),
                                             [&](const kernel_ptr &o) { return o->name() == k->name(); })
                    > 1;
            const std::string stem = shared_name ? cat(k->name(), ".", i, ".", to_string(level))
                                                 : cat(k->name(), ".", to_string(level));
            std::vector<std::string> paths;
            if (status st = dump_kernel(*k, out_dir, stem, fmt, paths, why); st != status::success)
                fail(st, why);
            for (const std::string &path : paths) std::printf("wrote %s (%s, %zu bytes of code and pool)\n", path.c_str(),
                    k->name().c_str(), k->code_size());
        }
    } catch (const error &e) {
        std::fprintf(stderr, "kernelgen: %s\n", e.what());
        return e.code() == status::invalid_arguments ? 2 : 1;
    }
    return 0;
}
