// SPDX-License-Identifier: Apache-2.0
// kernelgen: generates the JIT kernels an op would use for a problem, without running them,
// and prints or writes their disassembly (headed by the conf) and raw code bytes. It follows
// the library's own path (parse, validate, init_conf, kernel cache, generator) and writes
// files through the same dump function as BLOCKDNN_JIT_DUMP.
#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "blockdnn/blockdnn.hpp"
#include "common/prb_parse.hpp"
#include "common/utils.hpp"
#include "conv/conv_fwd_jit.hpp"
#include "eltwise/eltwise_impl.hpp"
#include "jit/jit_dump.hpp"

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
  conv     oneDNN benchdnn's convolution descriptor, e.g. mb1ic64ih56oc64oh56kh3ph1
           [--stag=TAG] [--dtag=TAG] [--bias] [--post-ops=CHAIN]. Layouts default to the
           ISA's blocked ones (nChw16c for avx512, nChw8c for avx2), with a plain src for a
           first layer (ic <= 4); TAG is a blockdnn activation tag. CHAIN is e.g.
           sum:1+relu:0:0 (post_ops::str()'s form: sum:SCALE, ALG:ALPHA:BETA). Prints the
           kernel the dispatch table would pick (jit_dw, jit_first or jit) and its conf.
  (bnorm, rnn and gemm arrive with their kernels.)

OUTPUT
  Without --out: the disassembly of every kernel to stdout. With --out=DIR:
  DIR/<kernel>.<isa>.asm and/or DIR/<kernel>.<isa>.bin, as --format says (default both).
  The .asm file is headed by the kernel's conf (blocking, unroll, ISA) and register
  assignment; the .bin file holds the code and its constant pool exactly as executed
  (objdump -D -b binary -mi386:x86-64 -M intel FILE.bin reads it too).
  BLOCKDNN_JIT_DUMP=1 writes the same files for every kernel a program generates.

EXAMPLES
  kernelgen eltwise --alg=gelu_tanh 8x16x56x56
  kernelgen eltwise --alg=tanh --tag=aBx16b 2x64x28x28 --isa=avx2 --out=dump --format=both
  kernelgen conv mb16ic256ih56oc64oh56kh1ph0 --isa=avx2
  kernelgen conv g32mb1ic32ih112oc32oh112kh3ph1 --post-ops=relu:0:0
)";

// Parses "sum:1+relu:0:0" (post_ops::str()'s form) into a chain.
post_ops parse_post_ops(const std::string &text) {
    post_ops po;
    std::size_t i = 0;
    while (i < text.size()) {
        const std::size_t end = std::min(text.find('+', i), text.size());
        const std::string item = text.substr(i, end - i);
        std::vector<std::string> f;
        for (std::size_t j = 0; j <= item.size();) {
            const std::size_t k = std::min(item.find(':', j), item.size());
            f.push_back(item.substr(j, k - j));
            j = k + 1;
        }
        if (f[0] == "sum") po.append_sum(f.size() > 1 ? std::stof(f[1]) : 1.f);
        else po.append_eltwise(eltwise_alg_from_string(f[0]), f.size() > 1 ? std::stof(f[1]) : 0.f,
                f.size() > 2 ? std::stof(f[2]) : 0.f);
        i = end + 1;
    }
    return po;
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
    app.add_option("--out", out_dir, "write files into this existing directory instead of printing");
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

    CLI11_PARSE(app, argc, argv);

    try {
        const isa level = isa_from_string(isa_name);
        if (format.empty()) format = out_dir.empty() ? "asm" : "both";
        if (out_dir.empty() && format != "asm") fail(status::invalid_arguments, "--format=", format, " needs --out=DIR");
        const dump_format fmt = format == "asm" ? dump_format::asm_text : format == "bin" ? dump_format::bin : dump_format::both;

        std::vector<kernel_ptr> kernels;
        std::string why;
        if (conv->parsed()) {
            conv_prb_t p;
            p.desc = parse_conv_desc(conv_desc_text);
            p.desc.with_bias = with_bias;
            p.po = parse_post_ops(po_text);
            const int nd = p.desc.ndims, blk = level == isa::avx512_core ? 16 : 8;
            const format_tag blocked = nd == 3 ? (blk == 16 ? format_tag::nCw16c : format_tag::nCw8c)
                    : nd == 4                  ? (blk == 16 ? format_tag::nChw16c : format_tag::nChw8c)
                                               : (blk == 16 ? format_tag::nCdhw16c : format_tag::nCdhw8c);
            const format_tag plain = nd == 3 ? format_tag::ncw : nd == 4 ? format_tag::nchw : format_tag::ncdhw;
            const format_tag st = stag.empty() ? (p.desc.ic <= 4 && p.desc.g == 1 ? plain : blocked) : parse_tag(stag, nd);
            const format_tag dt = dtag.empty() ? blocked : parse_tag(dtag, nd);
            p.grouped_wei = p.desc.g > 1;
            p.src = tensor_desc(p.desc.src_dims(), st);
            p.dst = tensor_desc(p.desc.dst_dims(), dt);
            p.wei = tensor_desc(p.desc.wei_dims(p.grouped_wei), p.grouped_wei ? format_tag::goihw : format_tag::oihw);
            if (nd != 4) p.wei = tensor_desc(p.desc.wei_dims(p.grouped_wei),
                    nd == 3 ? (p.grouped_wei ? format_tag::goiw : format_tag::oiw)
                            : (p.grouped_wei ? format_tag::goidhw : format_tag::oidhw));
            if (with_bias) p.bia = tensor_desc(p.desc.bia_dims(), format_tag::x);
            const conv_kernel_kind kind = conv_kernel_kind_for(p.desc, st);
            std::unique_ptr<conv_fwd_jit_t> jit;
            if (status s = conv_fwd_jit_t::create(jit, p, level, kind, why); s != status::success) fail(s, why);
            const char *prefix = kind == conv_kernel_kind::depthwise ? "jit_dw" : kind == conv_kernel_kind::first ? "jit_first" : "jit";
            std::printf("; op: conv_fwd, impl: %s:%s, problem: %s, kernels: 1\n; %s\n", prefix, to_string(level),
                    p.str().c_str(), to_string(jit->conf()).c_str());
            kernels.push_back(jit->kernel_ptr_shared());
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
        for (const kernel_ptr &k : kernels) {
            if (out_dir.empty()) {
                std::printf("\n%s", disassemble(*k).c_str());
                continue;
            }
            std::vector<std::string> paths;
            if (status st = dump_kernel(*k, out_dir, cat(k->name(), ".", to_string(level)), fmt, paths, why);
                    st != status::success)
                fail(st, why);
            for (const std::string &path : paths) std::printf("wrote %s (%s, %zu bytes of code and pool)\n", path.c_str(),
                    k->name().c_str(), k->code_size());
        }
    } catch (const error &e) {
        std::fprintf(stderr, "kernelgen: %s\n", e.what());
        return 1;
    }
    return 0;
}
