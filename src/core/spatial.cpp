// SPDX-License-Identifier: Apache-2.0
// Validation of windowed problems' spatial fields (see spatial.hpp).
#include "core/spatial.hpp"
#include "core/utils.hpp"

namespace blockdnn::impl {

std::string out_of_range_text(std::string_view name, dim_t v) {
    return cat(name, " = ", v, " is out of range (|", name, "| < 2^31)");
}

void check_field_range(const char *op, std::string_view name, dim_t v) {
    if (!field_in_range(v)) fail(status::invalid_arguments, op, ": ", out_of_range_text(name, v));
}

namespace {

// check_field_range for sp's fields, p_r included. The names ("ih") are built only for a
// message, as every creation validates its desc, the cached ones too.
void check_fields_range(
        const char *op, const spatial_t &sp, std::initializer_list<std::pair<const char *, dim_t>> fields) {
    for (const auto &[f, v] : fields)
        if (!field_in_range(v)) check_field_range(op, sp.name(f), v);
    if (!field_in_range(sp.p_r)) check_field_range(op, sp.name("p") + "_r", sp.p_r);
}

} // namespace

void check_kernel_fits(const char *op, const spatial_t &sp) {
    // Fields in range first, so that the sums below cannot overflow (infer_dst_dims calls
    // this before anything else has looked at them).
    check_fields_range(op, sp, {{"i", sp.i}, {"k", sp.k}, {"s", sp.s}, {"p", sp.p}, {"d", sp.dl}});
    if (sp.i + sp.p + sp.p_r < sp.ext())
        fail(status::invalid_arguments, op, ": kernel extent ", sp.name("ext_k"), " = ", sp.ext(), " (", sp.name("k"),
                "=", sp.k, " ", sp.name("d"), "=", sp.dl, ") exceeds the padded input ", sp.name("i"), " + ",
                sp.name("p"), " + ", sp.name("p"), "_r = ", sp.i + sp.p + sp.p_r, " (", sp.name("i"), "=", sp.i, " ",
                sp.name("p"), "=", sp.p, " ", sp.name("p"), "_r=", sp.p_r, "): the output would be empty");
}

void check_spatial(const char *op, const spatial_t &sp) {
    check_fields_range(op, sp, {{"i", sp.i}, {"o", sp.o}, {"k", sp.k}, {"s", sp.s}, {"p", sp.p}, {"d", sp.dl}});
    for (const auto &[f, v] : {std::pair<const char *, dim_t> {"i", sp.i}, {"o", sp.o}, {"k", sp.k}})
        if (v <= 0) fail(status::invalid_arguments, op, ": ", sp.name(f), " = ", v, " must be positive");
    if (sp.s < 1) fail(status::invalid_arguments, op, ": ", sp.name("s"), " = ", sp.s, " must be >= 1");
    // Dilation before the pad: a pad benchdnn's parser works out from o follows from it.
    if (sp.dl < 0)
        fail(status::invalid_arguments, op, ": ", sp.name("d"), " = ", sp.dl,
                " must be >= 0: dilation counts the skipped elements, 0 means dense (oneDNN's convention; "
                "PyTorch/ONNX dilation t is ",
                sp.name("d"), " = t - 1)");
    if (sp.p < 0)
        fail(status::invalid_arguments, op, ": ", sp.name("p"), " = ", sp.p,
                " must be >= 0 (only end pads may be negative)");
    check_kernel_fits(op, sp);
    if (sp.o != sp.out_size())
        fail(status::invalid_arguments, op, ": ", sp.name("o"), " = ", sp.o, " does not match (", sp.name("i"), " + ",
                sp.name("p"), " + ", sp.name("p"), "_r - ", sp.name("ext_k"), ") / ", sp.name("s"),
                " + 1 = ", sp.out_size(), " (", sp.name("i"), "=", sp.i, " ", sp.name("k"), "=", sp.k, " ",
                sp.name("p"), "=", sp.p, " ", sp.name("p"), "_r=", sp.p_r, " ", sp.name("s"), "=", sp.s, " ",
                sp.name("d"), "=", sp.dl, ")");
}

void check_windows_cover_input(const char *op, const spatial_t &sp) {
    const dim_t step = sp.dl + 1;
    for (dim_t o = 0; o < sp.o; ++o) {
        const dim_t start = o * sp.s - sp.p;                    // first tap
        const dim_t k0 = start >= 0 ? 0 : div_up(-start, step); // first tap at or after 0
        if (k0 < sp.k && start + k0 * step < sp.i) continue;
        fail(status::invalid_arguments, op, ": the window of output index ", o, " along ", sp.letter, " (",
                sp.name("o"), " = ", sp.o, ") covers no input element (", sp.name("i"), "=", sp.i, " ", sp.name("k"),
                "=", sp.k, " ", sp.name("s"), "=", sp.s, " ", sp.name("p"), "=", sp.p, " ", sp.name("p"), "_r=", sp.p_r,
                " ", sp.name("d"), "=", sp.dl, "): reduce the padding");
    }
}

void check_unused_spatial(const char *op, const spatial_t &sp, int ndims) {
    const std::pair<const char *, dim_t> ones[] = {{"i", sp.i}, {"o", sp.o}, {"k", sp.k}, {"s", sp.s}};
    const char *what = ndims == 3 ? "a 1-D problem (ndims = 3)" : "a 2-D problem (ndims = 4)";
    for (const auto &[f, v] : ones)
        if (v != 1) fail(status::invalid_arguments, op, ": ", sp.name(f), " = ", v, " must be 1 for ", what);
    if (sp.p != 0) fail(status::invalid_arguments, op, ": ", sp.name("p"), " = ", sp.p, " must be 0 for ", what);
    if (sp.p_r != 0) fail(status::invalid_arguments, op, ": ", sp.name("p"), "_r = ", sp.p_r, " must be 0 for ", what);
    if (sp.dl != 0) fail(status::invalid_arguments, op, ": ", sp.name("d"), " = ", sp.dl, " must be 0 for ", what);
}

std::vector<int> shown_spatial_groups(const std::array<spatial_t, 3> &gs, int first) {
    auto same = [](const spatial_t &a, const spatial_t &b) {
        return a.i == b.i && a.o == b.o && a.k == b.k && a.s == b.s && a.p == b.p && a.dl == b.dl;
    };
    if (first == 2) return {2};
    if (first == 1) return same(gs[1], gs[2]) ? std::vector<int> {1} : std::vector<int> {1, 2};
    if (same(gs[0], gs[1]) && same(gs[0], gs[2])) return {0};
    return {0, 1, 2};
}

std::string spatial_text(const std::array<spatial_t, 3> &gs, int ndims, const std::string &after_i) {
    const std::vector<int> shown = shown_spatial_groups(gs, 5 - (ndims < 3 || ndims > 5 ? 4 : ndims));
    std::string s;
    for (int k : shown) s += cat("i", gs[k].letter, gs[k].i);
    s += after_i;
    for (int k : shown) s += cat("o", gs[k].letter, gs[k].o);
    for (int k : shown) s += cat("k", gs[k].letter, gs[k].k);
    for (int k : shown)
        if (gs[k].s != 1) s += cat("s", gs[k].letter, gs[k].s);
    for (int k : shown)
        if (gs[k].p != gs[k].implied_begin_pad()) s += cat("p", gs[k].letter, gs[k].p);
    for (int k : shown)
        if (gs[k].dl != 0) s += cat("d", gs[k].letter, gs[k].dl);
    return s;
}

dims_t spatial_dims(std::initializer_list<dim_t> lead, std::array<dim_t, 3> sp, int ndims) {
    dims_t v(lead);
    const int nsp = ndims - 2;
    for (int k = 3 - nsp; k < 3; ++k)
        if (k >= 0) v.push_back(sp[static_cast<std::size_t>(k)]);
    return v;
}

} // namespace blockdnn::impl
