// SPDX-License-Identifier: Apache-2.0
// Named f32 tensors in one file (parameters exported from PyTorch, test images, reference
// logits), and seeded parameters for runs without a file.
//
// File format (".bdw", all integers little-endian; written by examples/export_torch.py and
// examples/train_fashion_mnist.py, read and written by weight_store):
//   magic   4 bytes  "BDNW"
//   version u32      1
//   count   u32      number of tensors
//   count times:
//     name_len u32, name  name_len bytes of UTF-8 (PyTorch state-dict name, e.g. "layer1.0.conv1.weight")
//     ndims    u32, dims  ndims x i64 (PyTorch's shape; 0 dims is a scalar)
//     data     prod(dims) x f32, little-endian, row-major in that shape (PyTorch's logical order)
// Names are unique. Integer data (labels, class indices) is stored as exact f32 values.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "nets/resnet.hpp"

namespace nets {

/// One named tensor of a weight_store.
struct named_array {
    std::vector<std::int64_t> dims;
    std::vector<float> data;
};

/// An ordered map of named f32 tensors, read from and written to the format above.
class weight_store {
public:
    /// Reads `path`. Throws std::runtime_error naming the file and what is wrong: missing,
    /// bad magic or version, a duplicate name, negative dims, or fewer bytes than the header
    /// announces.
    static weight_store read(const std::string &path);
    /// Writes the store to `path`. Throws std::runtime_error if the file cannot be written.
    void write(const std::string &path) const;

    /// Adds (or replaces) a tensor. Throws std::runtime_error if data.size() is not the product of dims.
    void add(const std::string &name, const std::vector<std::int64_t> &dims, std::vector<float> data);
    bool contains(const std::string &name) const { return arrays_.count(name) != 0; }
    /// Throws std::runtime_error naming the entry if it is missing.
    const named_array &at(const std::string &name) const;
    const std::map<std::string, named_array> &arrays() const { return arrays_; }

    /// A param_source over this store (which must outlive it): entry `name`, after checking
    /// that its dims equal the dims asked for (std::runtime_error naming both otherwise).
    param_source source() const;

private:
    std::map<std::string, named_array> arrays_;
};

/// A param_source that invents every parameter from `seed` and the parameter's name, so the
/// same name always gets the same values: conv and fc weights uniform in +-sqrt(3 / fan_in)
/// (unit-variance outputs for unit-variance inputs), biases and batch-norm shifts in
/// [-0.1, 0.1), batch-norm scales and running variances in [0.5, 1.5), running means in
/// [-0.1, 0.1). Names ending "running_var" / "running_mean" / "weight" / "bias" with one dim
/// are taken as batch-norm statistics, scales and biases. For runs without a weights file.
param_source seeded_params(std::uint64_t seed);

} // namespace nets
