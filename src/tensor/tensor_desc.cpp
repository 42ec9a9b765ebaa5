// SPDX-License-Identifier: Apache-2.0
// tensor_desc: validation of dims against a tag, padded dims and strides; tensor memory.
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

#include "blockdnn/tensor.hpp"
#include "core/memory.hpp"
#include "core/utils.hpp"
#include "tensor/layout.hpp"

namespace blockdnn {

using impl::fail;

tensor_desc::tensor_desc(const dims_t &dims, data_type dt, format_tag tag) {
    if (!impl::is_format_tag(tag))
        fail(status::invalid_arguments, "tensor_desc: format tag ", static_cast<int>(tag),
                " is not a format_tag value");
    const impl::layout_info_t &li = impl::layout_info(tag);
    if (tag == format_tag::undef) fail(status::invalid_arguments, "tensor_desc: format tag is undef");
    if (tag == format_tag::any)
        fail(status::invalid_arguments,
                "tensor_desc: format tag is any, which only an op's creation takes (the op "
                "picks the layout; make the tensor from its src_desc(), wei_desc() or dst_desc())");
    if (dims.empty() || dims.size() > static_cast<std::size_t>(max_ndims))
        fail(status::invalid_arguments, "tensor_desc: ", dims.size(), " dims given; a tensor has 1 to ", max_ndims,
                " dims");
    if (static_cast<int>(dims.size()) != li.ndims)
        fail(status::invalid_arguments, "tensor_desc: format ", li.name, " needs ", li.ndims, " dims, got ",
                dims.size());
    for (int d = 0; d < li.ndims; ++d)
        if (dims[d] <= 0)
            fail(status::invalid_arguments, "tensor_desc: dims[", d, "] (", li.dim_letter[d], ") = ", dims[d],
                    " must be positive");
    if (dt != data_type::f32 && dt != data_type::bf16)
        fail(status::invalid_arguments, "tensor_desc: data type ", static_cast<int>(dt), " is not a data_type value");
    if (dt != data_type::f32)
        fail(status::unimplemented, "tensor_desc: data type ", to_string(dt), " is not supported yet (only f32)");

    ndims_ = li.ndims;
    dt_ = dt;
    tag_ = tag;
    inner_nblks_ = li.nblks;
    dim_t inner = 1;
    for (int d = 0; d < ndims_; ++d) blk_[d] = 1;
    for (int k = 0; k < li.nblks; ++k) {
        inner_idx_[k] = li.blk_dim[k];
        inner_blk_[k] = li.blk_size[k];
        blk_[li.blk_dim[k]] *= li.blk_size[k];
        inner *= li.blk_size[k];
    }
    for (int d = 0; d < ndims_; ++d) {
        dims_[d] = dims[d];
        if (dims[d] > INT64_MAX - blk_[d])
            fail(status::invalid_arguments, "tensor_desc: dims[", d, "] (", li.dim_letter[d], ") = ", dims[d],
                    " is too large to pad to its block of ", blk_[d]);
        pdims_[d] = impl::rnd_up(dims[d], blk_[d]);
    }
    // Outer strides, innermost outer dim first; the running product is also the element count,
    // so checking it for overflow checks size_bytes too (with the element size below).
    dim_t running = inner;
    for (int k = ndims_ - 1; k >= 0; --k) {
        const int d = li.outer_order[k];
        strides_[d] = running;
        if (!impl::mul_no_overflow(running, pdims_[d] / blk_[d], running))
            fail(status::invalid_arguments, "tensor_desc: ", str(), " has more elements than int64 can count");
    }
    dim_t bytes = 0;
    if (!impl::mul_no_overflow(running, static_cast<dim_t>(size_of(dt)), bytes))
        fail(status::invalid_arguments, "tensor_desc: ", str(), " needs more bytes than int64 can count");
}

dim_t tensor_desc::block_of(int d) const { return blk_[d]; }

dim_t tensor_desc::nelems() const {
    if (ndims_ == 0) return 0;
    dim_t n = 1;
    for (int d = 0; d < ndims_; ++d) n *= dims_[d];
    return n;
}

dim_t tensor_desc::nelems_padded() const {
    if (ndims_ == 0) return 0;
    dim_t n = 1;
    for (int d = 0; d < ndims_; ++d) n *= pdims_[d];
    return n;
}

const char *tensor_desc::dim_name(int d) const {
    static const char *const names[] = {"?", "n", "c", "d", "h", "w", "x", "g", "o", "i", "t", "l"};
    const char letter = impl::layout_info(tag_).dim_letter[d];
    const char *const letters = "?ncdhwxgoitl";
    const char *p = std::strchr(letters, letter);
    return names[p ? p - letters : 0];
}

std::string tensor_desc::str() const {
    std::string s = to_string(tag_);
    s += ':';
    for (int d = 0; d < ndims_; ++d) {
        if (d) s += 'x';
        s += std::to_string(dims_[d]);
    }
    return s;
}

bool tensor_desc::operator==(const tensor_desc &o) const {
    if (ndims_ != o.ndims_ || dt_ != o.dt_ || tag_ != o.tag_) return false;
    for (int d = 0; d < ndims_; ++d)
        if (dims_[d] != o.dims_[d]) return false;
    return true;
}

tensor::tensor(const tensor_desc &desc) : desc_(desc) {
    const std::size_t bytes = impl::rnd_up(static_cast<impl::dim_t>(std::max<std::size_t>(desc.size_bytes(), 1)), 64);
    void *p = impl::alloc_memory(bytes);
    if (!p) fail(status::out_of_memory, "tensor: cannot allocate ", bytes, " bytes for ", desc.str());
    std::memset(p, 0, bytes);
    mem_ = std::shared_ptr<void>(p, [bytes](void *q) { impl::free_memory(q, bytes); });
    data_ = p;
}

tensor::tensor(const tensor_desc &desc, void *data) : desc_(desc) {
    if (!data) fail(status::invalid_arguments, "tensor: data pointer for ", desc.str(), " is null");
    const auto align = size_of(desc.dt());
    if (reinterpret_cast<std::uintptr_t>(data) % align != 0)
        fail(status::invalid_arguments, "tensor: data pointer ", data, " for ", desc.str(), " is not aligned to its ",
                align, "-byte elements");
    data_ = data;
}

tensor::tensor(const tensor_desc &desc, void *data, std::shared_ptr<void> owner) : tensor(desc, data) {
    if (!owner) fail(status::invalid_arguments, "tensor: owner of the memory for ", desc.str(), " is null");
    mem_ = std::move(owner);
}

float *tensor::f32() const {
    if (desc_.dt() != data_type::f32)
        fail(status::invalid_arguments, "tensor: f32() on a tensor of type ", to_string(desc_.dt()));
    return static_cast<float *>(data_);
}

void tensor::zero() {
    if (data_) std::memset(data_, 0, desc_.size_bytes());
}

} // namespace blockdnn
