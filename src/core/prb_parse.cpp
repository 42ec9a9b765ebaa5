// SPDX-License-Identifier: Apache-2.0
// benchdnn descriptor parsing: a key scanner, the rules that complete the spatial fields,
// and one front end per problem kind.
#include <algorithm>
#include <cctype>
#include <map>
#include <vector>

#include "core/prb_parse.hpp"
#include "core/spatial.hpp"
#include "core/utils.hpp"

namespace blockdnn::impl {

namespace {

struct scanned_t {
    std::map<std::string, dim_t> v;
    std::string name;
    bool has(const std::string &k) const { return v.count(k) != 0; }
    dim_t get(const std::string &k, dim_t def) const {
        auto it = v.find(k);
        return it == v.end() ? def : it->second;
    }
};

// Reports a problem with descriptor `text` of `kind` ("conv", "pool", "ip").
template <typename... Args>
[[noreturn]] void bad(const char *kind, std::string_view text, Args &&...args) {
    fail(status::invalid_arguments, "prb_parse: ", kind, " descriptor '", text, "': ", std::forward<Args>(args)...);
}

scanned_t scan(const char *kind, std::string_view text, const std::vector<std::string> &keys) {
    scanned_t r;
    if (text.empty()) bad(kind, text, "is empty");
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
            bad(kind, text, "unexpected character '", c, "' at position ", pos, " (expected a key such as 'ih')");
        // The longest known key at pos (keys may run into each other, as in "ihoc").
        const std::size_t k0 = pos;
        std::string key;
        for (const std::string &k : keys)
            if (k.size() > key.size() && text.substr(pos, k.size()) == k) key = k;
        if (key.empty()) {
            while (pos < n && std::islower(static_cast<unsigned char>(text[pos]))) ++pos;
            bad(kind, text, "unknown key '", text.substr(k0, pos - k0), "' at position ", k0);
        }
        pos += key.size();
        if (r.has(key)) bad(kind, text, "key '", key, "' given twice");
        const std::size_t v0 = pos;
        if (pos < n && text[pos] == '-') ++pos;
        const std::size_t d0 = pos;
        while (pos < n && std::isdigit(static_cast<unsigned char>(text[pos]))) ++pos;
        if (pos == d0) bad(kind, text, "key '", key, "' at position ", k0, " has no number");
        if (pos - d0 > 12) bad(kind, text, "number for '", key, "' at position ", v0, " is too long");
        r.v[key] = std::stoll(std::string(text.substr(v0, pos - v0)));
    }
    return r;
}

// The benchdnn spatial rules, filling `sp` (d, h, w groups) and returning ndims
// (2 + number of spatial dims). `with_window` is false for ip (sizes only).
int complete_spatial(
        const char *kind, std::string_view text, const scanned_t &s, std::array<spatial_t, 3> &sp, bool with_window) {
    const char letters[3] = {'d', 'h', 'w'};
    const char *const fields[] = {"i", "o", "k", "s", "p", "d"};
    bool has[3] = {};
    for (int g = 0; g < 3; ++g) {
        const char l = letters[g];
        for (const char *f : fields) has[g] = has[g] || s.has(std::string(f) + l);
        sp[g] = spatial_t {l, 1, 1, 1, 1, 0, 0, 0};
        if (!has[g]) continue;
        auto key = [&](const char *f) { return std::string(f) + l; };
        if (!s.has(key("i"))) bad(kind, text, "'", l, "' keys are given but '", key("i"), "' is missing");
        spatial_t &x = sp[g];
        x.i = s.get(key("i"), 1);
        if (!with_window) continue;
        if (!s.has(key("k"))) bad(kind, text, "'", l, "' keys are given but '", key("k"), "' is missing");
        x.k = s.get(key("k"), 1);
        x.s = s.get(key("s"), 1);
        x.dl = s.get(key("d"), 0);
        if (x.s < 1) bad(kind, text, key("s"), " = ", x.s, " must be >= 1");
        if (!s.has(key("o"))) {
            x.p = s.get(key("p"), 0);
            const dim_t num = x.i + 2 * x.p - x.ext();
            if (num < 0)
                bad(kind, text, "kernel extent ", key("ext_k"), " = ", x.ext(), " exceeds ", key("i"), " + 2*",
                        key("p"), " = ", x.i + 2 * x.p, ", so ", key("o"), " would not be positive");
            x.o = num / x.s + 1;
        } else {
            x.o = s.get(key("o"), 1);
            x.p = s.has(key("p")) ? s.get(key("p"), 0) : x.implied_begin_pad();
        }
        x.p_r = x.implied_end_pad();
    }
    if (has[0]) {
        if (has[1] != has[2])
            bad(kind, text, "a 3-D descriptor needs both 'h' and 'w' keys or neither (then they copy 'd')");
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

template <typename desc_t>
desc_t validated(const char *kind, std::string_view text, const desc_t &d) {
    try {
        d.validate();
    } catch (const error &e) {
        bad(kind, text, e.what());
    }
    return d;
}

template <typename desc_t>
void set_spatial(desc_t &d, const std::array<spatial_t, 3> &sp) {
    d.id = sp[0].i, d.ih = sp[1].i, d.iw = sp[2].i;
    d.od = sp[0].o, d.oh = sp[1].o, d.ow = sp[2].o;
    d.kd = sp[0].k, d.kh = sp[1].k, d.kw = sp[2].k;
    d.sd = sp[0].s, d.sh = sp[1].s, d.sw = sp[2].s;
    d.pd = sp[0].p, d.ph = sp[1].p, d.pw = sp[2].p;
    d.pd_r = sp[0].p_r, d.ph_r = sp[1].p_r, d.pw_r = sp[2].p_r;
    d.dd = sp[0].dl, d.dh = sp[1].dl, d.dw = sp[2].dl;
}

} // namespace

conv_desc parse_conv_desc(std::string_view text, std::string *name) {
    const char *kind = "conv";
    static const std::vector<std::string> keys = window_keys({"g", "mb", "ic", "oc"});
    const scanned_t s = scan(kind, text, keys);
    for (const char *req : {"ic", "oc"})
        if (!s.has(req)) bad(kind, text, "'", req, "' is missing");
    std::array<spatial_t, 3> sp;
    const int nd = complete_spatial(kind, text, s, sp, true);
    if (nd == 2) bad(kind, text, "no spatial keys (give at least 'iw' and 'kw', or 'ih' and 'kh')");
    conv_desc d;
    d.ndims = nd;
    d.mb = s.get("mb", 2);
    d.g = s.get("g", 1);
    d.ic = s.get("ic", 0);
    d.oc = s.get("oc", 0);
    set_spatial(d, sp);
    if (name) *name = s.name;
    return validated(kind, text, d);
}

pool_desc parse_pool_desc(std::string_view text, pool_alg alg, std::string *name) {
    const char *kind = "pool";
    static const std::vector<std::string> keys = window_keys({"mb", "ic"});
    const scanned_t s = scan(kind, text, keys);
    if (!s.has("ic")) bad(kind, text, "'ic' is missing");
    std::array<spatial_t, 3> sp;
    const int nd = complete_spatial(kind, text, s, sp, true);
    if (nd == 2) bad(kind, text, "no spatial keys (give at least 'iw' and 'kw', or 'ih' and 'kh')");
    pool_desc d;
    d.alg = alg;
    d.ndims = nd;
    d.mb = s.get("mb", 2);
    d.ic = s.get("ic", 0);
    set_spatial(d, sp);
    if (name) *name = s.name;
    return validated(kind, text, d);
}

inner_product_desc parse_ip_desc(std::string_view text, std::string *name) {
    const char *kind = "ip";
    static const std::vector<std::string> keys = {"mb", "ic", "oc", "id", "ih", "iw"};
    const scanned_t s = scan(kind, text, keys);
    for (const char *req : {"ic", "oc"})
        if (!s.has(req)) bad(kind, text, "'", req, "' is missing");
    std::array<spatial_t, 3> sp;
    inner_product_desc d;
    d.ndims = complete_spatial(kind, text, s, sp, false);
    d.mb = s.get("mb", 2);
    d.ic = s.get("ic", 0);
    d.oc = s.get("oc", 0);
    d.id = sp[0].i, d.ih = sp[1].i, d.iw = sp[2].i;
    if (name) *name = s.name;
    return validated(kind, text, d);
}

dims_t parse_dims(const std::string &text) {
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
            ++i;
            continue;
        }
        if (text[i] == 'n' || (text[i] == '_' && i + 1 < text.size() && text[i + 1] == 'n')) break; // a name
        fail(status::invalid_arguments, "dims '", text, "': unexpected '", text[i], "' at position ", i);
    }
    if (dims.empty()) fail(status::invalid_arguments, "dims '", text, "': no dims");
    if (static_cast<int>(dims.size()) > max_ndims)
        fail(status::invalid_arguments, "dims '", text, "': ", dims.size(), " dims, at most ", max_ndims);
    return dims;
}

format_tag parse_tag(const std::string &text, int ndims) {
    using ft = format_tag;
    auto pick = [&](ft t1, ft t2, ft t3, ft t4, ft t5) {
        const ft v[] = {t1, t2, t3, t4, t5}; // for ndims 1..5
        return ndims >= 1 && ndims <= 5 ? v[ndims - 1] : ft::undef;
    };
    ft t = ft::undef;
    if (text == "abx") t = pick(ft::x, ft::nc, ft::ncw, ft::nchw, ft::ncdhw);
    else if (text == "axb") t = pick(ft::undef, ft::nc, ft::nwc, ft::nhwc, ft::ndhwc);
    else if (text == "aBx8b") t = pick(ft::undef, ft::undef, ft::nCw8c, ft::nChw8c, ft::nCdhw8c);
    else if (text == "aBx16b") t = pick(ft::undef, ft::undef, ft::nCw16c, ft::nChw16c, ft::nCdhw16c);
    else t = format_tag_from_string(text); // throws naming the tag if unknown
    if (t == ft::undef || ndims_of(t) != ndims)
        fail(status::invalid_arguments, "tag '", text, "' does not describe ", ndims, " dims");
    return t;
}

} // namespace blockdnn::impl
