// SPDX-License-Identifier: Apache-2.0
// Tensor descriptors (dims + data type + layout) and tensors (a descriptor plus memory).
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <string>

#include "blockdnn/types.hpp"

namespace blockdnn {

/// Describes a tensor's logical shape, element type and memory layout, and maps logical
/// indices to memory offsets. Cheap to copy; immutable once built.
///
/// The layout model is oneDNN's blocking descriptor: each logical dimension d has an outer
/// stride; up to two inner blocks (dimension, size) sit innermost. The offset of logical index
/// `idx` is  sum_d (idx[d] / blk[d]) * stride[d]  +  the index inside the inner blocks.
/// Blocked dimensions are padded up to a multiple of their block; `padded_dims()` reports that
/// and `size_bytes()` counts the padding.
class tensor_desc {
public:
    /// An empty descriptor (ndims() == 0, format_tag::undef).
    tensor_desc() = default;

    /// Builds a descriptor. `dims` are in the canonical order of the tag's family (see
    /// format_tag). Throws `blockdnn::error`: invalid_arguments if `dims` is empty or has
    /// more than max_ndims (6) entries, if a dim is zero or negative (naming it, e.g.
    /// "dims[1] (c) = 0"), if the tag is undef or not a format_tag value, if dt is not a
    /// data_type value, if the tag takes a different number of dims, or if the padded element
    /// count or byte size would overflow int64; unimplemented for bf16 (declared, not
    /// implemented).
    tensor_desc(const dims_t &dims, data_type dt, format_tag tag);

    /// Convenience: f32.
    tensor_desc(const dims_t &dims, format_tag tag) : tensor_desc(dims, data_type::f32, tag) {}

    int ndims() const { return ndims_; }
    data_type dt() const { return dt_; }
    format_tag tag() const { return tag_; }
    /// Logical dims, canonical order.
    dims_t dims() const { return dims_t(dims_.begin(), dims_.begin() + ndims_); }
    dim_t dim(int d) const { return dims_[d]; }
    /// Dims rounded up to their blocks (equal to dims() for plain layouts).
    dims_t padded_dims() const { return dims_t(pdims_.begin(), pdims_.begin() + ndims_); }
    dim_t padded_dim(int d) const { return pdims_[d]; }
    /// Outer stride of dimension d, in elements (see the class comment).
    dim_t stride(int d) const { return strides_[d]; }
    /// Number of inner blocks (0, 1 or 2), and each block's dimension and size, outer first.
    int inner_nblks() const { return inner_nblks_; }
    int inner_idx(int k) const { return inner_idx_[k]; }
    dim_t inner_blk(int k) const { return inner_blk_[k]; }
    /// Product of the inner block sizes on dimension d (1 if d is not blocked).
    dim_t block_of(int d) const;

    /// Logical element count (no padding).
    dim_t nelems() const;
    /// Element count including padding: the number of elements memory holds.
    dim_t nelems_padded() const;
    /// Bytes of memory the tensor needs, padding included.
    std::size_t size_bytes() const { return static_cast<std::size_t>(nelems_padded()) * size_of(dt_); }

    /// Element offset of a logical index (idx has ndims() entries; any index below
    /// padded_dims() is valid, which is how the zero padding is reached).
    dim_t offset(const dim_t *idx) const {
        dim_t off = 0, inner = 0;
        for (int d = 0; d < ndims_; ++d) off += (idx[d] / blk_[d]) * strides_[d];
        for (int k = 0; k < inner_nblks_; ++k) inner = inner * inner_blk_[k] + idx[inner_idx_[k]] % inner_blk_[k];
        return off + inner;
    }

    /// True if the layout has an inner block.
    bool is_blocked() const { return inner_nblks_ > 0; }

    /// Name of logical dimension d in the tag's family ("n", "c", "h", "o", "g", ...).
    const char *dim_name(int d) const;

    /// "nChw16c:2x17x5x7" style text for messages and verbose output.
    std::string str() const;

    bool operator==(const tensor_desc &o) const;
    bool operator!=(const tensor_desc &o) const { return !(*this == o); }

private:
    int ndims_ = 0;
    data_type dt_ = data_type::f32;
    format_tag tag_ = format_tag::undef;
    std::array<dim_t, max_ndims> dims_ {}, pdims_ {}, strides_ {}, blk_ {};
    int inner_nblks_ = 0;
    std::array<int, 2> inner_idx_ {};
    std::array<dim_t, 2> inner_blk_ {};
};

namespace impl {
struct tensor_access;
}

/// A tensor: a descriptor and the memory it describes.
///
/// A tensor either owns its memory (64-byte aligned, zero-filled, so the padding of blocked
/// layouts starts at zero) or wraps memory the caller owns. Copies share the same memory, as
/// `torch.Tensor` and `dnnl::memory` handles do; the memory of an owning tensor lives until the
/// last copy is gone, which is how work queued on a stream keeps its tensors alive.
class tensor {
public:
    /// An empty tensor (no memory).
    tensor() = default;

    /// Allocates zero-filled, 64-byte-aligned memory for `desc`; 2 MiB or more starts 64 bytes
    /// past a 2 MiB boundary and is advised for transparent huge pages unless BLOCKDNN_HUGE_PAGES=0
    /// (see the README's environment table). Throws `blockdnn::error`: out_of_memory if the
    /// allocation fails, invalid_arguments if BLOCKDNN_HUGE_PAGES is not 0 or 1.
    explicit tensor(const tensor_desc &desc);

    /// Wraps caller memory of at least desc.size_bytes() bytes; the caller keeps ownership and
    /// must keep it alive while the tensor (or queued work using it) exists. Throws
    /// `blockdnn::error` (invalid_arguments) if `data` is null or not aligned to the element
    /// size (4 bytes for f32).
    tensor(const tensor_desc &desc, void *data);

    /// Wraps memory that `owner` keeps alive: copies of the tensor, and work queued on a stream
    /// that uses it, share `owner`, so the memory lives until the last of them is gone. This is
    /// how memory another framework owns (a DLPack tensor of PyTorch or NumPy) is used without
    /// a copy. Throws as the constructor above does, and if `owner` is null.
    tensor(const tensor_desc &desc, void *data, std::shared_ptr<void> owner);

    const tensor_desc &desc() const { return desc_; }
    void *data() const { return data_; }
    /// The memory as float* (null for a tensor without memory). Throws `blockdnn::error`
    /// (invalid_arguments) if the type is not f32.
    float *f32() const;
    /// True if the tensor owns (shares ownership of) its memory.
    bool owns_memory() const { return static_cast<bool>(mem_); }
    /// True if the tensor has no memory.
    bool empty() const { return data_ == nullptr; }

    /// Fills memory with zeros, padding included.
    void zero();

private:
    friend struct impl::tensor_access;
    tensor_desc desc_;
    std::shared_ptr<void> mem_;
    void *data_ = nullptr;
};

} // namespace blockdnn
