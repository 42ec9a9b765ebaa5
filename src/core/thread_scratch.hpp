// SPDX-License-Identifier: Apache-2.0
// Scratch buffers kept by the calling thread from one call to the next, for ops whose
// per-call buffers would otherwise be mapped and faulted in again on every call.
#pragma once

#include <cassert>
#include <cstddef>

#include "core/aligned_vector.hpp"

namespace blockdnn::impl {

/// A lease on `n` float buffers of the calling thread, kept between leases and grown when too
/// small (their contents lost then): they hold the thread's largest request until it exits.
/// `tag_t` gives each user its own buffers. A lease taken while another of the same tag is
/// held on the thread gets buffers of its own for its life, so leases nest: a thread waiting
/// in parallel_for may run another queued op (a stream's too) before its own returns.
template <typename tag_t, int n>
class thread_scratch_t {
public:
    thread_scratch_t() : nested_(held()) { held() = true; }
    ~thread_scratch_t() {
        if (!nested_) held() = false;
    }
    thread_scratch_t(const thread_scratch_t &) = delete;
    thread_scratch_t &operator=(const thread_scratch_t &) = delete;

    /// Buffer `i` (< n) with room for at least `floats` floats.
    float *get(int i, std::size_t floats) {
        assert(i >= 0 && i < n);
        aligned_vector<float> &b = nested_ ? own_[i] : kept()[i];
        if (b.size() < floats) {
            aligned_vector<float>().swap(b); // freed before the larger one is mapped
            b.resize(floats);
        }
        return b.data();
    }
    /// True if another lease of this tag was held on the thread when this one was taken.
    bool nested() const { return nested_; }

private:
    static aligned_vector<float> *kept() {
        static thread_local aligned_vector<float> b[n];
        return b;
    }
    static bool &held() {
        static thread_local bool h = false;
        return h;
    }
    bool nested_;
    aligned_vector<float> own_[n];
};

} // namespace blockdnn::impl
