// SPDX-License-Identifier: Apache-2.0
// Reads the PyTorch reference cases that tests/torch/gen_cases.py writes at build time
// (see tests/torch/torchcase.py for the format). The folder comes from $TORCH_CASES_DIR,
// which meson sets for the tests; without python3-torch it is unset and tests skip.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace torch_data {

struct array_t {
    std::vector<std::int64_t> dims;
    std::vector<float> data;
};

/// The cases folder, or "" if PyTorch cases were not generated.
inline std::string cases_dir() {
    const char *env = std::getenv("TORCH_CASES_DIR");
    return env ? env : "";
}

/// Loads tensor `name` of case `c`. Throws std::runtime_error naming the file if it is missing
/// or its size does not match its shape.
inline array_t load(const std::string &c, const std::string &name) {
    const std::string base = cases_dir() + "/" + c + "/" + name;
    std::ifstream shape(base + ".shape");
    if (!shape) throw std::runtime_error("torch_data: missing " + base + ".shape");
    array_t a;
    std::string line;
    std::getline(shape, line);
    std::istringstream is(line);
    for (std::int64_t d; is >> d;) a.dims.push_back(d);
    std::int64_t n = 1;
    for (std::int64_t d : a.dims) n *= d;
    a.data.resize(static_cast<std::size_t>(n));
    std::ifstream f(base + ".f32", std::ios::binary | std::ios::ate);
    if (!f || f.tellg() != static_cast<std::streamoff>(n * 4))
        throw std::runtime_error(
                "torch_data: " + base + ".f32 is missing or does not hold " + std::to_string(n) + " floats");
    f.seekg(0);
    f.read(reinterpret_cast<char *>(a.data.data()), n * 4);
    return a;
}

} // namespace torch_data
