// SPDX-License-Identifier: Apache-2.0
// benchdnn convolution descriptor parsing (see conv_prb_str.hpp).
#include "conv/conv_prb_str.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <map>

#include "common/utils.hpp"

namespace blockdnn::impl {

bool parse_conv_prb(const std::string &desc, conv_prb_t &p, std::string &name, std::string &why) {
    std::map<std::string, dim_t> v;
    std::size_t i = 0;
    name.clear();
    while (i < desc.size()) {
        if (desc[i] == '_') { ++i; continue; }
        // No key starts with 'n': it opens the name, which runs to the end.
        if (desc[i] == 'n') {
            name = desc.substr(i + 1);
            name.erase(std::remove(name.begin(), name.end(), '"'), name.end());
            break;
        }
        std::size_t k = i;
        while (k < desc.size() && std::isalpha(static_cast<unsigned char>(desc[k]))) ++k;
        const std::string key = desc.substr(i, k - i);
        std::size_t e = k;
        while (e < desc.size() && std::isdigit(static_cast<unsigned char>(desc[e]))) ++e;
        static const char *keys[] = {"g", "mb", "ic", "id", "ih", "iw", "oc", "od", "oh", "ow", "kd", "kh", "kw",
                "sd", "sh", "sw", "pd", "ph", "pw", "dd", "dh", "dw"};
        if (key.empty() || e == k || std::find(std::begin(keys), std::end(keys), key) == std::end(keys)) {
            why = cat("conv descriptor '", desc, "': bad entry at offset ", i);
            return false;
        }
        v[key] = std::stoll(desc.substr(k, e - k));
        i = e;
    }
    auto has = [&](const char *key) { return v.count(key) > 0; };
    const int nd = (has("id") || has("od") || has("kd") || has("sd") || has("pd") || has("dd")) ? 5
            : (has("ih") || has("oh") || has("kh") || has("sh") || has("ph") || has("dh")) ? 4 : 3;
    if (!has("ic") || !has("oc")) {
        why = cat("conv descriptor '", desc, "': ic and oc are required");
        return false;
    }
    // Fills a spatial family (x = 'i', 'o', ...) from the higher dims; def when none is given.
    auto fam = [&](char x, dim_t def, bool &given) {
        std::string d = std::string(1, x) + "d", h = std::string(1, x) + "h", w = std::string(1, x) + "w";
        given = has(d.c_str()) || has(h.c_str()) || has(w.c_str());
        dim_t vd = has(d.c_str()) ? v[d] : def;
        dim_t vh = has(h.c_str()) ? v[h] : (nd == 5 ? vd : def);
        dim_t vw = has(w.c_str()) ? v[w] : (nd >= 4 ? vh : def);
        if (nd < 5) vd = def;
        if (nd < 4) vh = def;
        return std::array<dim_t, 3> {vd, vh, vw};
    };
    bool gi, go, gk, gs, gp, gd;
    auto in = fam('i', 1, gi), out = fam('o', 0, go), ker = fam('k', 1, gk), st = fam('s', 1, gs),
         pad = fam('p', 0, gp), dil = fam('d', 0, gd);
    if (!gi || !gk) {
        why = cat("conv descriptor '", desc, "': input and kernel sizes are required");
        return false;
    }
    if (nd < 5) out[0] = 1;
    if (nd < 4) out[1] = 1;
    std::array<dim_t, 3> pad_r {};
    for (int s = 0; s < 3; ++s) {
        const dim_t ext = (ker[s] - 1) * (dil[s] + 1) + 1;
        if (!go || out[s] == 0) out[s] = (in[s] - ext + 2 * pad[s]) / st[s] + 1;
        else if (!gp) pad[s] = ((out[s] - 1) * st[s] - in[s] + ext) / 2;
        pad_r[s] = (out[s] - 1) * st[s] - in[s] + ext - pad[s];
        if (out[s] <= 0) {
            why = cat("conv descriptor '", desc, "': output size ", out[s], " is not positive");
            return false;
        }
    }
    p = conv_prb_t {};
    p.ndims = nd;
    p.g = has("g") ? v["g"] : 1;
    p.mb = has("mb") ? v["mb"] : 2;
    p.ic = v["ic"];
    p.oc = v["oc"];
    p.id = in[0]; p.ih = in[1]; p.iw = in[2];
    p.od = out[0]; p.oh = out[1]; p.ow = out[2];
    p.kd = ker[0]; p.kh = ker[1]; p.kw = ker[2];
    p.sd = st[0]; p.sh = st[1]; p.sw = st[2];
    p.pd = pad[0]; p.ph = pad[1]; p.pw = pad[2];
    p.pd_r = pad_r[0]; p.ph_r = pad_r[1]; p.pw_r = pad_r[2];
    p.dd = dil[0]; p.dh = dil[1]; p.dw = dil[2];
    return true;
}

} // namespace blockdnn::impl
