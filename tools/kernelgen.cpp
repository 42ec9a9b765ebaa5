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
#include "bnorm/bnorm_jit.hpp"
#include "bnorm/bnorm_shape.hpp"
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
  bnorm    oneDNN benchdnn's bnorm problem syntax:
             [--dir=DIR] [--flags=FLAGS] [--tag=TAG] DESCRIPTOR
           DIR: FWD_D (forward training, default), FWD_I (inference), BWD_D or BWD_DW
           (backward); FLAGS: letters of G (global statistics: a forward uses given mean and
           variance, a backward is the fixed-statistics form), C (scale), H (shift), R (fused
           relu); TAG: aBx16b (default), aBx8b, abx, axb or a blockdnn tag; DESCRIPTOR:
           mbXicX_idXihXiwX_epsF_nNAME, e.g. mb16ic64ih56. Prints the statistics and
           normalization kernels the op would run (also the narrower last-unit and
           streaming-store variants where the problem gets them).
  (conv, rnn and gemm arrive with their kernels.)

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
  kernelgen bnorm mb16ic64ih56
  kernelgen bnorm --dir=BWD_DW --flags=CHR --tag=axb mb2ic100ih7 --isa=avx2
)";

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

    CLI::App *bn = app.add_subcommand("bnorm", "bnorm kernels (DESCRIPTOR: [--dir=DIR] [--flags=FLAGS] [--tag=TAG] mbXicX_ihX...)");
    bn->fallthrough();
    std::string bdir = "FWD_D", bflags, btag = "aBx16b", bdesc;
    bn->add_option("--dir", bdir, "FWD_D (training), FWD_I (inference), BWD_D, BWD_DW")
            ->check(CLI::IsMember({"FWD_D", "FWD_I", "BWD_D", "BWD_DW"}));
    bn->add_option("--flags", bflags, "letters of G C H R");
    bn->add_option("--tag", btag, "aBx16b, aBx8b, abx, axb or a blockdnn tag");
    bn->add_option("DESCRIPTOR", bdesc, "e.g. mb16ic64ih56")->required();

    CLI11_PARSE(app, argc, argv);

    try {
        const isa level = isa_from_string(isa_name);
        if (format.empty()) format = out_dir.empty() ? "asm" : "both";
        if (out_dir.empty() && format != "asm") fail(status::invalid_arguments, "--format=", format, " needs --out=DIR");
        const dump_format fmt = format == "asm" ? dump_format::asm_text : format == "bin" ? dump_format::bin : dump_format::both;

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
