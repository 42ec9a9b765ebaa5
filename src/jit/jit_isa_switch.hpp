// SPDX-License-Identifier: Apache-2.0
// The one switch from a run-time ISA level to a kernel template's level: the JIT kernels are
// template <isa level> classes, instantiated for avx512_core and avx2.
#pragma once

#include <memory>
#include <type_traits>
#include <utility>

#include "blockdnn/isa.hpp"

namespace blockdnn::impl {

/// f(std::integral_constant<isa, level>()) for the JIT levels: avx512_core, else avx2 (each
/// init_conf refuses the other levels first). The one switch from a run-time ISA to a template.
template <typename F>
decltype(auto) with_jit_isa(isa level, F &&f) {
    if (level == isa::avx512_core) return f(std::integral_constant<isa, isa::avx512_core>());
    return f(std::integral_constant<isa, isa::avx2>());
}

/// std::make_unique<K<level>>(args...) as a std::unique_ptr<base_t>, for the JIT levels.
template <template <isa> class K, typename base_t, typename... A>
std::unique_ptr<base_t> make_for_isa(isa level, A &&...args) {
    return with_jit_isa(level, [&](auto l) -> std::unique_ptr<base_t> {
        return std::make_unique<K<decltype(l)::value>>(std::forward<A>(args)...);
    });
}

} // namespace blockdnn::impl
