// SPDX-License-Identifier: Apache-2.0
// Derives each format tag's layout from its name, oneDNN style: lowercase letters are plain
// dims, uppercase ones the outer part of a blocked dim, and "<size><letter>" suffixes the inner
// blocks, innermost last. The logical order of the dims is the family's canonical order.
#include <cctype>
#include <cstring>
#include <stdexcept>

#include "blockdnn/status.hpp"
#include "tensor/layout.hpp"

namespace blockdnn::impl {

namespace {

struct tag_name_t {
    format_tag tag;
    const char *name;
};

// The table keeps format_tag's grouping.
// clang-format off
#define BLOCKDNN_TAG(t) {format_tag::t, #t}
constexpr tag_name_t tag_names[] = {
        BLOCKDNN_TAG(x), BLOCKDNN_TAG(nc), BLOCKDNN_TAG(ncw), BLOCKDNN_TAG(nwc),
        BLOCKDNN_TAG(nchw), BLOCKDNN_TAG(nhwc), BLOCKDNN_TAG(ncdhw), BLOCKDNN_TAG(ndhwc),
        BLOCKDNN_TAG(nCw8c), BLOCKDNN_TAG(nCw16c), BLOCKDNN_TAG(nChw8c), BLOCKDNN_TAG(nChw16c),
        BLOCKDNN_TAG(nCdhw8c), BLOCKDNN_TAG(nCdhw16c),
        BLOCKDNN_TAG(oi), BLOCKDNN_TAG(io), BLOCKDNN_TAG(oiw), BLOCKDNN_TAG(wio),
        BLOCKDNN_TAG(oihw), BLOCKDNN_TAG(hwio), BLOCKDNN_TAG(oidhw), BLOCKDNN_TAG(dhwio),
        BLOCKDNN_TAG(OIw8i8o), BLOCKDNN_TAG(OIw16i16o), BLOCKDNN_TAG(OIhw8i8o),
        BLOCKDNN_TAG(OIhw16i16o), BLOCKDNN_TAG(OIdhw8i8o), BLOCKDNN_TAG(OIdhw16i16o),
        BLOCKDNN_TAG(goiw), BLOCKDNN_TAG(goihw), BLOCKDNN_TAG(goidhw),
        BLOCKDNN_TAG(gOIw8i8o), BLOCKDNN_TAG(gOIw16i16o), BLOCKDNN_TAG(gOIhw8i8o),
        BLOCKDNN_TAG(gOIhw16i16o), BLOCKDNN_TAG(gOIdhw8i8o), BLOCKDNN_TAG(gOIdhw16i16o),
        BLOCKDNN_TAG(Goiw8g), BLOCKDNN_TAG(Goiw16g), BLOCKDNN_TAG(Goihw8g),
        BLOCKDNN_TAG(Goihw16g), BLOCKDNN_TAG(Goidhw8g), BLOCKDNN_TAG(Goidhw16g),
        BLOCKDNN_TAG(tnc), BLOCKDNN_TAG(ntc), BLOCKDNN_TAG(ldnc), BLOCKDNN_TAG(ldigo),
        BLOCKDNN_TAG(ldgoi), BLOCKDNN_TAG(ldgo),
};
#undef BLOCKDNN_TAG
// clang-format on

// `any` names no layout: its entry has the name and no dims.
constexpr int n_tags = static_cast<int>(format_tag::any) + 1;

// The family decides the canonical (logical) order of the letters. In RNN weights 'd' is the
// direction; in activations and conv weights it is depth.
layout_family family_of(const char *name) {
    auto has = [&](char c) { return std::strchr(name, c) || std::strchr(name, std::toupper(c)); };
    if (has('l')) return layout_family::rnn_weights;
    if (has('t')) return layout_family::rnn_data;
    if (has('o') || has('i')) return layout_family::weights;
    return layout_family::activation;
}

const char *canonical_order(layout_family f) {
    switch (f) {
    case layout_family::activation: return "ncdhwx";
    case layout_family::weights: return "goidhw";
    case layout_family::rnn_data: return "tnc";
    case layout_family::rnn_weights: return "ldigonc";
    }
    return "";
}

layout_info_t parse(format_tag tag, const char *name) {
    layout_info_t li;
    li.tag = tag;
    li.name = name;
    li.family = family_of(name);

    // Outer letters up to the first digit, then (size, letter) inner blocks.
    char outer[max_ndims + 1] = {};
    int n_outer = 0;
    const char *p = name;
    while (*p && !std::isdigit(static_cast<unsigned char>(*p))) outer[n_outer++] = *p++;
    char blk_letter[2] = {};
    while (*p) {
        int size = 0;
        while (std::isdigit(static_cast<unsigned char>(*p))) size = size * 10 + (*p++ - '0');
        blk_letter[li.nblks] = *p++;
        li.blk_size[li.nblks++] = size;
    }

    // Logical dims: the canonical order restricted to the letters present.
    for (const char *c = canonical_order(li.family); *c; ++c)
        for (int k = 0; k < n_outer; ++k)
            if (std::tolower(outer[k]) == *c) li.dim_letter[li.ndims++] = *c;
    auto logical_index = [&](char letter) {
        for (int d = 0; d < li.ndims; ++d)
            if (li.dim_letter[d] == std::tolower(letter)) return d;
        throw std::logic_error("format tag table: bad letter");
    };
    for (int k = 0; k < n_outer; ++k) li.outer_order[k] = logical_index(outer[k]);
    for (int b = 0; b < li.nblks; ++b) li.blk_dim[b] = logical_index(blk_letter[b]);
    return li;
}

struct table_t {
    layout_info_t info[n_tags];
    table_t() {
        for (const tag_name_t &t : tag_names) info[static_cast<int>(t.tag)] = parse(t.tag, t.name);
        layout_info_t &any = info[static_cast<int>(format_tag::any)];
        any.tag = format_tag::any;
        any.name = "any";
    }
};

const table_t &table() {
    static const table_t t;
    return t;
}

} // namespace

bool is_format_tag(format_tag tag) { return static_cast<int>(tag) >= 0 && static_cast<int>(tag) < n_tags; }

bool is_channels_last(format_tag tag) {
    return tag == format_tag::nwc || tag == format_tag::nhwc || tag == format_tag::ndhwc;
}

bool is_grouped_weights_tag(format_tag tag) {
    const layout_info_t &li = layout_info(tag);
    return li.family == layout_family::weights && li.ndims > 0 && li.dim_letter[0] == 'g';
}

bool same_family(format_tag a, format_tag b) { return layout_info(a).family == layout_info(b).family; }

format_tag plain_act_tag(int ndims) {
    return ndims == 2    ? format_tag::nc
            : ndims == 3 ? format_tag::ncw
            : ndims == 4 ? format_tag::nchw
                         : format_tag::ncdhw;
}

format_tag blocked_act_tag(int ndims, int blk) {
    using t = format_tag;
    if (blk == 8) return ndims == 3 ? t::nCw8c : ndims == 4 ? t::nChw8c : t::nCdhw8c;
    return ndims == 3 ? t::nCw16c : ndims == 4 ? t::nChw16c : t::nCdhw16c;
}

format_tag plain_weights_tag(int ndims, bool grouped) {
    if (grouped) return ndims == 3 ? format_tag::goiw : ndims == 4 ? format_tag::goihw : format_tag::goidhw;
    return ndims == 2    ? format_tag::oi
            : ndims == 3 ? format_tag::oiw
            : ndims == 4 ? format_tag::oihw
                         : format_tag::oidhw;
}

const layout_info_t &layout_info(format_tag tag) {
    static const layout_info_t unknown = [] {
        layout_info_t li;
        li.name = "unknown";
        return li;
    }();
    return is_format_tag(tag) ? table().info[static_cast<int>(tag)] : unknown;
}

format_tag find_tag(const char *name) {
    if (std::strcmp(name, "any") == 0) return format_tag::any;
    for (const tag_name_t &t : tag_names)
        if (std::strcmp(t.name, name) == 0) return t.tag;
    return format_tag::undef;
}

} // namespace blockdnn::impl

namespace blockdnn {

const char *to_string(format_tag tag) { return impl::layout_info(tag).name; }

format_tag format_tag_from_string(const std::string &name) {
    const format_tag t = impl::find_tag(name.c_str());
    if (t == format_tag::undef) throw error(status::invalid_arguments, "format_tag: unknown tag '" + name + "'");
    return t;
}

int ndims_of(format_tag tag) { return impl::layout_info(tag).ndims; }

bool is_blocked(format_tag tag) { return impl::layout_info(tag).nblks > 0; }

const char *to_string(data_type dt) {
    return dt == data_type::f32 ? "f32" : dt == data_type::bf16 ? "bf16" : "unknown";
}

} // namespace blockdnn
