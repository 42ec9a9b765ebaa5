// SPDX-License-Identifier: Apache-2.0
// The shared pieces of the benchdnn descriptor parsers: the key scanner, the rules that
// complete the spatial fields, the option splitter, dims and tags.
#include <algorithm>
#include <cctype>
#include <iterator>
#include <map>
#include <sstream>
#include <string_view>
#include <vector>

#include "core/prb_parse.hpp"
#include "core/spatial.hpp"
#include "core/utils.hpp"

namespace blockdnn::impl {

desc_keys_t scan_descriptor(const char *kind, std::string_view text, const std::vector<std::string> &keys) {
    desc_keys_t r;
    if (text.empty()) bad_descriptor(kind, text, "is empty");
    std::size_t pos = 0;
    const std::size_t n = text.size();
    while (pos < n) {
        const char c = text[pos];
        if (c == '_') {
            ++pos;
            continue;
        }
        if (c == 'n') { // the name runs to the end; quotes are decorative
            std::string nm(text.substr(pos + 1));
            nm.erase(std::remove(nm.begin(), nm.end(), '"'), nm.end());
            r.name = nm;
            break;
        }
        if (!std::islower(static_cast<unsigned char>(c)))
            bad_descriptor(
                    kind, text, "unexpected character '", c, "' at position ", pos, " (expected a key such as 'ih')");
        // The longest known key at pos (keys may run into each other, as in "ihoc").
        const std::size_t k0 = pos;
        std::string key;
        for (const std::string &k : keys)
            if (k.size() > key.size() && text.substr(pos, k.size()) == k) key = k;
        if (key.empty()) {
            while (pos < n && std::islower(static_cast<unsigned char>(text[pos]))) ++pos;
            bad_descriptor(kind, text, "unknown key '", text.substr(k0, pos - k0), "' at position ", k0);
        }
        pos += key.size();
        if (r.has(key)) bad_descriptor(kind, text, "key '", key, "' given twice");
        const std::size_t v0 = pos;
        if (pos < n && text[pos] == '-') ++pos;
        const std::size_t d0 = pos;
        while (pos < n && std::isdigit(static_cast<unsigned char>(text[pos]))) ++pos;
        if (pos == d0) bad_descriptor(kind, text, "key '", key, "' at position ", k0, " has no number");
        if (pos - d0 > 12) bad_descriptor(kind, text, "number for '", key, "' at position ", v0, " is too long");
        r.v[key] = std::stoll(std::string(text.substr(v0, pos - v0)));
    }
    return r;
}

int complete_spatial(
        const char *kind, std::string_view text, const desc_keys_t &s, std::array<spatial_t, 3> &sp, bool with_window) {
    const char letters[3] = {'d', 'h', 'w'};
    const char *const fields[] = {"i", "o", "k", "s", "p", "d"};
    bool has[3] = {};
    for (int g = 0; g < 3; ++g) {
        const char l = letters[g];
        for (const char *f : fields) has[g] = has[g] || s.has(std::string(f) + l);
        sp[g] = spatial_t {l, 1, 1, 1, 1, 0, 0, 0};
        if (!has[g]) continue;
        auto key = [&](const char *f) { return std::string(f) + l; };
        if (!s.has(key("i"))) bad_descriptor(kind, text, "'", l, "' keys are given but '", key("i"), "' is missing");
        spatial_t &x = sp[g];
        // The given numbers in range first, so that the sizes and pads worked out below cannot
        // overflow (a wrapped ext_k or o would be named instead of the number at fault).
        for (const char *f : fields)
            if (s.has(key(f)) && !field_in_range(s.get(key(f), 0)))
                bad_descriptor(kind, text, out_of_range_text(key(f), s.get(key(f), 0)));
        x.i = s.get(key("i"), 1);
        if (!with_window) continue;
        if (!s.has(key("k"))) bad_descriptor(kind, text, "'", l, "' keys are given but '", key("k"), "' is missing");
        x.k = s.get(key("k"), 1);
        x.s = s.get(key("s"), 1);
        x.dl = s.get(key("d"), 0);
        if (x.s < 1) bad_descriptor(kind, text, key("s"), " = ", x.s, " must be >= 1");
        if (!s.has(key("o"))) {
            x.p = s.get(key("p"), 0);
            const dim_t num = x.i + 2 * x.p - x.ext();
            if (num < 0)
                bad_descriptor(kind, text, "kernel extent ", key("ext_k"), " = ", x.ext(), " exceeds ", key("i"),
                        " + 2*", key("p"), " = ", x.i + 2 * x.p, ", so ", key("o"), " would not be positive");
            x.o = num / x.s + 1;
        } else {
            x.o = s.get(key("o"), 1);
            x.p = s.has(key("p")) ? s.get(key("p"), 0) : x.implied_begin_pad();
            // Only where o, k and d are valid: otherwise validate() names the one at fault.
            if (!s.has(key("p")) && x.p < 0 && x.o >= 1 && x.k >= 1 && x.dl >= 0)
                bad_descriptor(kind, text, key("o"), " = ", x.o, " implies ", key("p"), " = ((", key("o"), " - 1) * ",
                        key("s"), " - ", key("i"), " + ", key("ext_k"), ") / 2 = ", x.p, " (", key("ext_k"), " = ",
                        x.ext(), "), which must be >= 0: give ", key("p"),
                        " (the end pad may be negative) or a larger ", key("o"));
        }
        x.p_r = x.implied_end_pad();
    }
    if (has[0]) {
        if (has[1] != has[2])
            bad_descriptor(kind, text, "a 3-D descriptor needs both 'h' and 'w' keys or neither (then they copy 'd')");
        if (!has[1]) sp[1] = sp[2] = sp[0];
        sp[1].letter = 'h';
        sp[2].letter = 'w';
        return 5;
    }
    if (has[1]) {
        if (!has[2]) {
            sp[2] = sp[1];
            sp[2].letter = 'w';
        }
        return 4;
    }
    return has[2] ? 3 : 2;
}

std::vector<std::string> window_keys(std::vector<std::string> lead) {
    for (const char *f : {"i", "o", "k", "s", "p", "d"})
        for (const char *l : {"d", "h", "w"}) lead.push_back(std::string(f) + l);
    return lead;
}

desc_options_t split_options(const char *kind, std::string_view text, const std::vector<std::string> &keys) {
    desc_options_t r;
    std::istringstream in {std::string(text)};
    for (std::string tok; in >> tok;) {
        if (tok.rfind("--", 0) == 0) {
            const std::size_t eq = tok.find('=');
            const std::string key = tok.substr(0, eq);
            if (eq == std::string::npos || std::find(keys.begin(), keys.end(), key) == keys.end()) {
                std::string known;
                for (const std::string &k : keys) known += k + "=, ";
                bad_descriptor(kind, text, "unknown option '", tok, "'; expected ", known, "and the descriptor");
            }
            if (r.opts.count(key)) bad_descriptor(kind, text, "option '", key, "' given twice");
            r.opts[key] = tok.substr(eq + 1);
        } else if (!r.desc.empty()) {
            bad_descriptor(kind, text, "two descriptors, '", r.desc, "' and '", tok, "'");
        } else {
            r.desc = tok;
        }
    }
    if (r.desc.empty()) bad_descriptor(kind, text, "no dims (e.g. 8x16x56x56)");
    return r;
}

namespace {

// The number that all of option `key`'s text spells, by convert (std::stof, std::stoi), or
// `def` when the option was not given; else an error saying the text is not `what`.
template <typename T, typename F>
T option_number(const char *kind, std::string_view text, const desc_options_t &o, const std::string &key, T def,
        F convert, const char *what) {
    if (!o.opts.count(key)) return def;
    const std::string &v = o.opts.at(key);
    std::size_t used = 0;
    T x = 0;
    try {
        x = convert(v, &used);
    } catch (const std::exception &) {
        used = 0;
    }
    if (used == 0 || used != v.size()) bad_descriptor(kind, text, key, "='", v, "' is not ", what);
    return x;
}

} // namespace

float option_float(
        const char *kind, std::string_view text, const desc_options_t &o, const std::string &key, float def) {
    return option_number<float>(
            kind, text, o, key, def, [](const std::string &x, std::size_t *used) { return std::stof(x, used); },
            "a number");
}

int option_int(const char *kind, std::string_view text, const desc_options_t &o, const std::string &key, int def) {
    return option_number<int>(
            kind, text, o, key, def, [](const std::string &x, std::size_t *used) { return std::stoi(x, used); },
            "an integer");
}

void require_keys(
        const char *kind, std::string_view text, const desc_keys_t &s, std::initializer_list<const char *> required) {
    for (const char *req : required)
        if (!s.has(req)) bad_descriptor(kind, text, "'", req, "' is missing");
}

windowed_keys_t scan_windowed(const char *kind, std::string_view text, const std::vector<std::string> &keys,
        std::initializer_list<const char *> required) {
    windowed_keys_t w {scan_descriptor(kind, text, keys), {}, 0};
    require_keys(kind, text, w.keys, required);
    w.ndims = complete_spatial(kind, text, w.keys, w.sp, true);
    if (w.ndims == 2) bad_descriptor(kind, text, "no spatial keys (give at least 'iw' and 'kw', or 'ih' and 'kh')");
    return w;
}

dims_t parse_dims(const std::string &text, std::string *name) {
    dims_t dims;
    std::size_t i = 0;
    while (i < text.size()) {
        if (!std::isdigit(static_cast<unsigned char>(text[i])))
            fail(status::invalid_arguments, "dims '", text, "': expected a number at position ", i);
        dim_t v = 0;
        for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
            if (v > (dim_t(1) << 50)) fail(status::invalid_arguments, "dims '", text, "': number too large");
            v = v * 10 + (text[i] - '0');
        }
        if (v <= 0)
            fail(status::invalid_arguments, "dims '", text, "': dims[", dims.size(), "] = ", v, " must be positive");
        dims.push_back(v);
        if (i == text.size()) break;
        if (text[i] == 'x') {
            if (++i == text.size()) // "2x3x": an 'x' separates two sizes
                fail(status::invalid_arguments, "dims '", text, "': expected a number at position ", i);
            continue;
        }
        if (text[i] == 'n' || (text[i] == '_' && i + 1 < text.size() && text[i + 1] == 'n')) { // a name
            if (name) {
                *name = text.substr(i + (text[i] == '_' ? 2 : 1));
                name->erase(std::remove(name->begin(), name->end(), '"'), name->end());
            }
            break;
        }
        fail(status::invalid_arguments, "dims '", text, "': unexpected '", text[i], "' at position ", i);
    }
    if (dims.empty()) fail(status::invalid_arguments, "dims '", text, "': no dims");
    if (static_cast<int>(dims.size()) > max_ndims)
        fail(status::invalid_arguments, "dims '", text, "': ", dims.size(), " dims, at most ", max_ndims);
    return dims;
}

