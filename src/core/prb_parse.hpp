// SPDX-License-Identifier: Apache-2.0
// The pieces the ops' benchdnn descriptor parsers (src/ops/<op>/<op>_parse.cpp) share: the
// key/value scanner of windowed descriptors and benchdnn's rules for their spatial fields, the
// "--key=value ... DESC" splitter of the option-style ops, dims and tags. Syntax:
// /work/shared/data/benchdnn/README.md, after benchdnn's doc/driver_conv.md.
#pragma once

#include <array>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "blockdnn/types.hpp"
#include "core/spatial.hpp"
#include "core/utils.hpp"

namespace blockdnn::impl {

/// Throws blockdnn::error (invalid_arguments): "<kind> descriptor '<text>': <args>".
template <typename... Args>
[[noreturn]] void bad_descriptor(const char *kind, std::string_view text, Args &&...args) {
    fail(status::invalid_arguments, kind, " descriptor '", text, "': ", std::forward<Args>(args)...);
}

/// A scanned "key<number>key<number>...n<name>" descriptor.
struct desc_keys_t {
    std::map<std::string, dim_t> v;
    std::string name;
    bool has(const std::string &k) const { return v.count(k) != 0; }
    dim_t get(const std::string &k, dim_t def) const {
        auto it = v.find(k);
        return it == v.end() ? def : it->second;
    }
};

/// Scans `text` as keys of `keys` (the longest match first, so keys may run into each other as
/// in "ihoc"), each followed by an integer, with optional '_' separators, and an optional name
/// after 'n' (to the end; quotes are dropped). Throws (bad_descriptor) on an empty text, an
/// unknown or repeated key, or a key without a number.
desc_keys_t scan_descriptor(const char *kind, std::string_view text, const std::vector<std::string> &keys);

/// `lead` followed by the windowed keys: i o k s p d, each with d h w ("id", "oh", "kw"...).
std::vector<std::string> window_keys(std::vector<std::string> lead);

/// Benchdnn's spatial rules over the scanned keys, filling `sp` (the d, h, w groups) and
/// returning ndims (2 + number of spatial dims). A group with any key needs its i, and with
/// `with_window` its k; without o, p defaults to 0 and o = (i + 2p - ext_k) / s + 1; with o
/// but no p, p = ((o - 1) s - i + ext_k) / 2; p_r is implied by o. Any d key makes the problem
/// 3-D (h and w copied from d when neither is given), else any h key 2-D (w copied from h),
/// else any w key 1-D. `with_window` is false for sizes only (ip). Throws (bad_descriptor)
/// on a given number out of check_field_range's range, before any size is worked out from it,
/// and on a begin pad implied by o that comes out negative; the rest of the rules are the
/// desc's validate().
int complete_spatial(
        const char *kind, std::string_view text, const desc_keys_t &s, std::array<spatial_t, 3> &sp, bool with_window);

/// Throws (bad_descriptor) "'<key>' is missing" for the first of `required` not in s.
void require_keys(
        const char *kind, std::string_view text, const desc_keys_t &s, std::initializer_list<const char *> required);

/// A scanned windowed descriptor (conv, pool): its keys, the completed d, h, w groups and ndims.
struct windowed_keys_t {
    desc_keys_t keys;
    std::array<spatial_t, 3> sp;
    int ndims;
};

/// Scans a windowed descriptor of `keys` (window_keys of the op's own), with its `required`
/// keys and at least one spatial group (complete_spatial with the window).
windowed_keys_t scan_windowed(const char *kind, std::string_view text, const std::vector<std::string> &keys,
        std::initializer_list<const char *> required);

/// Sets the fields that conv and pool descriptors share from a scanned windowed descriptor:
/// ndims, mb (benchdnn's default 2), ic, the d, h, w groups; and `name` when given.
template <typename desc_t>
void set_windowed_fields(desc_t &d, const windowed_keys_t &w, std::string *name) {
    d.ndims = w.ndims;
    d.mb = w.keys.get("mb", 2);
    d.ic = w.keys.get("ic", 0);
    set_spatial_groups(d, w.sp);
    if (name) *name = w.keys.name;
}

/// d after d.validate(), whose error is rethrown quoting the descriptor.
template <typename desc_t>
desc_t validated(const char *kind, std::string_view text, const desc_t &d) {
    try {
        d.validate();
    } catch (const error &e) {
        bad_descriptor(kind, text, e.what());
    }
    return d;
}

/// An option-style descriptor, "--key=value ... DESC": the options by key ("--alg"), and DESC.
struct desc_options_t {
    std::map<std::string, std::string> opts;
    std::string desc;
    /// The option's value, or `def` if it was not given.
    std::string get(const std::string &key, const std::string &def) const {
        auto it = opts.find(key);
        return it == opts.end() ? def : it->second;
    }
};

/// Splits `text` at white space into options of `keys` ("--alg", "--axis") and one
/// descriptor. Throws (bad_descriptor) on an unknown option, a repeated one, two descriptors
/// or none.
desc_options_t split_options(const char *kind, std::string_view text, const std::vector<std::string> &keys);

/// The float of option `key` in o, or `def` when it was not given; throws (bad_descriptor)
/// unless all of its text is a number.
float option_float(const char *kind, std::string_view text, const desc_options_t &o, const std::string &key, float def);
/// The int of option `key` in o, or `def` when it was not given; throws (bad_descriptor)
/// unless all of its text is an integer.
int option_int(const char *kind, std::string_view text, const desc_options_t &o, const std::string &key, int def);

/// Parses benchdnn dims "AxBxC..." (1 to max_ndims positive integers), optionally followed by
/// a name, "_nNAME" or "nNAME" (quotes optional), which is dropped, or stored in `name` when
/// given. Throws blockdnn::error (invalid_arguments) naming the text and what is wrong.
dims_t parse_dims(const std::string &text, std::string *name = nullptr);

/// A tag for activation-like data of `ndims` dims: one of our tag names (nchw, nChw16c, ...)
/// or benchdnn's generic ones: abx (plain: x, nc, ncw, nchw, ncdhw), axb (channels last),
/// aBx8b / aBx16b (channel-blocked). Throws blockdnn::error (invalid_arguments) naming the tag
/// and ndims if there is no such layout; for one of our tags of another rank whose layout has a
/// tag for ndims (nhwc for 3 dims), the message names that tag and the generic one (nwc, axb).
format_tag parse_tag(const std::string &text, int ndims);

} // namespace blockdnn::impl
