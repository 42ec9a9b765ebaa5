// SPDX-License-Identifier: Apache-2.0
// kernelgen: generates the JIT kernels an op would use for a problem, without running them,
// and prints or writes their disassembly (headed by the conf) and raw code bytes. For each op
// it parses the benchdnn descriptor, creates the op under the ISA cap the user gave and dumps
// the kernels the op asked the kernel cache for (kernel_recorder_t), through the same dump
// function as BLOCKDNN_JIT_DUMP. conv, eltwise, softmax, binary, bnorm and rnn go through the
// public API only: the public parser, the op, and for the plans softmax, binary, bnorm and rnn
// print, the op's impl_info(). gemm, which no public op runs alone, stays on the internal gemm:
// inner_product_fwd runs the same kernels, but asks for them in another order (the full tile's
// beta=1 kernel first when K > kc) and limits M below 2^31.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "blockdnn/blockdnn.hpp"
#include "core/isa_assume.hpp"
#include "core/prb_parse.hpp"
#include "core/utils.hpp"
#include "driver/spec.hpp"
#include "jit/gemm/gemm_jit.hpp"
#include "jit/jit_dump.hpp"
#include "jit/jit_kernel_cache.hpp"
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
  softmax  oneDNN benchdnn's softmax problem syntax (forward):
             [--axis=N] [--tag=TAG] DIMS
           N: the logical dim the softmax runs along (default 1, as in benchdnn); TAG: abx
           (plain, default), axb (channels last), aBx8b / aBx16b (channel-blocked) or a
           blockdnn tag such as nhwc; DIMS: e.g. 64x1000, optionally followed by _nNAME.
           The kernel does not depend on DIMS, only on whether the axis is the innermost dim
           in memory (jit_softmax_fwd_lines: each line contiguous, vectors along it) or not
           (jit_softmax_fwd_lanes: each vector lane a line); the driver line shows how the
           tensor is split into calls. A layout whose axis is blocked (e.g. --axis=1 with
           nChw16c) runs the kernel in the plain layout, between the reorders the driver line
           names.
  binary   oneDNN benchdnn's binary problem syntax (forward):
             [--alg=ALG] [--tag=TAG] [--src1-tag=TAG] [--post-ops=CHAIN] SRC0DIMS:SRC1DIMS
           ALG: add (default) or mul, any case (benchdnn's ADD, MUL); TAG: the layout of src0
           and dst, --src1-tag src1's: abx (plain, default for both), axb (channels last),
           aBx8b / aBx16b (channel-blocked) or a blockdnn tag such as nhwc; SRC1DIMS: src0's
           rank, each dim src0's or 1 (broadcast), e.g. 8x64x56x56:1x64x1x1, optionally
           followed by _nNAME; CHAIN: a post-op chain as conv's below (e.g. sum:1+relu:0:0).
           The kernel does not depend on DIMS or TAG, only on the alg, the post-ops and
           whether each row of dst (its innermost run of floats in memory) has a row of src1
           beside it (jit_binary_fwd_ALG) or one src1 value (jit_binary_fwd_ALG_scalar); the
           driver line shows the rows and any reorder of src1 into dst's layout. A dst with
           two inner blocks (e.g. OIhw16i16o) runs the ref implementation, which has no JIT
           kernel.
  rnn      oneDNN benchdnn's rnn problem syntax:
             [--alg=ALG] [--activation=ACT] [--direction=DIR] DESCRIPTOR
           ALG: VANILLA_LSTM (lstm, default), VANILLA_GRU (gru), LBR_GRU (lbr_gru),
           VANILLA_RNN (rnn); ACT (vanilla RNN): RELU (default, as in benchdnn), TANH, LOGISTIC;
           DIR: left2right (default), right2left, concat, sum; DESCRIPTOR: lXtXmbX_sicX_slcX_dhcX
           (benchdnn defaults: l1 t1 mb2, slc = dhc = sic), e.g. l1t50mb64sic512slc512dhc512dic512.
           Prints the layer GEMM's kernels, the per-step brgemm(s) and the fused cell(s).
  gemm     M N K: C[M x N] = A[M x K] * B, B packed; the brgemm kernels of the cache-blocked
           driver (the full tile first, then the edge cases); where C (beta 0, N and the panel
           a multiple of 16 floats) outgrows the last-level cache of this CPU's model for the
           threads in use, a twin of each with streaming stores. The panel width of a few rows
           also follows the threads (BLOCKDNN_NUM_THREADS); the op line names them.
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
           first layer (ic <= 4), and dst to src's layout unless src is plain; TAG is a blockdnn
           activation tag (nhwc, nChw16c, ...) or benchdnn's abx, axb, aBx8b, aBx16b. A problem
           the avx512 kernels refuse is shown on avx2's, as dispatch picks. CHAIN is e.g.
           sum:1+relu:0:0 (benchdnn's --attr-post-ops form: sum:SCALE, ALG:ALPHA:BETA). Prints the
           kernel the dispatch table would pick (jit:ISA:dw, jit:ISA:first or jit:ISA) and its conf.
           The conf follows the layouts, and the threads (BLOCKDNN_NUM_THREADS) where there are
           fewer images than threads: a strided 1x1 is then not copied to unit stride (rtus).

OUTPUT
  Without --out: the disassembly of every kernel to stdout. With --out=DIR:
  DIR/<kernel>.<isa>.asm and/or DIR/<kernel>.<isa>.bin, as --format says (default both);
  rnn and gemm kernels, and conv, bnorm or eltwise kernels that share a name, are
  DIR/<kernel>.<n>.<isa>.*, n their place in the list (an AVX2 conv's quiet twin is
  <kernel>_quiet; a direct or depthwise conv whose oc blocks end in a smaller group has one
  more kernel of the same name for that group, listed last).
  The .asm file is headed by the kernel's conf (blocking, unroll, ISA) and register
  assignment; the .bin file holds the code and its constant pool exactly as executed
  (objdump -D -b binary -mi386:x86-64 -M intel FILE.bin reads it too).
  BLOCKDNN_JIT_DUMP=1 writes the same files for every kernel a program generates.
  Exit status 0, or 2 on bad arguments (as blockdnn-bench), or 1 when the op has no JIT
  kernel for the problem or generation fails.

EXAMPLES
  kernelgen eltwise --alg=gelu_tanh 8x16x56x56
  kernelgen eltwise --alg=tanh --tag=aBx16b 2x64x28x28 --isa=avx2 --out=dump --format=both
  kernelgen softmax 64x1000
  kernelgen softmax --axis=1 --tag=nchw 1x21x64x64 --isa=avx2
  kernelgen binary 8x64x56x56:8x64x56x56
  kernelgen binary --alg=mul --tag=aBx16b 8x64x56x56:1x64x1x1 --isa=avx2
  kernelgen binary --tag=axb --post-ops=relu:0:0 8x64x56x56:1x64x1x1
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

// benchdnn's binary --alg words that binary_fwd runs, case-insensitive: its ADD, MUL are the
// public parser's add, mul.
binary_alg binary_alg_from(const std::string &text) {
    const std::string t = lower(text);
    if (t == "add") return binary_alg::add;
    if (t == "mul") return binary_alg::mul;
    fail(status::invalid_arguments, "binary: --alg=", text, " is not add or mul (benchdnn's ADD, MUL)");
}

// The options of every op (CLI11 fills them).
struct kg_options_t {
    std::string alg = "relu", tag = "abx", dims; // eltwise
    float alpha = 0.f, beta = 0.f;
    int smx_axis = 1; // softmax (benchdnn's default axis)
    std::string smx_tag = "abx", smx_dims;
    std::string bin_alg = "add", bin_tag = "abx", bin_src1_tag = "abx", bin_desc;             // binary, po_text
    std::string rnn_alg = "VANILLA_LSTM", rnn_act = "RELU", rnn_dir = "left2right", rnn_text; // rnn
    std::int64_t gm = 0, gn = 0, gk = 0;                                                      // gemm
    std::string bdir = "FWD_D", bflags, btag = "aBx16b", bdesc;                               // bnorm
    std::string conv_desc_text, stag, dtag, po_text;                                          // conv, binary
    bool with_bias = false;
};

// What an op's create hands back, after printing its header: the kernels the op uses, in the
// order it asked the kernel cache for them (gemm: its own labelled list), and the ISA they were
// made for.
struct made_t {
    std::shared_ptr<const void> keep; // what owns the kernels while they are dumped
    std::vector<const jit_generator_t *> kernels;
    std::vector<std::string> what; // labels (gemm), or empty
    bool numbered = false;         // files carry their place in the list (rnn, and gemm's labels)
    isa level = isa::avx2;
};

// The kernels the recorder saw while a public op was created; `impl` is its impl_name().
made_t recorded(
        const kernel_recorder_t &rec, const std::string &impl, const std::string &op, const std::string &problem) {
    if (impl.rfind("jit:", 0) != 0 || rec.kernels().empty())
        fail(status::unimplemented, op, ": no JIT kernel for ", problem, " at ", to_string(max_isa()),
                " (the dispatch table picks ", impl, "; BLOCKDNN_VERBOSE=2 says why)");
    made_t m;
    m.keep = std::make_shared<const std::vector<kernel_ptr>>(rec.kernels());
    for (const kernel_ptr &k : rec.kernels()) m.kernels.push_back(k.get());
    m.level = rec.kernels().front()->isa_level();
    return m;
}

made_t create_eltwise(const kg_options_t &o) {
    const eltwise_alg alg = eltwise_alg_from_string(o.alg);
    const dims_t d = parse_dims(o.dims);
    const format_tag tag = parse_tag(o.tag, static_cast<int>(d.size()));
    kernel_recorder_t rec;
    const eltwise_fwd op(eltwise_desc {alg, o.alpha, o.beta, d}, tag, tag);
    made_t m = recorded(rec, op.impl_name(), "eltwise_fwd", op.str());
    std::printf("; op: eltwise_fwd, impl: %s, problem: %s, kernels: %zu\n", op.impl_name(), op.str().c_str(),
            m.kernels.size());
    return m;
}

// The driver's plan an op prints: the line of its impl_info() after the name ("" if none).
std::string plan_line(const std::string &info) {
    const std::size_t nl = info.find('\n');
    return nl == std::string::npos ? "" : info.substr(nl + 1, info.find('\n', nl + 1) - nl - 1);
}

made_t create_softmax(const kg_options_t &o) {
    const softmax_desc d = parse_softmax_desc(o.smx_dims, o.smx_axis);
    const format_tag tag = parse_tag(o.smx_tag, static_cast<int>(d.dims.size()));
    kernel_recorder_t rec;
    const softmax_fwd op(d, tag, tag);
    made_t m = recorded(rec, op.impl_name(), "softmax_fwd", op.str());
    // The driver's split (outer, len, inner and the lines or lanes per call). The kernel's own
    // mode (its name ends in it): lines where the axis has stride 1.
    const std::string plan = plan_line(op.impl_info());
    const bool lines = m.kernels.front()->name().ends_with("_lines");
    std::printf(
            "; op: softmax_fwd, impl: %s, problem: %s, kernels: %zu\n; mode: %s (the axis is %s in the layout the"
            " kernel runs in; the kernel depends on that and the ISA only, not on the dims)\n; driver (%d threads): %s\n",
            op.impl_name(), op.str().c_str(), m.kernels.size(), lines ? "lines" : "lanes",
            lines ? "innermost" : "not innermost", get_num_threads(), plan.c_str());
    return m;
}

// kernelgen's --post-ops (conv, binary): benchdnn's --attr-post-ops chain.
post_ops parse_post_ops(const std::string &text) {
    try {
        return bdrv::parse_benchdnn_post_ops(text);
    } catch (const error &e) { // its messages name blockdnn-bench's --attr-post-ops
        fail(e.code(), "--post-ops: ", e.what());
    }
}

made_t create_binary(const kg_options_t &o) {
    const binary_desc d = parse_binary_desc(o.bin_desc, binary_alg_from(o.bin_alg));
    const int nd = static_cast<int>(d.src0_dims.size());
    const format_tag tag = parse_tag(o.bin_tag, nd), src1_tag = parse_tag(o.bin_src1_tag, nd);
    const post_ops po = parse_post_ops(o.po_text);
    kernel_recorder_t rec;
    const binary_fwd op(d, tag, src1_tag, tag, po);
    const tensor_desc &dst = op.dst_desc();
    if (std::string(op.impl_name()).rfind("jit:", 0) != 0 && dst.inner_nblks() > 1)
        fail(status::unimplemented, "binary_fwd: no JIT kernel for ", op.str(), ": dst ", to_string(tag),
                " has two inner blocks, so the dispatch table picks ref; the JIT kernel takes a layout of at most"
                " one inner block (every activation layout)");
    made_t m = recorded(rec, op.impl_name(), "binary_fwd", op.str());
    // The driver's rows (outer, rows, len, src1's kind and row stride) and the reorders. The
    // kernel's own kind (its name ends in it): "_scalar" where src1 is one value a row.
    const std::string plan = plan_line(op.impl_info());
    const bool scalar = m.kernels.front()->name().ends_with("_scalar");
    std::printf("; op: binary_fwd, impl: %s, problem: %s, kernels: %zu\n; mode: %s (%s; the kernel depends on that,"
                " the alg, the post-ops and the ISA only, not on the dims or layouts)\n; driver (%d threads): %s\n",
            op.impl_name(), op.str().c_str(), m.kernels.size(), scalar ? "scalar" : "row",
            scalar ? "one src1 value a row of dst, broadcast along it" : "a row of src1 beside each row of dst",
            get_num_threads(), plan.c_str());
    return m;
}

made_t create_conv(const kg_options_t &o) {
    conv_desc d = parse_conv_desc(o.conv_desc_text);
    d.with_bias = o.with_bias;
    const post_ops po = parse_post_ops(o.po_text);
    // Layouts: the ISA's blocked ones by default, a plain src for a first layer, and dst in
    // src's layout unless src is plain: a mixed pair would show the plain path's kernel,
    // which reorders one of them, not the one src's layout gets.
    const int nd = d.ndims, blk = max_isa() == isa::avx512_core ? 16 : 8;
    const format_tag blocked = blocked_act_tag(nd, blk), plain = plain_act_tag(nd);
    const format_tag st = o.stag.empty() ? (d.ic <= 4 && d.g == 1 ? plain : blocked) : parse_tag(o.stag, nd);
    const format_tag dt = !o.dtag.empty() ? parse_tag(o.dtag, nd) : st == plain ? blocked : st;
    const bool gw = d.g > 1;
    const format_tag wt = nd == 3 ? (gw ? format_tag::goiw : format_tag::oiw)
            : nd == 4             ? (gw ? format_tag::goihw : format_tag::oihw)
                                  : (gw ? format_tag::goidhw : format_tag::oidhw);
    kernel_recorder_t rec;
    const conv_fwd op(d, st, wt, dt, po);
    made_t m = recorded(rec, op.impl_name(), "conv_fwd", op.str());
    // An AVX-512 cap falls to the AVX2 kernels where the dispatch table does (channels-last
    // groups of 8 channels, depthwise g a multiple of 8 only, nC*8c layouts).
    if (m.level != max_isa())
        std::printf(
                "; the %s kernels refuse it; the dispatch table runs %s's\n", to_string(max_isa()), to_string(m.level));
    // The conf, as the first line of the kernel's own header says it ("conf: ...").
    std::string conf = m.kernels.front()->conf_str();
    conf = conf.substr(0, conf.find('\n'));
    if (conf.rfind("conf: ", 0) == 0) conf.erase(0, 6);
    std::printf("; op: conv_fwd, impl: %s, problem: %s, kernels: %zu\n; %s\n", op.impl_name(), op.str().c_str(),
            m.kernels.size(), conf.c_str());
    // The conf names the extra kernels: ":last_group" a quiet twin, "nb_oc_blocking=N+T" a
    // kernel for the last group of T blocks.
    const std::size_t blocking = conf.find("nb_oc_blocking=");
    const std::size_t plus = conf.find('+', blocking);
    const bool tail = blocking != std::string::npos && plus != std::string::npos && plus < conf.find(' ', blocking);
    const bool last_group = conf.find(":last_group") != std::string::npos;
    if (last_group)
        std::printf("; the first kernel runs the last oc-block group of each chunk%s and prefetches the next"
                    " rows; its quiet twin, without prefetches, runs the other groups\n",
                tail ? " but the last chunk" : "");
    if (tail)
        std::printf("; the last kernel runs the last, smaller group of oc blocks (%s of them)%s\n",
                conf.substr(plus + 1, conf.find(' ', plus) - plus - 1).c_str(),
                last_group ? " and prefetches the next rows" : "");
    return m;
}

made_t create_bnorm(const kg_options_t &o) {
    const bnorm_desc parsed = parse_bnorm_desc(o.bdesc);
    for (char f : o.bflags)
        if (std::string("GCHR").find(f) == std::string::npos)
            fail(status::invalid_arguments, "--flags=", o.bflags, ": '", f, "' is not one of G C H R");
    auto has_flag = [&](char f) { return o.bflags.find(f) != std::string::npos; };
    const bnorm_flags flags = (has_flag('C') ? bnorm_flags::use_scale : bnorm_flags::none)
            | (has_flag('H') ? bnorm_flags::use_shift : bnorm_flags::none)
            | (has_flag('R') ? bnorm_flags::fuse_relu : bnorm_flags::none);
    const tensor_desc src(parsed.src.dims(), parse_tag(o.btag, parsed.src.ndims()));
    kernel_recorder_t rec;
    std::string impl, info;
    if (o.bdir == "BWD_D" || o.bdir == "BWD_DW") {
        const bnorm_bwd op({src, {}, {}, parsed.epsilon, flags, has_flag('G')});
        impl = op.impl_name(), info = op.impl_info();
    } else {
        // FWD_D with G: a forward with given statistics, which is inference.
        const bool training = o.bdir == "FWD_D" && !has_flag('G');
        const bnorm_fwd op({training ? bnorm_mode::training : bnorm_mode::inference, src, {}, parsed.epsilon, flags});
        impl = op.impl_name(), info = op.impl_info();
    }
    const std::string problem = cat(o.bdesc, " ", to_string(src.tag()));
    made_t m = recorded(rec, impl, "bnorm", problem);
    // The driver's plan: the line of impl_info() after the name.
    const std::size_t nl = info.find('\n');
    const std::string conf = nl == std::string::npos ? "" : info.substr(nl + 1, info.find('\n', nl + 1) - nl - 1);
    std::printf("; op: bnorm, impl: %s, problem: %s, kernels: %zu\n; driver: %s\n", impl.c_str(), problem.c_str(),
            m.kernels.size(), conf.c_str());
    return m;
}

made_t create_rnn(const kg_options_t &o) {
    rnn_desc base;
    base.cell = rnn_cell_from(o.rnn_alg);
    base.activation = rnn_activation_from(o.rnn_act);
    if (base.cell != rnn_cell::vanilla_rnn) base.activation = eltwise_alg::tanh; // as blockdnn-bench
    base.direction = rnn_direction_from(o.rnn_dir);
    const rnn_desc parsed = parse_rnn_desc(o.rnn_text);
    rnn_desc d = base;
    for (dim_t rnn_desc::*f :
            {&rnn_desc::l, &rnn_desc::t, &rnn_desc::mb, &rnn_desc::sic, &rnn_desc::slc, &rnn_desc::dhc, &rnn_desc::dic})
        d.*f = parsed.*f;
    kernel_recorder_t rec;
    const rnn_fwd op(d);
    made_t m = recorded(rec, op.impl_name(), "rnn_fwd", d.str());
    // The plan, one item a line after the implementation's name: the problem first.
    const std::string info = op.impl_info();
    std::string plan = info.substr(info.find('\n') + 1);
    std::printf("; op: rnn_fwd, impl: %s, problem: %s (%s), kernels: %zu\n", op.impl_name(),
            plan.substr(0, plan.find('\n')).c_str(), op.desc().str().c_str(), m.kernels.size());
    for (std::size_t i = 0; (i = plan.find('\n', i)) != std::string::npos; i += 3) plan.replace(i, 1, "\n; ");
    std::printf("; plan:\n; %s\n", plan.c_str());
    m.numbered = true; // the layer GEMM's and the step's brgemm kernels share a name
    return m;
}

made_t create_gemm(const kg_options_t &o) {
    const isa level = max_isa();
    std::shared_ptr<gemm_jit_t> g;
    {
        std::unique_ptr<gemm_jit_t> u;
        std::string why;
        if (status st = gemm_jit_t::create(u, level, o.gm, o.gn, o.gk, o.gk, o.gn, 0.f, why); st != status::success)
            fail(st, why);
        g = std::move(u);
    }
    const auto ks = g->kernels();
    // The plan depends on the thread count (the panel width for few rows, streaming C).
    std::printf("; op: gemm, impl: jit:%s, problem: M%lldN%lldK%lld, threads: %d, plan: %s, kernels: %zu\n",
            to_string(level), static_cast<long long>(o.gm), static_cast<long long>(o.gn), static_cast<long long>(o.gk),
            get_num_threads(), g->str().c_str(), ks.size());
    made_t m;
    for (const brgemm_kernel_t *k : ks) {
        m.what.push_back(to_string(k->conf()));
        m.kernels.push_back(&k->generator());
    }
    m.keep = g;
    m.level = level;
    return m;
}

// Prints the disassembly of every kernel, or writes DIR/<kernel>[.<n>].<isa>.{asm,bin}: <n>,
// its place in the list, for labelled kernels and for kernels sharing a name with another,
// so no file overwrites another.
void dump(const made_t &m, const std::string &out_dir, dump_format fmt) {
    for (std::size_t i = 0; i < m.kernels.size(); ++i) {
        const jit_generator_t &k = *m.kernels[i];
        const std::string what = m.what.empty() ? std::string() : m.what[i];
        if (out_dir.empty()) {
            std::printf(what.empty() ? "\n%s%s" : "\n; %s\n%s", what.c_str(), disassemble(k).c_str());
            continue;
        }
        const bool numbered = m.numbered || !what.empty()
                || std::count_if(m.kernels.begin(), m.kernels.end(), [&](const jit_generator_t *o) {
                       return o->name() == k.name();
                   }) > 1;
        const std::string stem =
                numbered ? cat(k.name(), ".", i, ".", to_string(m.level)) : cat(k.name(), ".", to_string(m.level));
        std::vector<std::string> paths;
        std::string why;
        if (status st = dump_kernel(k, out_dir, stem, fmt, paths, why); st != status::success) fail(st, why);
        for (const std::string &path : paths)
            std::printf("wrote %s (%s%s%s, %zu bytes of code and pool)\n", path.c_str(), what.c_str(),
                    what.empty() ? "" : ": ", k.name().c_str(), k.code_size());
    }
}

// Adds the options of each op (after the descriptor too: --isa, --out and --format fall through).
CLI::App *add_eltwise(CLI::App &app, kg_options_t &o) {
    CLI::App *c = app.add_subcommand(
            "eltwise", "eltwise_fwd kernels (DESCRIPTOR: [--alg=ALG] [--alpha=F] [--beta=F] [--tag=TAG] DIMS)");
    c->add_option("--alg", o.alg, "relu tanh sigmoid exp log elu gelu_tanh gelu_erf swish clip linear");
    c->add_option("--alpha", o.alpha, "alpha (relu slope, elu scale, swish beta, clip lower bound, linear scale)");
    c->add_option("--beta", o.beta, "beta (clip upper bound, linear shift)");
    c->add_option("--tag", o.tag, "abx, axb, aBx8b, aBx16b or a blockdnn tag");
    c->add_option("DIMS", o.dims, "dims, e.g. 8x16x56x56")->required();
    return c;
}

CLI::App *add_softmax(CLI::App &app, kg_options_t &o) {
    CLI::App *c = app.add_subcommand("softmax", "softmax_fwd kernels (DESCRIPTOR: [--axis=N] [--tag=TAG] DIMS)");
    c->add_option("--axis", o.smx_axis, "the logical dim of the softmax (default 1, as in benchdnn)");
    c->add_option("--tag", o.smx_tag, "abx (default), axb, aBx8b, aBx16b or a blockdnn tag");
    c->add_option("DIMS", o.smx_dims, "dims, e.g. 64x1000")->required();
    return c;
}

CLI::App *add_binary(CLI::App &app, kg_options_t &o) {
    CLI::App *c = app.add_subcommand("binary",
            "binary_fwd kernels (DESCRIPTOR: [--alg=ALG] [--tag=TAG] [--src1-tag=TAG] [--post-ops=CHAIN] "
            "SRC0DIMS:SRC1DIMS)");
    c->add_option("--alg", o.bin_alg, "add (default) or mul, any case");
    c->add_option("--tag", o.bin_tag, "src0 and dst layout: abx (default), axb, aBx8b, aBx16b or a blockdnn tag");
    c->add_option("--src1-tag", o.bin_src1_tag, "src1 layout: abx (default), axb, aBx8b, aBx16b or a blockdnn tag");
    c->add_option("--post-ops", o.po_text, "post-op chain, e.g. sum:1+relu:0:0");
    c->add_option("DESCRIPTOR", o.bin_desc, "src0's and src1's dims, e.g. 8x64x56x56:1x64x1x1")->required();
    return c;
}

CLI::App *add_rnn(CLI::App &app, kg_options_t &o) {
    CLI::App *c = app.add_subcommand(
            "rnn", "rnn_fwd kernels (DESCRIPTOR: [--alg=ALG] [--activation=ACT] [--direction=DIR] lXtXmbX_sicX...)");
    c->add_option("--alg", o.rnn_alg, "VANILLA_LSTM, VANILLA_GRU, LBR_GRU or VANILLA_RNN");
    c->add_option("--activation", o.rnn_act, "RELU (default, as in benchdnn), TANH or LOGISTIC (vanilla RNN)");
    c->add_option("--direction", o.rnn_dir, "left2right, right2left, concat or sum");
    c->add_option("DESCRIPTOR", o.rnn_text, "e.g. l1t50mb64sic512slc512dhc512dic512")->required();
    return c;
}

CLI::App *add_gemm(CLI::App &app, kg_options_t &o) {
    CLI::App *c = app.add_subcommand("gemm", "brgemm kernels of C[M x N] = A[M x K] * B (packed B)");
    const auto range = CLI::Range(std::int64_t(1), std::int64_t(1) << 31);
    c->add_option("M", o.gm, "rows of A and C")->required()->check(range);
    c->add_option("N", o.gn, "columns of B and C")->required()->check(range);
    c->add_option("K", o.gk, "columns of A, rows of B")->required()->check(range);
    return c;
}

CLI::App *add_bnorm(CLI::App &app, kg_options_t &o) {
    CLI::App *c = app.add_subcommand(
            "bnorm", "bnorm kernels (DESCRIPTOR: [--dir=DIR] [--flags=FLAGS] [--tag=TAG] mbXicX_ihX...)");
    c->add_option("--dir", o.bdir, "FWD_D (training), FWD_I (inference), BWD_D, BWD_DW")
            ->check(CLI::IsMember({"FWD_D", "FWD_I", "BWD_D", "BWD_DW"}));
    c->add_option("--flags", o.bflags, "letters of G C H R");
    c->add_option("--tag", o.btag, "aBx16b, aBx8b, abx, axb or a blockdnn tag");
    c->add_option("DESCRIPTOR", o.bdesc, "e.g. mb16ic64ih56")->required();
    return c;
}

CLI::App *add_conv(CLI::App &app, kg_options_t &o) {
    CLI::App *c = app.add_subcommand("conv",
            "conv_fwd kernels (DESCRIPTOR: benchdnn conv descriptor [--stag=TAG] "
            "[--dtag=TAG] [--bias] [--post-ops=CHAIN])");
    c->add_option("DESCRIPTOR", o.conv_desc_text, "e.g. mb1ic64ih56oc64oh56kh3ph1")->required();
    c->add_option("--stag", o.stag, "src layout (default: the ISA's blocked one; plain for ic <= 4)");
    c->add_option("--dtag", o.dtag, "dst layout (default: src's; the ISA's blocked one after a plain src)");
    c->add_flag("--bias", o.with_bias, "with bias");
    c->add_option("--post-ops", o.po_text, "post-op chain, e.g. sum:1+relu:0:0");
    return c;
}

// One row per op, in --help's order: its options and its create.
struct kg_op_t {
    const char *name;
    CLI::App *(*add)(CLI::App &, kg_options_t &);
    made_t (*create)(const kg_options_t &);
};
const kg_op_t kg_ops[] = {
        {"eltwise", add_eltwise, create_eltwise},
        {"softmax", add_softmax, create_softmax},
        {"binary", add_binary, create_binary},
        {"rnn", add_rnn, create_rnn},
        {"gemm", add_gemm, create_gemm},
        {"bnorm", add_bnorm, create_bnorm},
        {"conv", add_conv, create_conv},
};

// The ISA whose kernels to show. kernelgen sets the cap itself, which would hide the
// environment's: BLOCKDNN_MAX_ISA picks the ISA where --isa is not given, as it caps every
// other program, and --isa given beside a different one says which won. Called before
// kernelgen sets the cap, so max_isa() is the variable's (it refuses an unknown name) or,
// unset, avx512_core, the --isa default.
isa kernel_isa(const std::string &isa_name, bool given) {
    const isa from_env = max_isa();
    const char *env = std::getenv("BLOCKDNN_MAX_ISA");
    if (given) {
        const isa level = isa_from_string(isa_name);
        if (env && *env && level != from_env)
            std::fprintf(stderr, "kernelgen: --isa=%s overrides BLOCKDNN_MAX_ISA=%s\n", isa_name.c_str(), env);
        return level;
    }
    if (from_env == isa::scalar)
        fail(status::invalid_arguments, "BLOCKDNN_MAX_ISA=", env,
                " leaves no JIT kernel to show; pass --isa=avx512 or --isa=avx2");
    return from_env;
}

} // namespace

int main(int argc, char **argv) {
    CLI::App app {"kernelgen: generate the JIT kernels an op would use for a problem, without running them,\n"
                  "and print or write their disassembly and code bytes.\n"
                  "Usage: kernelgen OP DESCRIPTOR [--isa=avx512|avx2] [--out=DIR] [--format=asm|bin|both]"};
    app.footer(footer);
    std::string isa_name = "avx512", out_dir, format;
    app.add_option("--isa", isa_name,
               "ISA cap: avx512 (avx512_core) or avx2; default BLOCKDNN_MAX_ISA where set, else avx512; "
               "kernels are generated, never run, so any CPU shows either")
            ->transform(CLI::IsMember({"avx512", "avx512_core", "avx2"}, CLI::ignore_case));
    app.add_option("--out", out_dir, "write files into this existing directory instead of printing")
            ->check(CLI::ExistingDirectory);
    app.add_option("--format", format, "asm, bin or both (default: both with --out, asm without; bin needs --out)")
            ->check(CLI::IsMember({"asm", "bin", "both"}));
    app.require_subcommand(1);
    kg_options_t o;
    for (const kg_op_t &op : kg_ops) op.add(app, o)->fallthrough();
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError &e) {
        return app.exit(e) == 0 ? 0 : 2; // --help is a ParseError with exit code 0
    }
    try {
        if (format.empty()) format = out_dir.empty() ? "asm" : "both";
        if (out_dir.empty() && format != "asm")
            fail(status::invalid_arguments, "--format=", format, " needs --out=DIR");
        const dump_format fmt = format == "asm" ? dump_format::asm_text
                : format == "bin"               ? dump_format::bin
                                                : dump_format::both;
        // kernelgen only generates kernels, never runs them, so it may show any ISA's on any CPU.
        const isa level = kernel_isa(isa_name, app.count("--isa") > 0);
        impl::assume_cpu_isa(level);
        set_max_isa(level);
        const std::string name = app.get_subcommands().front()->get_name();
        const kg_op_t &op =
                *std::find_if(std::begin(kg_ops), std::end(kg_ops), [&](const kg_op_t &r) { return name == r.name; });
        dump(op.create(o), out_dir, fmt);
    } catch (const error &e) {
        std::fprintf(stderr, "kernelgen: %s\n", e.what());
        return e.code() == status::invalid_arguments ? 2 : 1;
    }
    return 0;
}
