// SPDX-License-Identifier: Apache-2.0
// A problem of the batch reader turned into what one op needs: the parsed descriptor and the
// benchdnn options read into blockdnn terms. No memory is allocated and nothing runs here,
// so this is what the fuzz target exercises after the reader.
#pragma once

#include <optional>
#include <string>
#include <variant>

#include "blockdnn/blockdnn.hpp"
#include "testing/batch.hpp"

namespace bdrv {

/// conv: --dir FWD_B (bias), FWD_D, FWD_I (bias); --stag/--wtag/--dtag (any = the ISA's
/// choice; --wtag=abx is kept as the plain weights' name, oihw or goihw); --attr-post-ops
/// (sum[:scale], ALG[:alpha[:beta]] joined by '+').
struct conv_spec_t {
    blockdnn::conv_desc desc;
    std::string stag = "any", wtag = "any", dtag = "any";
    blockdnn::post_ops po;
};

/// bnorm: --dir FWD_D (training), FWD_I (inference), BWD_D, BWD_DW; --flags from G C H R;
/// --tag; --inplace.
struct bnorm_spec_t {
    blockdnn::bnorm_desc desc;                            ///< the descriptor's dims (src, plain layout) and epsilon
    bool backward = false, with_diff_scale_shift = false; ///< BWD_D / BWD_DW
    bool inference = false;                               ///< FWD_I
    bool global_stats = false, use_scale = false, use_shift = false, fuse_relu = false;
    bool inplace = false;
    std::string tag = "any";
};

/// rnn: --alg, --activation, --direction, --prop FWD_I/FWD_D, --tag=SRC:WEI:DST, --l --t --mb.
struct rnn_spec_t {
    blockdnn::rnn_desc desc;
    std::string wei_tag = "any";
};

/// pool: --alg max|avg_np|avg_p; --tag.
struct pool_spec_t {
    blockdnn::pool_desc desc;
    std::string tag = "any";
};

/// eltwise: DIMS descriptor; --alg, --alpha, --beta, --tag, --inplace.
struct eltwise_spec_t {
    blockdnn::dims_t dims;
    blockdnn::eltwise_alg alg = blockdnn::eltwise_alg::relu;
    float alpha = 0, beta = 0;
    std::string tag = "abx";
    bool inplace = false;
};

/// softmax: DIMS descriptor; --axis (benchdnn's default 1), --tag, --inplace.
struct softmax_spec_t {
    blockdnn::softmax_desc desc;
    std::string tag = "abx";
    bool inplace = false;
};

/// One runnable problem.
struct spec_t {
    std::string driver;
    std::string name; ///< the descriptor's name ("resnet_50:conv1"), may be empty
    std::string str;  ///< canonical descriptor and options, e.g. "--dir=FWD_D mb1ic3ih5oc4oh5kh3"
    std::variant<conv_spec_t, bnorm_spec_t, rnn_spec_t, pool_spec_t, eltwise_spec_t, softmax_spec_t> op;
};

/// Builds the spec of `p`; `mb_override` > 0 replaces the minibatch (the command line's --mb;
/// a file's --mb=N does the same per problem, 0 keeping the descriptor's). Returns nothing
/// when --match (see match_pattern) filters the problem out. Throws `blockdnn::error`: invalid_arguments for a
/// malformed descriptor or option value (naming it), unimplemented for a valid problem this
/// driver does not run (backward convolution, bf16, ...), naming the option and value.
std::optional<spec_t> make_spec(const problem_t &p, long mb_override = 0);

/// benchdnn's --match: true if `pattern` matches all of `text` (the descriptor, name included).
/// Patterns are the regular expressions benchdnn's input files use: literals, '.' (any
/// character), bracket classes ('[0-9]', '[^a-z_]'), '*' (any repetition of the atom before)
/// and '\\' escapes, matched in linear time (an NFA run, no backtracking). Throws
/// invalid_arguments naming the pattern and position for other regex syntax.
bool match_pattern(const std::string &pattern, const std::string &text);

/// The problems --match leaves to run, in order (the count the report's header gives). One
/// whose pattern is malformed stays, so that make_spec reports it as invalid.
std::vector<problem_t> matched_problems(const std::vector<problem_t> &problems);

/// benchdnn's post-op chain ("sum:0.5+relu", "relu:-1", "linear:2:1") into a blockdnn chain.
/// Throws invalid_arguments for a malformed number or a word benchdnn does not know either,
/// unimplemented for a benchdnn kind blockdnn does not run (dw, binary, mish, ...).
blockdnn::post_ops parse_benchdnn_post_ops(const std::string &text);

/// benchdnn's eltwise algorithm names (relu, logistic, gelu_tanh, ...), case-insensitive.
/// Throws unimplemented naming the word for a benchdnn algorithm blockdnn does not have
/// (mish, square, ...), invalid_arguments for a word benchdnn does not know either.
blockdnn::eltwise_alg eltwise_alg_from_benchdnn(const std::string &word, const std::string &what);

} // namespace bdrv
