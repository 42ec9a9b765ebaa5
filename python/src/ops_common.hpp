// SPDX-License-Identifier: Apache-2.0
// What the files of the op objects (py_ops.cpp, py_conv.cpp, py_pool.cpp) share: arguments in
// and results out, the parameters' private copies, the memory for results and the per-shape op
// caches (lru_list serves RnnStack's too). The functions are defined in py_ops.cpp, the
// templates here.
//
// The library's ops are made for one problem (conv_desc holds mb and the sizes), so each object
// makes its op on the first call with a given input descriptor and keeps it: a call with a shape
// and layout seen before is a lookup, an execute and the result's conversion. The inputs are
// viewed without a copy; a plain input gives a torch tensor that views the library's result, a
// blockdnn.Tensor gives a blockdnn.Tensor in its layout (nChw16c in, nChw16c out).
//
// Every call converts its arguments with the GIL, then releases it to make an op or run one;
// the op runs on the calling thread's current stream (blockdnn.stream(s)), so inside one the
// work is queued and the result is ready once the stream is synchronized.
#pragma once

#include <cstddef>
#include <list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"

namespace blockdnn::python {

// ------------------------------------------------------------------ tensors in and out

/// True for the channels-last tags nwc, nhwc, ndhwc.
bool is_channels_last(format_tag tag);

/// An argument as a library tensor, and whether it came as a blockdnn.Tensor (the result then
/// is one too) or as anything else (a torch tensor or an array: the result is a torch tensor).
struct input_t {
    tensor t;
    bool is_blockdnn = false;
};

/// as_tensor(), with a torch tensor that requires grad taken as a detached view of the same
/// memory (PyTorch gives no DLPack view of one). Inference results have no autograd history.
tensor as_tensor_detached(py::handle x, const char *arg);

/// An op's input `x`; `arg` names it in errors.
input_t take(py::handle x, const char *arg);

/// An op's result for Python: `dst` as a blockdnn.Tensor, or as a torch tensor viewing its
/// memory (dst is plain then: the ops reorder a blocked result back for a plain input).
py::object give(const tensor &dst, bool as_blockdnn);

/// True if `desc` is the plain row-major layout of its rank (nchw, not nhwc): the one layout an
/// op's own copy of a parameter, or a view with other dims, may have.
bool is_row_major(const tensor_desc &desc);

/// A private copy of a parameter (weights, bias, statistics), row-major in layout `tag`, so that
/// the op keeps what it was given whatever happens to the torch tensor later. `owner` (the
/// module's name) and `arg` name the parameter in errors; its shape must be `dims`. The copy is
/// made at the call, whatever stream is current, so it holds the parameter once the call returns.
tensor own_copy(py::handle obj, const std::string &owner, const char *arg, const dims_t &dims, format_tag tag);

/// own_copy(), or nothing for None.
std::optional<tensor> own_copy_or_none(
        py::handle obj, const std::string &owner, const char *arg, const dims_t &dims, format_tag tag);

/// Runs `f`, with the library's errors naming the module they came from.
template <typename F>
auto named(const std::string &name, F &&f) {
    try {
        return f();
    } catch (const error &e) {
        throw error(e.code(), name + ": " + e.what());
    }
}

/// A result's memory, from the pool of result buffers (reused once nothing views them): for the
/// ops that write every element of dst, blocked padding included (conv, pooling, eltwise, batch
/// norm, softmax, inner product and reorder do). Call it with the GIL held.
tensor result(const tensor_desc &desc);

// ------------------------------------------------------------------ checks of the input

/// Throws ValueError unless `src` has `ndims` dims; `dims_text` spells them, "(N, C, H, W)".
void check_rank(const std::string &name, const tensor_desc &src, int ndims, const char *dims_text);

/// Throws ValueError unless `src` has `c` channels (dim 1); `field` names the module's argument.
void check_channels(const std::string &name, const tensor_desc &src, dim_t c, const char *field);

/// The extent of a kernel or window of size k at dilation `dil` (PyTorch's: 1 is dense) along
/// spatial dim j of `src`; throws ValueError, in PyTorch's terms, unless it fits the input
/// padded by `pad` in all along that dim. `what` names it: "kernel" (conv), "window" (pooling).
dim_t checked_extent(
        const std::string &name, const char *what, const tensor_desc &src, int j, dim_t k, dim_t dil, dim_t pad);

/// The dims of an activation of rank 3 to 5 as PyTorch's docs spell them: "(N, C, L)"...
const char *act_dims_text(int ndims);

// ------------------------------------------------------------------ the per-shape op caches

/// At most `capacity` values by key, the least recently used dropped first: the per-shape op
/// caches (op_cache here, RnnStack's in py_rnn.cpp), so a stream of ever new shapes does not
/// hold memory for each while the shapes in use stay found. Keys are compared with ==, one by
/// one: a cache holds a handful of shapes, and tensor_desc has no hash. (The library's own
/// lru_map_t, src/core/lru_map.hpp, is not among the public headers the extension builds with.)
/// No locking: each owner guards its own (with the GIL, or a mutex).
template <typename Key, typename Value>
class lru_list {
public:
    explicit lru_list(std::size_t capacity) : capacity_(capacity) {}

