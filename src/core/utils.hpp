// SPDX-License-Identifier: Apache-2.0
// Small helpers shared by src/: integer arithmetic and error text.
#pragma once

#include <charconv>
#include <cstdint>
#include <cstring>
#include <new>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>

#include "blockdnn/status.hpp"

namespace blockdnn::impl {

using dim_t = std::int64_t;

constexpr dim_t div_up(dim_t a, dim_t b) { return (a + b - 1) / b; }
constexpr dim_t rnd_up(dim_t a, dim_t b) { return div_up(a, b) * b; }

/// The largest divisor of n (n >= 1) that is at most hi; 1 if hi < 2.
constexpr dim_t largest_divisor_at_most(dim_t n, dim_t hi) {
    for (dim_t d = hi < n ? hi : n; d > 1; --d)
        if (n % d == 0) return d;
    return 1;
}

/// a * b into out; false if the product overflows int64.
inline bool mul_no_overflow(dim_t a, dim_t b, dim_t &out) { return !__builtin_mul_overflow(a, b, &out); }

/// Concatenates anything streamable into one string: cat("dims[", 1, "] = ", 0).
template <typename... Args>
std::string cat(Args &&...args) {
    std::ostringstream os;
    (os << ... << std::forward<Args>(args));
    return os.str();
}

/// Appends the bytes of each value to `key`: the kernel cache's keys, built on every creation
/// (cached ones too) from the confs' fields, so no text is formatted for them. One resize and
/// fixed-size copies, where an append per value costs a call each. Keys of a conf bind it
/// first (`const auto &[a, b] = c;`), which must name every member, and pass every bound name
/// here: a new field fails to compile until the binding, and so the key, names it.
template <typename... T>
void append_raw(std::string &key, const T &...v) {
    static_assert((std::is_trivially_copyable_v<T> && ...), "append_raw copies bytes");
    std::size_t at = key.size();
    key.resize(at + (sizeof(T) + ...));
    ((std::memcpy(key.data() + at, &v, sizeof(T)), at += sizeof(T)), ...);
}

/// v in the shortest text that reads back as v ("0.1", "1e-05"): confs' to_string, where equal
/// texts must mean equal values.
inline std::string float_str(float v) {
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
}

/// "2x19x3x5", benchdnn's text of dims (any container of integers).
template <typename ints_t>
std::string dims_text(const ints_t &d) {
    std::string s;
    for (std::size_t k = 0; k < d.size(); ++k) s += cat(k ? "x" : "", d[k]);
    return s;
}

/// Throws blockdnn::error(s, cat(args...)). Used at the public boundary: validation of what
/// the caller passed, before anything the caller owns is written; and oom_as_error below.
template <typename... Args>
[[noreturn]] void fail(status s, Args &&...args) {
    throw error(s, cat(std::forward<Args>(args)...));
}

/// Runs f() and returns what it returns; a std::bad_alloc out of it (an implementation's
/// offset tables or scratch) becomes blockdnn::error(out_of_memory) naming op and `what`, since
/// public functions throw only blockdnn::error. Wraps the creation and the execution of an
/// op's implementation. (An execution that runs out of memory may have written part of dst.)
template <typename F>
decltype(auto) oom_as_error(const char *op, const char *what, F &&f) {
    try {
        return f();
    } catch (const std::bad_alloc &) {
        fail(status::out_of_memory, op, ": out of memory ", what);
    }
}

} // namespace blockdnn::impl
