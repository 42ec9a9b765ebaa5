// SPDX-License-Identifier: Apache-2.0
// lazy_t: a value made once, on first use, safely from several threads.
#pragma once

#include <functional>
#include <mutex>
#include <utility>

namespace blockdnn::impl {

/// A value made on first use, once, even when get() runs on several threads at once. Reference
/// implementations build their tables with it at the first execute(), not at creation: an op
/// may be created for a problem whose tensors are never allocated (a shape query, or dims no
/// tensor could hold), and its tables (8 bytes per index of each dim) then cost nothing. If
/// make throws, the next get() tries again.
template <typename T>
class lazy_t {
public:
    explicit lazy_t(std::function<T()> make) : make_(std::move(make)) {}
    const T &get() const {
        std::call_once(once_, [this] { value_ = make_(); });
        return value_;
    }

private:
    std::function<T()> make_;
    mutable std::once_flag once_;
    mutable T value_ {};
};

} // namespace blockdnn::impl