    /// The value of `key`, now the most recently used; null if absent.
    Value *find(const Key &key) {
        for (auto it = entries_.begin(); it != entries_.end(); ++it)
            if (it->first == key) {
                entries_.splice(entries_.end(), entries_, it);
                return &entries_.back().second;
            }
        return nullptr;
    }

    /// Keeps (key, value) as the most recently used (replacing the value of a key held), then
    /// drops the least recently used beyond the capacity.
    void insert(Key key, Value value) {
        if (Value *held = find(key)) {
            *held = std::move(value);
            return;
        }
        entries_.emplace_back(std::move(key), std::move(value));
        if (entries_.size() > capacity_) entries_.pop_front();
    }

    void clear() { entries_.clear(); }
    std::size_t size() const { return entries_.size(); }

    /// The (key, value) pairs, least recently used (the next to be dropped) first.
    auto begin() const { return entries_.cbegin(); }
    auto end() const { return entries_.cend(); }

private:
    std::size_t capacity_;
    std::list<std::pair<Key, Value>> entries_; // least recently used first
};

/// The ops one Python object made, one per input descriptor (and variant: a conv with or without
/// the sum post-op), in an lru_list of `capacity` shapes: few are live at once. Called with the
/// GIL held, which guards it.
template <typename op_t>
class op_cache {
public:
    // The op for (src, variant): found, or made by `make()` with the GIL released (making may
    // generate code or reorder weights). A copy of the op (a handle) is returned, so a call
    // keeps its op even if another thread's call drops it from the cache meanwhile. `make`
    // reads the parameters the caller copied with the GIL; an op made from parameters that
    // were replaced meanwhile (clear()) serves its call but is not kept. Those copies were made
    // at the call (own_copy), so the op is made outside any stream: inside one, the library
    // would first wait for all the work queued on it, and only the op's execution is queued.
    template <typename make_t>
    op_t get(const tensor_desc &src, int variant, make_t &&make) {
        const shape_key key {src, variant};
        if (const op_t *op = ops_.find(key)) return *op;
        const unsigned generation = generation_;
        std::optional<op_t> made;
        {
            py::gil_scoped_release nogil;
            stream_scope now(default_stream());
            made.emplace(make());
        }
        if (generation != generation_) return *made;
        if (const op_t *op = ops_.find(key)) return *op; // another thread made it first
        ops_.insert(key, *made);
        return *made;
    }

    // Drops every op: the parameters they hold were replaced.
    void clear() {
        ops_.clear();
        ++generation_;
    }
    std::size_t size() const { return ops_.size(); }

    // (src descriptor, implementation) of each op, least recently used first: which kernels
    // the shapes run.
    std::vector<std::pair<std::string, std::string>> impls() const {
        std::vector<std::pair<std::string, std::string>> v;
        for (const auto &[key, op] : ops_) v.emplace_back(key.first.str(), op.impl_name());
        return v;
    }

    static constexpr std::size_t capacity = 16;

private:
    using shape_key = std::pair<tensor_desc, int>; // (src, variant)
    lru_list<shape_key, op_t> ops_ {capacity};
    unsigned generation_ = 0;
};

/// The implementations an op object's cached ops run, as (input descriptor, impl_name) pairs.
template <typename op_t>
py::list impls_of(const op_cache<op_t> &c) {
    py::list l;
    for (const auto &[src, impl] : c.impls()) l.append(py::make_tuple(src, impl));
    return l;
}

/// Defines `_impls` and `_cache_size` on a class whose objects have cache() (an op_cache).
template <typename cls_t>
void def_cache_queries(cls_t &cls) {
    using op_t = typename cls_t::type;
    cls.def_property_readonly(
            "_impls", [](const op_t &o) { return impls_of(o.cache()); },
            "(input descriptor, implementation) of each op kept, least recently used first");
    cls.def_property_readonly("_cache_size", [](const op_t &o) { return o.cache().size(); });
}

} // namespace blockdnn::python