namespace {

// benchdnn's tags for a layout of any rank and blockdnn's tag of that layout for `ndims` dims
// (undef where the layout has none: channels-last for 1 dim, blocked for 1 or 2).
constexpr const char *generic_tags[] = {"abx", "axb", "aBx8b", "aBx16b"};
format_tag generic_tag(std::string_view generic, int ndims) {
    using ft = format_tag;
    auto pick = [&](ft t1, ft t2, ft t3, ft t4, ft t5) {
        const ft v[] = {t1, t2, t3, t4, t5}; // for ndims 1..5
        return ndims >= 1 && ndims <= 5 ? v[ndims - 1] : ft::undef;
    };
    if (generic == "abx") return pick(ft::x, ft::nc, ft::ncw, ft::nchw, ft::ncdhw);
    if (generic == "axb") return pick(ft::undef, ft::nc, ft::nwc, ft::nhwc, ft::ndhwc);
    if (generic == "aBx8b") return pick(ft::undef, ft::undef, ft::nCw8c, ft::nChw8c, ft::nCdhw8c);
    if (generic == "aBx16b") return pick(ft::undef, ft::undef, ft::nCw16c, ft::nChw16c, ft::nCdhw16c);
    return ft::undef;
}

} // namespace

format_tag parse_tag(const std::string &text, int ndims) {
    const bool generic = std::find(std::begin(generic_tags), std::end(generic_tags), text) != std::end(generic_tags);
    // format_tag_from_string throws naming the tag if it knows none of that name.
    const format_tag t = generic ? generic_tag(text, ndims) : format_tag_from_string(text);
    if (t != format_tag::undef && ndims_of(t) == ndims) return t;
    // A tag of another rank (nhwc for a 1-D problem): name this rank's tag of its layout.
    std::string hint;
    if (!generic)
        for (const char *g : generic_tags)
            if (generic_tag(g, ndims_of(t)) == t) {
                const format_tag same = generic_tag(g, ndims);
                if (same != format_tag::undef)
                    hint = cat(": for ", ndims, " dims use ", to_string(same), " (or ", g, ")");
                break;
            }
    fail(status::invalid_arguments, "tag '", text, "' does not describe ", ndims, " dims", hint);
}

} // namespace blockdnn::impl
