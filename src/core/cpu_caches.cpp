// SPDX-License-Identifier: Apache-2.0
#include "core/cpu_caches.hpp"

#include <cctype>
#include <filesystem>
#include <fstream>
#include <system_error>

namespace blockdnn::impl {

namespace {

// The first line of `path`, or "" if it cannot be read.
std::string first_line(const std::filesystem::path &path) {
    std::ifstream in(path);
    std::string line;
    if (!in || !std::getline(in, line)) return {};
    return line;
}

// "48K" -> 49152; 0 for anything but digits with an optional K, M or G.
long parse_size(const std::string &text) {
    std::size_t i = 0;
    long v = 0;
    for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
        if (v > (1L << 40)) return 0; // far past any cache
        v = v * 10 + (text[i] - '0');
    }
    if (i == 0) return 0;
    long scale = 1;
    if (i < text.size()) {
        switch (std::toupper(static_cast<unsigned char>(text[i]))) {
        case 'K': scale = 1L << 10; break;
        case 'M': scale = 1L << 20; break;
        case 'G': scale = 1L << 30; break;
        default: return 0;
        }
        ++i;
    }
    if (i != text.size() || v > (1L << 40) / scale) return 0;
    return v * scale;
}

} // namespace

cache_sizes_t read_sysfs_caches(const std::string &dir) {
    cache_sizes_t s;
    std::error_code ec;
    std::filesystem::directory_iterator it(dir, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
        const std::filesystem::path &p = it->path();
        if (p.filename().string().rfind("index", 0) != 0) continue;
        const std::string level = first_line(p / "level"), type = first_line(p / "type");
        const long size = parse_size(first_line(p / "size"));
        if (size <= 0 || (type != "Data" && type != "Unified")) continue;
        if (level == "1") s.l1d_bytes = size;
        else if (level == "2") s.l2_bytes = size;
        else if (level == "3") s.l3_bytes = size;
    }
    return s;
}

} // namespace blockdnn::impl
