// SPDX-License-Identifier: Apache-2.0
// The .bdw weights file (see weights_file.hpp for the format) and seeded parameters.
#include "nets/weights_file.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace nets {

namespace {

static_assert(std::endian::native == std::endian::little, "the .bdw format is little-endian, as this host must be");

constexpr char magic[4] = {'B', 'D', 'N', 'W'};
constexpr std::uint32_t version = 1;

std::int64_t product(const std::vector<std::int64_t> &dims) {
    std::int64_t n = 1;
    for (std::int64_t d : dims) n *= d;
    return n;
}

template <typename T>
void put(std::ofstream &f, T v) {
    f.write(reinterpret_cast<const char *>(&v), sizeof v);
}

class reader {
public:
    explicit reader(const std::string &path) : path_(path), f_(path, std::ios::binary) {
        if (!f_) throw std::runtime_error("weights file " + path + ": cannot open");
    }
    void bytes(void *dst, std::size_t n, const char *what) {
        f_.read(static_cast<char *>(dst), static_cast<std::streamsize>(n));
        if (static_cast<std::size_t>(f_.gcount()) != n)
            throw std::runtime_error("weights file " + path_ + ": ends inside " + what);
    }
    template <typename T>
    T get(const char *what) {
        T v;
        bytes(&v, sizeof v, what);
        return v;
    }
    const std::string &path() const { return path_; }

private:
    std::string path_;
    std::ifstream f_;
};

// splitmix64: a well-mixed 64-bit hash step.
std::uint64_t mix(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

// "2x1x3x3".
std::string dims_str(const std::vector<std::int64_t> &dims) {
    std::string s;
    for (std::size_t k = 0; k < dims.size(); ++k) {
        if (k) s.push_back('x');
        s.append(std::to_string(dims[k]));
    }
    return s;
}

bool ends_with(const std::string &s, const std::string &suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

} // namespace

weight_store weight_store::read(const std::string &path) {
    reader r(path);
    char m[4];
    r.bytes(m, 4, "the magic");
    if (std::memcmp(m, magic, 4) != 0) throw std::runtime_error("weights file " + path + ": magic is not BDNW");
    const auto v = r.get<std::uint32_t>("the version");
    if (v != version)
        throw std::runtime_error(
                "weights file " + path + ": version " + std::to_string(v) + ", expected " + std::to_string(version));
    const auto count = r.get<std::uint32_t>("the count");
    weight_store s;
    for (std::uint32_t k = 0; k < count; ++k) {
        const auto len = r.get<std::uint32_t>("a name length");
        if (len > 4096) throw std::runtime_error("weights file " + path + ": name length " + std::to_string(len));
        std::string name(len, '\0');
        r.bytes(name.data(), len, "a name");
        const auto nd = r.get<std::uint32_t>("a dim count");
        if (nd > 8)
            throw std::runtime_error("weights file " + path + ": " + name + " has " + std::to_string(nd) + " dims");
        named_array a;
        a.dims.resize(nd);
        r.bytes(a.dims.data(), nd * sizeof(std::int64_t), "dims");
        for (std::int64_t d : a.dims)
            if (d < 0) throw std::runtime_error("weights file " + path + ": " + name + " has a negative dim");
        a.data.resize(static_cast<std::size_t>(product(a.dims)));
        r.bytes(a.data.data(), a.data.size() * sizeof(float), name.c_str());
        if (s.contains(name)) throw std::runtime_error("weights file " + path + ": " + name + " appears twice");
        s.arrays_.emplace(std::move(name), std::move(a));
    }
    return s;
}

void weight_store::write(const std::string &path) const {
    std::ofstream f(path, std::ios::binary);
    if (!f) throw std::runtime_error("weights file " + path + ": cannot create");
    f.write(magic, 4);
    put(f, version);
    put(f, static_cast<std::uint32_t>(arrays_.size()));
    for (const auto &[name, a] : arrays_) {
        put(f, static_cast<std::uint32_t>(name.size()));
        f.write(name.data(), static_cast<std::streamsize>(name.size()));
        put(f, static_cast<std::uint32_t>(a.dims.size()));
        for (std::int64_t d : a.dims) put(f, d);
        f.write(reinterpret_cast<const char *>(a.data.data()),
                static_cast<std::streamsize>(a.data.size() * sizeof(float)));
    }
    if (!f) throw std::runtime_error("weights file " + path + ": write failed");
}

void weight_store::add(const std::string &name, const std::vector<std::int64_t> &dims, std::vector<float> data) {
    if (static_cast<std::int64_t>(data.size()) != product(dims))
        throw std::runtime_error(
                "weight_store: " + name + " has " + std::to_string(data.size()) + " values for its dims");
    arrays_[name] = named_array {dims, std::move(data)};
}

const named_array &weight_store::at(const std::string &name) const {
    const auto it = arrays_.find(name);
    if (it == arrays_.end()) throw std::runtime_error("weights: no entry " + name);
    return it->second;
}

param_source weight_store::source() const {
    return [this](const std::string &name, const blockdnn::dims_t &dims) {
        const named_array &a = at(name);
        if (std::vector<std::int64_t>(dims.begin(), dims.end()) != a.dims) {
            throw std::runtime_error("weights: " + name + " has dims " + dims_str(a.dims) + ", the net wants "
                    + dims_str(std::vector<std::int64_t>(dims.begin(), dims.end())));
        }
        return a.data;
    };
}

param_source seeded_params(std::uint64_t seed) {
    return [seed](const std::string &name, const blockdnn::dims_t &dims) {
        std::uint64_t h = mix(seed);
        for (unsigned char ch : name) h = mix(h ^ ch);
        std::int64_t n = 1;
        for (auto d : dims) n *= d;
        float lo = -0.1f, hi = 0.1f;
        if (dims.size() == 1 && ends_with(name, "running_var")) lo = 0.5f, hi = 1.5f;
        else if (dims.size() == 1 && ends_with(name, "weight")) lo = 0.5f, hi = 1.5f;
        else if (dims.size() > 1) {
            const double fan_in = double(n) / double(dims[0]);
            hi = static_cast<float>(std::sqrt(3.0 / fan_in));
            lo = -hi;
        }
        std::vector<float> v(static_cast<std::size_t>(n));
        for (auto &x : v) {
            h = mix(h);
            x = lo + (hi - lo) * static_cast<float>(double(h >> 11) * 0x1.0p-53);
        }
        return v;
    };
}

} // namespace nets
