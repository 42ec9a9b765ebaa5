// SPDX-License-Identifier: Apache-2.0
// benchdnn problems into op specs: the library's descriptor parsers (src/core/prb_parse and
// blockdnn/{bnorm,rnn,softmax}.hpp) plus the option words of benchdnn's conv, bnorm, rnn, pool,
// eltwise and softmax drivers (see spec.hpp).
#include "driver/spec.hpp"

#include <algorithm>
#include <bitset>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <iterator>
#include <vector>

#include "core/prb_parse.hpp"
#include "core/utils.hpp"
#include "tensor/layout.hpp"

namespace bdrv {

using namespace blockdnn;
using blockdnn::impl::cat;
using blockdnn::impl::fail;

namespace {

std::string lower(std::string s) {
    for (char &c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// A valid problem this driver does not run.
template <typename... Args>
[[noreturn]] void unsupported(Args &&...args) {
    fail(status::unimplemented, std::forward<Args>(args)...);
}

float parse_float(const std::string &text, const std::string &what) {
    const char *b = text.c_str();
    char *e = nullptr;
    const float v = std::strtof(b, &e);
    if (text.empty() || *e != '\0' || !std::isfinite(v))
        fail(status::invalid_arguments, what, ": '", text, "' is not a finite number");
    return v;
}

long parse_count(const std::string &text, const std::string &what) {
    if (text.empty() || text.size() > 9
            || !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
        fail(status::invalid_arguments, what, ": '", text, "' is not a non-negative integer below 10^9");
    return std::stol(text);
}

bool parse_bool(const std::string &text, const std::string &what) {
    const std::string t = lower(text);
    if (t == "true" || t == "1") return true;
    if (t == "false" || t == "0" || t.empty()) return false;
    fail(status::invalid_arguments, what, ": '", text, "' is not true or false");
}

// The data type names benchdnn's --dt takes (oneDNN's dnnl_data_type_t without the prefix).
bool benchdnn_data_type(const std::string &w) {
    static const char *const names[] = {"undef", "f16", "bf16", "f32", "s32", "s8", "u8", "f64", "boolean", "f8_e5m2",
            "f8_e4m3", "s4", "u4", "e8m0", "f4_e2m1", "f4_e3m0"};
    return std::find(std::begin(names), std::end(names), w) != std::end(names);
}

// benchdnn's binary post-op algorithms ("max:f32:per_oc"); add and mul, and the long forms
// (binary_max, dw_k3s1p1), are caught by prefix.
bool is_benchdnn_binary_alg(const std::string &w) {
    static const char *const names[] = {"sub", "div", "max", "min", "ge", "gt", "le", "lt", "eq", "ne", "select"};
    return std::find(std::begin(names), std::end(names), w) != std::end(names);
}

// --dt / --cfg: f32 everywhere ("f32", "f32:f32:f32"). A --dt word that is no data type at
// all is a malformed problem; a real one other than f32 is a problem blockdnn does not run.
void require_f32(const problem_t &p, const char *key) {
    const std::string v = lower(p.opt(key, "f32"));
    std::size_t i = 0;
    while (i <= v.size()) {
        const std::size_t c = std::min(v.find(':', i), v.size());
        const std::string w = v.substr(i, c - i);
        if (w != "f32" && std::string(key) == "dt" && !benchdnn_data_type(w))
            fail(status::invalid_arguments, "--dt=", p.opt(key), ": '", w,
                    "' is not a data type (f32, bf16, f16, s8, u8, ...)");
        if (w != "f32") unsupported("--", key, "=", p.opt(key), ": only f32 is implemented");
        i = c + 1;
    }
}

// Both type options of a problem: older lists give a convolution's types by --cfg (u8s8u8),
// newer ones every op's by --dt.
void require_f32_types(const problem_t &p) {
    require_f32(p, "cfg");
    require_f32(p, "dt");
}

// Options that select data types, quantization or other features blockdnn does not have:
// only their default (empty) value runs.
void require_default(const problem_t &p, std::initializer_list<const char *> keys) {
    for (const char *k : keys)
        if (!p.opt(k).empty()) unsupported("--", k, "=", p.opt(k), " is not implemented");
}

// Whether a word can be a oneDNN tag: benchdnn's letters for dims (from a, capital where
// blocked, x for all the spatial ones) with block sizes, as in acdb, aBcd16b, ABx16a16b, or
// oneDNN's named tags (nhwc, ohwi, OIhw16i16o, tnc, ldigo): letters a-l, n, o, t, w, x and digits.
bool onednn_tag_like(const std::string &w) {
    if (w.empty() || std::isdigit(static_cast<unsigned char>(w[0]))) return false;
    return std::all_of(w.begin(), w.end(), [](char ch) {
        const char l = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        return std::isdigit(static_cast<unsigned char>(ch)) || (l >= 'a' && l <= 'l') || l == 'n' || l == 'o'
                || l == 't' || l == 'w' || l == 'x';
    });
}

// A layout word blockdnn cannot run: a skip where it can name a layout (one blockdnn knows,
// or a oneDNN tag it lacks), invalid where it cannot (a typo).
[[noreturn]] void refuse_layout(const char *key, const std::string &v, const std::string &why) {
    if (impl::find_tag(v.c_str()) == format_tag::undef && !onednn_tag_like(v))
        fail(status::invalid_arguments, "--", key, "=", v, ": not a layout name (", why, ")");
    unsupported("--", key, "=", v, ": ", why);
}

// An rnn --tag part blockdnn cannot run: invalid where it cannot be a layout name, as in
// refuse_layout, else a skip naming the layouts it runs.
[[noreturn]] void refuse_rnn_tag(const std::string &tag, const std::string &w, bool weights) {
    if (!onednn_tag_like(w)) fail(status::invalid_arguments, "--tag=", tag, ": '", w, "' is not a layout name");
    unsupported("--tag=", tag, ": ", weights ? "weights" : "data", " layout '", w, "' (",
            weights ? "ldigo/abcde, ldgoi/abdec" : "tnc/abc, ntc/bac", " or any)");
}

// A layout word: any (the ISA's choice) or one parse_tag knows for `ndims` dims.
std::string layout_word(const problem_t &p, const char *key, int ndims, const std::string &dflt) {
    const std::string v = p.opt(key, dflt);
    if (v == "any") return v;
    try {
        (void)impl::parse_tag(v, ndims);
    } catch (const error &e) {
        refuse_layout(key, v, e.what());
    }
    return v;
}

// The plain weights layout of the problem's rank: oiw, oihw, oidhw, or goiw, goihw, goidhw.
std::string plain_weights(const conv_desc &d, bool grouped) {
    return to_string(impl::plain_weights_tag(d.ndims, grouped));
}

// --wtag: any, a layout's name, or benchdnn's abx, the plain weights of the problem (grouped
// for g > 1). benchdnn reads an explicit g1 as grouped (goihw); conv_desc keeps no such g, so
// it is oihw here, the same bytes. benchdnn's other generic tags (axb: the input channels
// last; aBx8b, aBx16b) name no weights layout blockdnn has.
std::string weights_word(const problem_t &p, const conv_desc &d) {
    const std::string v = p.opt("wtag", "any");
    if (v == "abx") return plain_weights(d, d.g > 1);
    if (v == "axb" || v == "aBx8b" || v == "aBx16b")
        unsupported("--wtag=", v, ": only abx of the generic tags names a weights layout here (the plain weights)");
    return v;
}

// The minibatch: the command line's, else a file's --mb (0 keeps the descriptor's).
dim_t minibatch(const problem_t &p, long mb_override, dim_t desc_mb) {
    if (mb_override > 0) return mb_override;
    const long mb = parse_count(p.opt("mb", "0"), "--mb");
    return mb > 0 ? mb : desc_mb;
}

// The dims of a dims descriptor (eltwise, softmax) with its first dim, the minibatch, as
// minibatch() gives it. More than 2^34 elements (64 GiB of floats) is a malformed problem,
// checked without overflowing their count.
dims_t minibatch_dims(const problem_t &p, long mb_override, dims_t dims) {
    dims[0] = minibatch(p, mb_override, dims[0]);
    dim_t n = 1;
    for (dim_t d : dims)
        if (!impl::mul_no_overflow(n, d, n) || n > (dim_t(1) << 34))
            fail(status::invalid_arguments, p.driver, " '", p.desc, "': more than 2^34 elements");
    return dims;
}

std::string upper(std::string s) {
    for (char &c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return s;
}

// --dir of the drivers whose benchdnn directions are FWD_D, FWD_I and BWD_D (pool, eltwise,
// softmax): blockdnn runs `op` forward only.
void require_forward(const problem_t &p, const char *op) {
    const std::string dir = upper(p.opt("dir", "FWD_D"));
    if (dir == "BWD_D") unsupported("--dir=BWD_D: only forward ", op, " is implemented");
    if (dir != "FWD_D" && dir != "FWD_I")
        fail(status::invalid_arguments, "--dir=", p.opt("dir"), " is not FWD_D, FWD_I or BWD_D");
}

conv_spec_t conv_spec(const problem_t &p, long mb_override, std::string &str) {
    require_f32_types(p);
    require_default(p, {"attr-scales", "attr-zero-points", "attr-fpmath"});
    if (!p.opt("bia-dt").empty() && lower(p.opt("bia-dt")) != "f32")
        unsupported("--bia-dt=", p.opt("bia-dt"), ": only f32");
    const std::string alg = lower(p.opt("alg", "direct"));
    if (alg == "wino") unsupported("--alg=WINO: Winograd convolution is not implemented");
    if (alg != "direct" && alg != "auto")
        fail(status::invalid_arguments, "--alg=", p.opt("alg"), " is not DIRECT, WINO or AUTO");
    const std::string dir = upper(p.opt("dir", "FWD_B"));
    conv_spec_t s;
    if (dir == "FWD_B" || dir == "FWD_I") s.desc.with_bias = true;
    else if (dir == "FWD_D") s.desc.with_bias = false;
    else if (dir == "BWD_D" || dir == "BWD_W" || dir == "BWD_WB")
        unsupported("--dir=", p.opt("dir"), ": only forward convolution (FWD_B, FWD_D, FWD_I) is implemented");
    else fail(status::invalid_arguments, "--dir=", p.opt("dir"), " is not FWD_B, FWD_D, FWD_I, BWD_D, BWD_W or BWD_WB");
    const bool bias = s.desc.with_bias;
    s.desc = parse_conv_desc(p.desc);
    s.desc.with_bias = bias;
    s.desc.mb = minibatch(p, mb_override, s.desc.mb);
    s.desc.validate();
    s.stag = layout_word(p, "stag", s.desc.ndims, "any");
    s.dtag = layout_word(p, "dtag", s.desc.ndims, "any");
    s.wtag = weights_word(p, s.desc);
    if (s.wtag != "any") {
        format_tag t = format_tag::undef;
        try {
            t = format_tag_from_string(s.wtag);
        } catch (const error &e) {
            refuse_layout("wtag", s.wtag, e.what());
        }
        // A grouped layout (a leading g) holds any problem, g = 1 included; a plain one only g = 1.
        const bool grouped = impl::is_grouped_weights_tag(t);
        if (impl::layout_info(t).family != impl::layout_family::weights
                || ndims_of(t) != s.desc.ndims + (grouped ? 1 : 0))
            unsupported("--wtag=", s.wtag, ": not a weights layout of this problem's rank (",
                    plain_weights(s.desc, false), ", ", plain_weights(s.desc, true), " or a blocked form of them)");
        if (!grouped && s.desc.g > 1)
            unsupported("--wtag=", s.wtag, ": g = ", s.desc.g, " needs a grouped weights layout (",
                    plain_weights(s.desc, true), " or a blocked form of it)");
    }
    s.po = parse_benchdnn_post_ops(p.opt("attr-post-ops"));
    str = cat("--dir=", dir, s.stag != "any" ? " --stag=" + s.stag : "", s.wtag != "any" ? " --wtag=" + s.wtag : "",
            s.dtag != "any" ? " --dtag=" + s.dtag : "",
            s.po.empty() ? "" : " --attr-post-ops=" + p.opt("attr-post-ops"), " ", s.desc.str());
    return s;
}

bnorm_spec_t bnorm_spec(const problem_t &p, long mb_override, std::string &str) {
    require_f32_types(p);
    require_default(p, {"attr-post-ops", "attr-scales", "attr-zero-points"});
    bnorm_spec_t s;
    s.desc = parse_bnorm_desc(p.desc);
    dims_t dims = s.desc.src.dims();
    dims[0] = minibatch(p, mb_override, dims[0]);
    if (dims[1] < 1 || dims[0] < 1) fail(status::invalid_arguments, "bnorm '", p.desc, "': mb and ic must be positive");
    s.desc.src = tensor_desc(dims, s.desc.src.tag());
    const std::string dir = upper(p.opt("dir", "FWD_D"));
    if (dir == "FWD_D") {
    } else if (dir == "FWD_I") s.inference = true;
    else if (dir == "BWD_D") s.backward = true;
    else if (dir == "BWD_DW") s.backward = s.with_diff_scale_shift = true;
    else fail(status::invalid_arguments, "--dir=", p.opt("dir"), " is not FWD_D, FWD_I, BWD_D or BWD_DW");
    for (char f : p.opt("flags")) {
        switch (f) {
        case 'G': s.global_stats = true; break;
        case 'C': s.use_scale = true; break;
        case 'H': s.use_shift = true; break;
        case 'R': s.fuse_relu = true; break;
        case 'A': unsupported("--flags=", p.opt("flags"), ": 'A' (fused add + relu) is not implemented");
        case 'M': unsupported("--flags=", p.opt("flags"), ": 'M' (mask) is not implemented");
        default: fail(status::invalid_arguments, "--flags=", p.opt("flags"), ": '", f, "' is not one of G C H R A M");
        }
    }
    s.inplace = parse_bool(p.opt("inplace", "false"), "--inplace");
    s.tag = layout_word(p, "tag", s.desc.src.ndims(), "any");
    str = cat("--dir=", dir, p.opt("flags").empty() ? "" : " --flags=" + p.opt("flags"),
            s.tag != "any" ? " --tag=" + s.tag : "", s.inplace ? " --inplace=true" : "", " ", s.desc.str());
    return s;
}

rnn_spec_t rnn_spec(const problem_t &p, long mb_override, std::string &str) {
    require_f32_types(p);
    require_default(p, {"scaling", "attr-fpmath", "flags", "attr-post-ops"});
    for (const char *k : {"with-peephole", "with-projection"})
        if (parse_bool(p.opt(k, "false"), cat("--", k))) unsupported("--", k, "=true is not implemented");
    // benchdnn's --skip-nonlinear=true makes its reference linear so long chains stay
    // comparable; blockdnn's reference computes the real activations in double, so the same
    // shapes are checked with them.
    (void)parse_bool(p.opt("skip-nonlinear", "false"), "--skip-nonlinear");
    (void)parse_bool(p.opt("trivial-strides", "false"), "--trivial-strides");
    const std::string prop = upper(p.opt("prop", "FWD_I"));
    if (prop == "BWD_DW" || prop == "BWD_D") unsupported("--prop=", p.opt("prop"), ": only forward RNN is implemented");
    if (prop != "FWD_I" && prop != "FWD_D")
        fail(status::invalid_arguments, "--prop=", p.opt("prop"), " is not FWD_I, FWD_D or BWD_DW");
    rnn_desc base;
    const std::string alg = upper(p.opt("alg", "VANILLA_LSTM"));
    if (alg == "VANILLA_LSTM") base.cell = rnn_cell::lstm;
    else if (alg == "VANILLA_GRU") base.cell = rnn_cell::gru;
    else if (alg == "LBR_GRU") base.cell = rnn_cell::lbr_gru;
    else if (alg == "VANILLA_RNN") base.cell = rnn_cell::vanilla_rnn;
    else if (alg == "VANILLA_AUGRU" || alg == "LBR_AUGRU")
        unsupported("--alg=", p.opt("alg"), ": AUGRU cells are not implemented");
    else
        fail(status::invalid_arguments, "--alg=", p.opt("alg"),
                " is not VANILLA_LSTM, VANILLA_GRU, LBR_GRU or VANILLA_RNN");
    // benchdnn's default activation (vanilla RNN only) is RELU; UNDEF is its "not given".
    const std::string act = upper(p.opt("activation", "UNDEF"));
    if (act == "UNDEF" || act == "RELU") base.activation = eltwise_alg::relu;
    else if (act == "TANH") base.activation = eltwise_alg::tanh;
    else if (act == "LOGISTIC") base.activation = eltwise_alg::sigmoid;
    else fail(status::invalid_arguments, "--activation=", p.opt("activation"), " is not RELU, TANH, LOGISTIC or UNDEF");
    if (base.cell != rnn_cell::vanilla_rnn) base.activation = eltwise_alg::tanh;
    const std::string dir = lower(p.opt("direction", "left2right"));
    if (dir == "left2right") base.direction = rnn_direction::l2r;
    else if (dir == "right2left") base.direction = rnn_direction::r2l;
    else if (dir == "concat") base.direction = rnn_direction::bi_concat;
    else if (dir == "sum") base.direction = rnn_direction::bi_sum;
    else
        fail(status::invalid_arguments, "--direction=", p.opt("direction"),
                " is not left2right, right2left, concat or sum");
    rnn_spec_t s;
    // --tag=SRC:WEI:DST (benchdnn's "tnc:any:tnc"); abc = tnc, bac = ntc.
    const std::string tag = p.opt("tag", "tnc:any:tnc");
    std::vector<std::string> parts;
    for (std::size_t i = 0; i <= tag.size();) {
        const std::size_t c = std::min(tag.find(':', i), tag.size());
        parts.push_back(tag.substr(i, c - i));
        i = c + 1;
    }
    if (parts.size() != 3) fail(status::invalid_arguments, "--tag=", tag, ": expected SRC:WEI:DST, e.g. tnc:any:tnc");
    auto act_tag = [&](const std::string &w) {
        if (w == "tnc" || w == "abc" || w == "any") return format_tag::tnc;
        if (w == "ntc" || w == "bac") return format_tag::ntc;
        refuse_rnn_tag(tag, w, false);
    };
    base.src_layer_tag = act_tag(parts[0]);
    base.dst_layer_tag = act_tag(parts[2]);
    if (parts[1] == "ldigo" || parts[1] == "abcde" || parts[1] == "any")
        s.wei_tag = parts[1] == "any" ? "any" : "ldigo";
    else if (parts[1] == "ldgoi" || parts[1] == "abdec") s.wei_tag = "ldgoi";
    else refuse_rnn_tag(tag, parts[1], true);
    // The descriptor gives the sizes; the options, the rest.
    const rnn_desc parsed = parse_rnn_desc(p.desc);
    s.desc = base;
    for (dim_t rnn_desc::*f :
            {&rnn_desc::l, &rnn_desc::t, &rnn_desc::mb, &rnn_desc::sic, &rnn_desc::slc, &rnn_desc::dhc, &rnn_desc::dic})
        s.desc.*f = parsed.*f;
    if (!p.opt("l").empty()) s.desc.l = parse_count(p.opt("l"), "--l");
    if (!p.opt("t").empty()) s.desc.t = parse_count(p.opt("t"), "--t");
    s.desc.mb = minibatch(p, mb_override, s.desc.mb);
    const std::pair<const char *, dim_t> sizes[] = {{"l", s.desc.l}, {"t", s.desc.t}, {"mb", s.desc.mb},
            {"sic", s.desc.sic}, {"slc", s.desc.slc}, {"dhc", s.desc.dhc}, {"dic", s.desc.dic}};
    for (const auto &[key, v] : sizes)
        if (v < 1 || v > (dim_t(1) << 20))
            fail(status::invalid_arguments, "rnn '", p.desc, "': ", key, " = ", v, " is not in [1, 2^20] (",
                    s.desc.str(), ")");
    if (s.desc.sic != s.desc.dhc)
        unsupported("sic = ", s.desc.sic, " differs from dhc = ", s.desc.dhc, " (not implemented)");
    if (s.desc.dic != s.desc.dhc)
        unsupported("dic = ", s.desc.dic, " differs from dhc = ", s.desc.dhc, " (LSTM projection is not implemented)");
    // The library's other rules (slc = dhc past the first layer): a malformed problem.
    s.desc.validate();
    // benchdnn's names, so that the printed problem reads back in.
    const char *act_name = base.activation == eltwise_alg::relu ? "RELU"
            : base.activation == eltwise_alg::tanh              ? "TANH"
                                                                : "LOGISTIC";
    str = cat("--alg=", alg, base.cell == rnn_cell::vanilla_rnn ? cat(" --activation=", act_name) : "",
            " --direction=", dir, tag != "tnc:any:tnc" ? " --tag=" + tag : "", " ", s.desc.str());
    return s;
}

pool_spec_t pool_spec(const problem_t &p, long mb_override, std::string &str) {
    require_f32_types(p);
    require_default(p, {"attr-post-ops"});
    require_forward(p, "pooling");
    const std::string alg = lower(p.opt("alg", "max"));
    pool_alg a = pool_alg::max;
    if (alg == "max") a = pool_alg::max;
    else if (alg == "avg_np") a = pool_alg::avg_exclude_pad;
    else if (alg == "avg_p") a = pool_alg::avg_include_pad;
    else fail(status::invalid_arguments, "--alg=", p.opt("alg"), " is not max, avg_np or avg_p");
    pool_spec_t s;
    s.desc = parse_pool_desc(p.desc, a);
    s.desc.mb = minibatch(p, mb_override, s.desc.mb);
    s.desc.validate();
    s.tag = layout_word(p, "tag", s.desc.ndims, "any");
    str = cat("--alg=", alg, s.tag != "any" ? " --tag=" + s.tag : "", " ", s.desc.str());
    return s;
}

eltwise_spec_t eltwise_spec(const problem_t &p, long mb_override, std::string &str) {
    require_f32_types(p);
    require_forward(p, "eltwise");
    eltwise_spec_t s;
    s.dims = minibatch_dims(p, mb_override, impl::parse_dims(p.desc));
    s.alg = eltwise_alg_from_benchdnn(p.opt("alg", "relu"), "--alg");
    s.alpha = parse_float(p.opt("alpha", "0"), "--alpha");
    s.beta = parse_float(p.opt("beta", "0"), "--beta");
    s.inplace = parse_bool(p.opt("inplace", "false"), "--inplace");
    // The library's rules (clip's alpha <= beta, ...): a malformed problem, not one to skip.
    eltwise_desc {s.alg, s.alpha, s.beta, s.dims}.validate();
    s.tag = layout_word(p, "tag", static_cast<int>(s.dims.size()), "abx");
    std::string dims;
    for (std::size_t i = 0; i < s.dims.size(); ++i) dims += cat(i ? "x" : "", s.dims[i]);
    str = cat("--alg=", to_string(s.alg), " --alpha=", s.alpha, " --beta=", s.beta, " --tag=", s.tag,
            s.inplace ? " --inplace=true" : "", " ", dims);
    return s;
}

softmax_spec_t softmax_spec(const problem_t &p, long mb_override, std::string &str) {
    require_f32_types(p);
    require_default(p, {"attr-post-ops", "attr-scales"});
    require_forward(p, "softmax");
    // benchdnn's algorithms: SOFTMAX (softmax_accurate) and LOGSOFTMAX (softmax_log).
    const std::string alg = lower(p.opt("alg", "softmax"));
    if (alg == "logsoftmax" || alg == "softmax_log")
        unsupported("--alg=", p.opt("alg"), ": only SOFTMAX is implemented");
    if (alg != "softmax" && alg != "softmax_accurate")
        fail(status::invalid_arguments, "--alg=", p.opt("alg"), " is not SOFTMAX or LOGSOFTMAX");
    softmax_spec_t s;
    // The parser checks the axis against the rank (softmax_desc::validate).
    const long axis = parse_count(p.opt("axis", "1"), "--axis");
    s.desc = parse_softmax_desc(p.desc, static_cast<int>(axis));
    s.desc.dims = minibatch_dims(p, mb_override, s.desc.dims);
    s.inplace = parse_bool(p.opt("inplace", "false"), "--inplace");
    // benchdnn's newer lists give the layouts as --stag and --dtag; the case runs one layout for
    // both, so a --dtag of another layout is skipped, not run as --stag's.
    const int nd = static_cast<int>(s.desc.dims.size());
    s.tag = layout_word(p, p.opt("stag", "").empty() ? "tag" : "stag", nd, "abx");
    const std::string dtag = p.opt("dtag", "");
    if (!dtag.empty() && layout_word(p, "dtag", nd, "abx") != s.tag)
        unsupported("--dtag=", dtag, " differs from the source layout ", s.tag, ": the case runs one layout");
    str = cat("--tag=", s.tag, s.inplace ? " --inplace=true" : "", " ", s.desc.str());
    return s;
}

// The descriptor's name: after the first 'n' that starts it, quotes dropped.
std::string name_of(const std::string &driver, const std::string &desc) {
    if (driver == "eltwise" || driver == "softmax") {
        const std::size_t n = desc.find('n');
        std::string s = n == std::string::npos ? "" : desc.substr(n + 1);
        s.erase(std::remove(s.begin(), s.end(), '"'), s.end());
        return s;
    }
    std::string name;
    if (driver == "conv") (void)parse_conv_desc(desc, &name);
    else if (driver == "pool") (void)parse_pool_desc(desc, pool_alg::max, &name);
    else if (driver == "rnn") (void)parse_rnn_desc(desc, &name);
    else if (driver == "bnorm") (void)parse_bnorm_desc(desc, &name);
    name.erase(std::remove(name.begin(), name.end(), '"'), name.end());
    return name;
}

} // namespace

bool match_pattern(const std::string &pattern, const std::string &text) {
    // Atoms: a literal (or '\\'-escaped) character, '.', or a bracket class ("[0-9]",
    // "[^a-z_]"), each optionally followed by '*'. An atom is the set of characters it takes.
    struct atom_t {
        std::bitset<256> set;
        bool star = false;
    };
    const auto bad = [&](std::size_t i, const std::string &why) {
        fail(status::invalid_arguments, "--match=", pattern, ": ", why, " at position ", i,
                " (patterns use literals, '.', '[...]' classes, '*' and '\\')");
    };
    std::vector<atom_t> atoms;
    for (std::size_t i = 0; i < pattern.size(); ++i) {
        const char c = pattern[i];
        atom_t a;
        if (c == '\\') {
            if (++i == pattern.size()) bad(i - 1, "'\\' ends the pattern");
            a.set.set(static_cast<unsigned char>(pattern[i]));
        } else if (c == '.') {
            a.set.set();
        } else if (c == '*') {
            if (atoms.empty() || atoms.back().star) bad(i, "'*' repeats nothing");
            atoms.back().star = true;
            continue;
        } else if (c == '[') {
            const std::size_t open = i++;
            const bool negate = i < pattern.size() && pattern[i] == '^';
            if (negate) ++i;
            bool first = true;
            for (; i < pattern.size() && (pattern[i] != ']' || first); ++i, first = false) {
                unsigned char lo = static_cast<unsigned char>(pattern[i]);
                if (pattern[i] == '\\' && i + 1 < pattern.size()) lo = static_cast<unsigned char>(pattern[++i]);
                unsigned char hi = lo;
                if (i + 2 < pattern.size() && pattern[i + 1] == '-' && pattern[i + 2] != ']') {
                    hi = static_cast<unsigned char>(pattern[i + 2]);
                    i += 2;
                    if (hi < lo) bad(i, "a class range runs backwards");
                }
                for (unsigned v = lo; v <= hi; ++v) a.set.set(v);
            }
            if (i == pattern.size()) bad(open, "'[' has no closing ']'");
            if (negate) a.set.flip();
        } else if (std::string("](){}|+?^$").find(c) != std::string::npos) {
            bad(i, cat("'", c, "' is not supported"));
        } else {
            a.set.set(static_cast<unsigned char>(c));
        }
        atoms.push_back(a);
    }
    // reach[k]: the atoms before k match the text read so far (an NFA run: linear in each).
    std::vector<char> reach(atoms.size() + 1, 0), next(atoms.size() + 1);
    auto close = [&](std::vector<char> &r) {
        for (std::size_t k = 0; k < atoms.size(); ++k)
            if (r[k] && atoms[k].star) r[k + 1] = 1;
    };
    reach[0] = 1;
    close(reach);
    for (char t : text) {
        std::fill(next.begin(), next.end(), 0);
        for (std::size_t k = 0; k < atoms.size(); ++k)
            if (reach[k] && atoms[k].set.test(static_cast<unsigned char>(t))) next[atoms[k].star ? k : k + 1] = 1;
        close(next);
        reach.swap(next);
    }
    return reach[atoms.size()] != 0;
}

eltwise_alg eltwise_alg_from_benchdnn(const std::string &word, const std::string &what) {
    std::string w = lower(word);
    if (w.rfind("eltwise_", 0) == 0) w = w.substr(8); // older batch files: eltwise_relu
    try {
        return eltwise_alg_from_string(w);
    } catch (const error &) {
        // benchdnn's eltwise algorithm names, current and older: these are problems blockdnn
        // does not run; any other word is a typo.
        static const char *const benchdnn_algs[] = {"abs", "bounded_relu", "brelu", "clip", "clip_v2", "clip_v2_dst",
                "elu", "elu_dst", "exp", "exp_dst", "gelu", "gelu_erf", "gelu_tanh", "hardsigmoid", "hardswish",
                "linear", "log", "logistic", "logistic_dst", "logsigmoid", "mish", "pow", "relu", "relu_dst", "round",
                "soft_relu", "soft_relu_v2", "sqrt", "sqrt_dst", "square", "srelu", "swish", "tanh", "tanh_dst"};
        const char *const ours = "relu tanh logistic exp log elu gelu_tanh gelu_erf swish clip linear";
        const std::string long_dst = "_use_dst_for_bwd"; // relu_use_dst_for_bwd is relu_dst
        if (w.size() > long_dst.size() && w.compare(w.size() - long_dst.size(), long_dst.size(), long_dst) == 0)
            w = w.substr(0, w.size() - long_dst.size()) + "_dst";
        if (std::find(std::begin(benchdnn_algs), std::end(benchdnn_algs), w) == std::end(benchdnn_algs))
            fail(status::invalid_arguments, what, "=", word, ": not an eltwise algorithm (blockdnn has ", ours, ")");
        unsupported(what, "=", word, ": not an eltwise function of blockdnn (", ours, ")");
    }
}

post_ops parse_benchdnn_post_ops(const std::string &text) {
    post_ops po;
    std::size_t i = 0;
    if (!text.empty() && text.back() == '+')
        fail(status::invalid_arguments, "--attr-post-ops=", text, ": an empty item");
    while (i < text.size()) {
        const std::size_t end = std::min(text.find('+', i), text.size());
        const std::string item = text.substr(i, end - i);
        std::vector<std::string> f;
        for (std::size_t j = 0; j <= item.size();) {
            const std::size_t k = std::min(item.find(':', j), item.size());
            f.push_back(item.substr(j, k - j));
            j = k + 1;
        }
        auto num = [&](std::size_t k, float dflt) {
            return k < f.size() ? parse_float(f[k], cat("--attr-post-ops=", text, " item '", item, "'")) : dflt;
        };
        const std::string kind = lower(f[0]);
        if (kind.empty()) fail(status::invalid_arguments, "--attr-post-ops=", text, ": an empty item");
        if (kind == "sum") {
            if (f.size() > 2) unsupported("--attr-post-ops=", text, ": sum with a zero point or data type");
            for (int k = 0; k < po.len(); ++k)
                if (po[k].what == post_op::kind::sum)
                    unsupported("--attr-post-ops=", text, ": a second sum (a blockdnn chain holds at most one)");
            po.append_sum(num(1, 1.f));
        } else if (kind.rfind("dw", 0) == 0 || kind.rfind("binary", 0) == 0 || kind == "prelu"
                || kind.rfind("add", 0) == 0 || kind.rfind("mul", 0) == 0 || is_benchdnn_binary_alg(kind)) {
            unsupported("--attr-post-ops=", text, ": '", f[0], "' post-ops are not implemented");
        } else {
            const eltwise_alg a = eltwise_alg_from_benchdnn(f[0], cat("--attr-post-ops=", text, ": kind"));
            if (f.size() > 4)
                fail(status::invalid_arguments, "--attr-post-ops=", text, ": '", item, "' has too many fields");
            if (f.size() == 4 && num(3, 1.f) != 1.f) unsupported("--attr-post-ops=", text, ": eltwise scale != 1");
            po.append_eltwise(a, num(1, 0.f), num(2, 0.f));
        }
        if (po.len() > 8) fail(status::invalid_arguments, "--attr-post-ops=", text, ": more than 8 post-ops");
        i = end + 1;
    }
    return po;
}

std::vector<problem_t> matched_problems(const std::vector<problem_t> &problems) {
    std::vector<problem_t> out;
    for (const problem_t &p : problems) {
        const std::string m = p.opt("match");
        bool keep = true;
        try {
            keep = m.empty() || match_pattern(m, p.desc);
        } catch (const error &) {}
        if (keep) out.push_back(p);
    }
    return out;
}

std::optional<spec_t> make_spec(const problem_t &p, long mb_override) {
    if (const std::string m = p.opt("match"); !m.empty() && !match_pattern(m, p.desc)) return std::nullopt;
    spec_t s;
    s.driver = p.driver;
    s.name = name_of(p.driver, p.desc);
    if (p.driver == "conv") s.op = conv_spec(p, mb_override, s.str);
    else if (p.driver == "bnorm") s.op = bnorm_spec(p, mb_override, s.str);
    else if (p.driver == "rnn") s.op = rnn_spec(p, mb_override, s.str);
    else if (p.driver == "pool") s.op = pool_spec(p, mb_override, s.str);
    else if (p.driver == "eltwise") s.op = eltwise_spec(p, mb_override, s.str);
    else if (p.driver == "softmax") s.op = softmax_spec(p, mb_override, s.str);
    else fail(status::invalid_arguments, "driver '", p.driver, "' is not conv, bnorm, rnn, pool, eltwise or softmax");
    return s;
}

} // namespace bdrv
