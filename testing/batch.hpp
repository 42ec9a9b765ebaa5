// SPDX-License-Identifier: Apache-2.0
// The reader of oneDNN benchdnn command lines and batch files: options that persist until set
// again or --reset, comma lists that multiply problems, --batch=FILE nesting, '#' comments.
// It turns them into a flat list of problems, each with one value per option in force.
// blockdnn-bench runs them; the tests read their descriptor lists (tests/data/) with it too.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace bdrv {

/// The problem kinds the driver runs (benchdnn's driver names).
inline const std::vector<std::string> &driver_names() {
    static const std::vector<std::string> v = {"conv", "bnorm", "rnn", "pool", "eltwise", "softmax"};
    return v;
}

/// One problem: a descriptor and the options in force where it appeared.
struct problem_t {
    std::string driver;                      ///< "conv", "bnorm", "rnn", "pool", "eltwise" or "softmax"
    std::string desc;                        ///< the descriptor as written (name included)
    std::map<std::string, std::string> opts; ///< option (without "--") -> one value; absent = default
    std::string where;                       ///< "FILE:LINE" or "command line"

    /// The option's value, or `dflt` when it is not set (or set to the empty string).
    std::string opt(const std::string &key, const std::string &dflt = "") const;
};

/// Reads benchdnn syntax (oneDNN tests/benchdnn/doc/knobs_common.md; the notes in
/// /work/shared/data/benchdnn/README.md):
/// - `--conv`, `--bnorm`, `--rnn`, `--pool`, `--eltwise`, `--softmax` (or `--driver=NAME`) choose the driver
///   and clear the options; without one, a batch file's parent directory name is used when it
///   is a driver name (inputs/conv/shapes_basic is conv).
/// - `--KEY=V1,V2,...` sets an option until it is set again or `--reset` (which keeps
///   --skip-impl, as benchdnn does); a descriptor after it is run once per combination of the
///   listed values, in order. `--KEY=` returns the option to its default.
/// - `--batch=FILE` reads FILE, looked up next to the file that names it (or in the current
///   directory from the command line); options set inside persist after it, as in benchdnn.
/// - `#` starts a comment to the end of the line; tokens are separated by blanks.
/// - Any other token is a descriptor of the current driver.
/// Errors throw `blockdnn::error` (invalid_arguments) naming the place (file:line), the token
/// and what is wrong: an unknown option, an option without '=', a descriptor before any
/// driver, options before a driver flag with no descriptor between (the flag would clear them
/// unused; options left at the end of a batch file are exempt, as they persist after it), a
/// file that cannot be read (from the command line), include depth over 16, more
/// than 4096 combinations for one descriptor or 1,000,000 problems in all. A file that cannot
/// be found from inside another batch file is not an error (oneDNN's input sets name files
/// that were not copied): it is listed in notes() and skipped.
class batch_reader_t {
public:
    /// Returns a file's text, or nothing if it cannot be read. The default reads the disk.
    using loader_t = std::function<std::optional<std::string>(const std::string &path)>;

    explicit batch_reader_t(loader_t loader = {});

    /// Reads command-line tokens (argv without the program's own options). Option values set
    /// after the last descriptor (when there is one) are an error: they would reach no problem.
    /// That holds for options at the end of a batch file the command line reads last, too
    /// (inside nested files they persist for the lines after the include), but not for options
    /// followed by an include that was not found (notes() names it).
    void read_args(const std::vector<std::string> &args);
    /// Reads a batch file's text as if it were the file `path` (for includes and the driver).
    void read_text(const std::string &text, const std::string &path);
    /// Reads the batch file `path`; throws if it cannot be read.
    void read_file(const std::string &path);

    const std::vector<problem_t> &problems() const { return problems_; }
    /// Things skipped with the reason: includes that were not found.
    const std::vector<std::string> &notes() const { return notes_; }
    /// The driver in force (empty before any).
    const std::string &driver() const { return driver_; }

    /// Options the reader accepts (without "--"): benchdnn's, including those whose values
    /// the driver then refuses to run (e.g. --cfg=bf16), and driver-specific ones.
    static bool known_option(const std::string &key);

private:
    void token(const std::string &tok, const std::string &where, const std::string &dir, int depth);
    void text(const std::string &txt, const std::string &path, int depth);
    void include(const std::string &file, const std::string &where, const std::string &dir, int depth);
    void add_problem(const std::string &desc, const std::string &where);
    void switch_driver(const std::string &name, const std::string &tok, const std::string &where);

    loader_t loader_;
    std::string driver_;
    std::map<std::string, std::vector<std::string>> opts_;
    std::vector<problem_t> problems_;
    std::vector<std::string> notes_;
    // Option tokens set since the last descriptor, driver or --reset (see switch_driver).
    std::vector<std::string> unapplied_;
    // (where, token) of every option set since the last descriptor, whatever the file and
    // through --reset and driver switches; an include that is not found clears them (they
    // were for it). read_args refuses those left when it ends.
    std::vector<std::pair<std::string, std::string>> trailing_opts_;
};

} // namespace bdrv
