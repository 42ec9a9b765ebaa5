// SPDX-License-Identifier: Apache-2.0
#include "core/cpu_caches.hpp"

#include <algorithm>
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

// A CPU number ("17"); -1 for anything but digits, or past any CPU count.
long parse_cpu(const std::string &text) {
    if (text.empty() || text.size() > 7) return -1;
    long v = 0;
    for (char c : text) {
        if (!std::isdigit(static_cast<unsigned char>(c))) return -1;
        v = v * 10 + (c - '0');
    }
    return v;
}

// The CPUs of a list such as "0-7,64-71" (16); 0 for anything else.
int count_cpu_list(const std::string &text) {
    long n = 0;
    for (std::size_t start = 0; start <= text.size();) {
        const std::size_t end = std::min(text.find(',', start), text.size());
        const std::string piece = text.substr(start, end - start);
        const std::size_t dash = piece.find('-');
        const long lo = parse_cpu(piece.substr(0, dash));
        const long hi = dash == std::string::npos ? lo : parse_cpu(piece.substr(dash + 1));
        if (lo < 0 || hi < lo) return 0;
        n += hi - lo + 1;
        if (n > (1L << 24)) return 0;
        start = end + 1;
    }
    return static_cast<int>(n);
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
        else if (level == "3") {
            s.l3_bytes = size;
            s.l3_processors = count_cpu_list(first_line(p / "shared_cpu_list"));
        }
    }
    return s;
}

} // namespace blockdnn::impl
