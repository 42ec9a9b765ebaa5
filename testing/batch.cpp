// SPDX-License-Identifier: Apache-2.0
// benchdnn batch syntax: tokenizer (blanks, '#' comments, quoted names), persistent options,
// comma lists expanded into problems, --batch includes (see batch.hpp).
#include "testing/batch.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <set>

#include "core/utils.hpp"

namespace bdrv {

using blockdnn::status;
using blockdnn::impl::cat;
using blockdnn::impl::fail;

namespace {

constexpr int max_depth = 16;
constexpr std::size_t max_combinations = 4096;
constexpr std::size_t max_problems = 1000000;
constexpr std::size_t max_token = 4096;

constexpr std::size_t max_file_bytes = 64 << 20;

// The file's text, or nothing if it cannot be read. Reads at most max_file_bytes: a larger or
// endless one (/dev/zero) is an error, not a run out of memory.
std::optional<std::string> read_disk(const std::string &path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) return std::nullopt;
    std::string text;
    char buf[1 << 16];
    while (f.read(buf, sizeof buf) || f.gcount() > 0) {
        text.append(buf, static_cast<std::size_t>(f.gcount()));
        if (text.size() > max_file_bytes)
            fail(status::invalid_arguments, "--batch=", path, ": more than ", max_file_bytes >> 20,
                    " MiB; a batch file is a short text");
    }
    if (f.bad()) return std::nullopt;
    return text;
}

std::string dir_of(const std::string &path) {
    const std::size_t slash = path.find_last_of('/');
    return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

// The name of the directory holding `path` ("conv" for inputs/conv/shapes_basic).
std::string parent_name(const std::string &path) {
    std::string d = dir_of(path);
    while (!d.empty() && d.back() == '/') d.pop_back();
    const std::size_t slash = d.find_last_of('/');
    return slash == std::string::npos ? d : d.substr(slash + 1);
}

std::vector<std::string> split_commas(const std::string &v) {
    std::vector<std::string> out;
    std::size_t i = 0;
    while (true) {
        const std::size_t c = v.find(',', i);
        out.push_back(v.substr(i, c == std::string::npos ? std::string::npos : c - i));
        if (c == std::string::npos) break;
        i = c + 1;
    }
    return out;
}

std::string hex_byte(unsigned char b) {
    char s[8];
    std::snprintf(s, sizeof s, "0x%02x", b);
    return s;
}

bool is_driver(const std::string &name) {
    const auto &d = driver_names();
    return std::find(d.begin(), d.end(), name) != d.end();
}

} // namespace

std::string problem_t::opt(const std::string &key, const std::string &dflt) const {
    auto it = opts.find(key);
    return it == opts.end() || it->second.empty() ? dflt : it->second;
}

bool batch_reader_t::known_option(const std::string &key) {
    static const std::set<std::string> keys = {// common (knobs_common.md)
            "dt", "cfg", "mb", "dir", "prop", "tag", "stag", "wtag", "dtag", "alg", "attr-post-ops", "attr-scales",
            "attr-zero-points", "attr-fpmath", "bia-dt", "skip-impl", "impl", "match", "inplace", "flags",
            // rnn
            "direction", "activation", "skip-nonlinear", "trivial-strides", "with-peephole", "with-projection",
            "scaling", "l", "t",
            // eltwise
            "alpha", "beta",
            // softmax
            "axis"};
    return keys.count(key) != 0;
}

batch_reader_t::batch_reader_t(loader_t loader) : loader_(loader ? std::move(loader) : loader_t(read_disk)) {}

void batch_reader_t::read_args(const std::vector<std::string> &args) {
    for (const std::string &a : args) token(a, "command line", "", 0);
    // Option values set after the last descriptor would reach no problem, so nothing would
    // check them either (--dir=FWD_Q after the descriptor ran FWD_B): refuse them, whether
    // the command line or the end of a batch file it reads sets them.
    if (trailing_opts_.empty() || problems_.empty()) return;
    std::string opts;
    for (const auto &[where, tok] : trailing_opts_)
        opts += cat(opts.empty() ? "" : " ", tok, where == trailing_opts_[0].first ? "" : cat(" (", where, ")"));
    fail(status::invalid_arguments, trailing_opts_[0].first, ": ", opts,
            " after the last descriptor applies to no problem (options go before the descriptors they apply to, as "
            "in benchdnn)");
}

void batch_reader_t::read_text(const std::string &txt, const std::string &path) {
    if (driver_.empty() && is_driver(parent_name(path))) driver_ = parent_name(path);
    text(txt, path, 1);
}

void batch_reader_t::read_file(const std::string &path) {
    const std::optional<std::string> t = loader_(path);
    if (!t) fail(status::invalid_arguments, "--batch=", path, ": cannot read the file");
    read_text(*t, path);
}

void batch_reader_t::text(const std::string &txt, const std::string &path, int depth) {
    const std::string dir = dir_of(path);
    // Options left at the end of a file persist after it for whoever includes it (benchdnn
    // does so), so a driver switch after the include is not this file's mistake.
    const std::size_t outer_unapplied = unapplied_.size();
    int line = 1;
    std::size_t i = 0;
    const std::size_t n = txt.size();
    while (i < n) {
        const char c = txt[i];
        if (c == '\n') {
            ++line, ++i;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
            ++i;
            continue;
        }
        if (c == '#') { // a comment runs to the end of the line
            while (i < n && txt[i] != '\n') ++i;
            continue;
        }
        // A token: up to a blank or '#', except inside double quotes (names).
        const int tok_line = line;
        std::string tok;
        bool quoted = false;
        while (i < n) {
            const char ch = txt[i];
            if (ch == '"') quoted = !quoted;
            else if (!quoted
                    && (ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n' || ch == '#' || ch == '\f' || ch == '\v'))
                break;
            if (ch == '\n') ++line;
            const auto byte = static_cast<unsigned char>(ch);
            if ((byte < 0x20 && ch != '\n' && ch != '\t' && ch != '\r' && ch != '\f' && ch != '\v') || byte == 0x7f)
                fail(status::invalid_arguments, path, ":", line, ": control byte ", hex_byte(byte),
                        " in a token (batch files are text)");
            tok += ch;
            ++i;
            if (tok.size() > max_token)
                fail(status::invalid_arguments, path, ":", tok_line, ": a token longer than ", max_token,
                        " characters");
        }
        if (quoted) fail(status::invalid_arguments, path, ":", tok_line, ": '", tok, "' has an unclosed '\"'");
        token(tok, cat(path, ":", tok_line), dir, depth);
    }
    if (unapplied_.size() > outer_unapplied) unapplied_.resize(outer_unapplied);
}

void batch_reader_t::include(const std::string &file, const std::string &where, const std::string &dir, int depth) {
    if (file.empty()) fail(status::invalid_arguments, where, ": --batch= needs a file name");
    if (depth >= max_depth)
        fail(status::invalid_arguments, where, ": --batch=", file, " nests deeper than ", max_depth,
                " files (an include cycle?)");
    const std::string path = file.front() == '/' || dir.empty() ? file : dir + file;
    const std::optional<std::string> t = loader_(path);
    if (!t) {
        if (depth == 0) fail(status::invalid_arguments, where, ": --batch=", file, ": cannot read '", path, "'");
        notes_.push_back(cat(where, ": --batch=", file, " skipped: '", path, "' not found"));
        trailing_opts_.clear(); // they were for the skipped file, which the note names
        return;
    }
    if (driver_.empty() && is_driver(parent_name(path))) driver_ = parent_name(path);
    text(*t, path, depth + 1);
}

void batch_reader_t::token(const std::string &tok, const std::string &where, const std::string &dir, int depth) {
    if (tok.empty()) return;
    if (tok.size() > max_token)
        fail(status::invalid_arguments, where, ": a token longer than ", max_token, " characters");
    if (tok.rfind("--", 0) != 0) {
        add_problem(tok, where);
        return;
    }
    const std::size_t eq = tok.find('=');
    const std::string key = tok.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    if (eq == std::string::npos) {
        if (key == "reset") {
            auto skip = opts_.find("skip-impl");
            std::vector<std::string> keep = skip == opts_.end() ? std::vector<std::string>() : skip->second;
            opts_.clear();
            unapplied_.clear();
            if (!keep.empty()) opts_["skip-impl"] = keep;
        } else if (is_driver(key)) {
            switch_driver(key, tok, where);
        } else if (known_option(key) || key == "batch" || key == "driver") {
            fail(status::invalid_arguments, where, ": option '--", key, "' needs a value (--", key, "=...)");
        } else {
            fail(status::invalid_arguments, where, ": unknown option '", tok, "'");
        }
        return;
    }
    const std::string value = tok.substr(eq + 1);
    if (key == "batch") {
        include(value, where, dir, depth);
    } else if (key == "driver") {
        if (!is_driver(value))
            fail(status::invalid_arguments, where, ": --driver=", value,
                    " is not one of conv bnorm rnn pool eltwise softmax");
        switch_driver(value, tok, where);
    } else if (known_option(key)) {
        unapplied_.push_back(tok);
        trailing_opts_.emplace_back(where, tok);
        if (value.empty()) opts_.erase(key);
        else opts_[key] = split_commas(value);
    } else {
        fail(status::invalid_arguments, where, ": unknown option '--", key, "' in '", tok, "'");
    }
}

void batch_reader_t::switch_driver(const std::string &name, const std::string &tok, const std::string &where) {
    // A driver flag clears the options: any set since the last descriptor would silently
    // not run (--dir=FWD_D --conv ran the default direction).
    if (!unapplied_.empty()) {
        std::string opts;
        for (const std::string &o : unapplied_) opts += (opts.empty() ? "" : " ") + o;
        fail(status::invalid_arguments, where, ": ", opts, " comes before ", tok,
                " and applies to no problem: options follow the driver they apply to");
    }
    driver_ = name;
    opts_.clear();
}

void batch_reader_t::add_problem(const std::string &desc, const std::string &where) {
    if (driver_.empty())
        fail(status::invalid_arguments, where, ": descriptor '", desc,
                "' before any driver (give --conv, --bnorm, --rnn, --pool, --eltwise or --softmax first)");
    std::size_t combos = 1;
    for (const auto &[k, vals] : opts_) {
        combos *= vals.size();
        if (combos > max_combinations)
            fail(status::invalid_arguments, where, ": descriptor '", desc, "' gives more than ", max_combinations,
                    " option combinations (--", k, " has ", vals.size(), " values)");
    }
    if (problems_.size() + combos > max_problems)
        fail(status::invalid_arguments, where, ": more than ", max_problems, " problems");
    // Odometer over the option lists, the last key fastest (benchdnn's nesting order).
    unapplied_.clear();
    trailing_opts_.clear();
    std::vector<std::size_t> idx(opts_.size(), 0);
    for (std::size_t c = 0; c < combos; ++c) {
        problem_t p {driver_, desc, {}, where};
        std::size_t k = 0;
        for (const auto &[key, vals] : opts_) p.opts[key] = vals[idx[k++]];
        problems_.push_back(std::move(p));
        for (std::size_t j = idx.size(); j-- > 0;) {
            auto it = std::next(opts_.begin(), static_cast<std::ptrdiff_t>(j));
            if (++idx[j] < it->second.size()) break;
            idx[j] = 0;
        }
    }
}

} // namespace bdrv
