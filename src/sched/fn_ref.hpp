// SPDX-License-Identifier: Apache-2.0
// fn_ref_t: a non-owning reference to a callable (two pointers, no allocation), for bodies that
// live on the caller's stack for the whole call, such as parallel_for's.
#pragma once

#include <memory>
#include <type_traits>
#include <utility>

namespace blockdnn::impl::sched {

template <typename Sig>
class fn_ref_t;

template <typename R, typename... Args>
class fn_ref_t<R(Args...)> {
public:
    template <typename F, typename = std::enable_if_t<!std::is_same_v<std::decay_t<F>, fn_ref_t>>>
    fn_ref_t(F &&f) // NOLINT: implicit, like std::function
        : obj_(const_cast<void *>(static_cast<const void *>(std::addressof(f)))),
          call_([](void *obj, Args... args) -> R {
              return (*static_cast<std::remove_reference_t<F> *>(obj))(std::forward<Args>(args)...);
          }) {}

    R operator()(Args... args) const { return call_(obj_, std::forward<Args>(args)...); }

private:
    void *obj_;
    R (*call_)(void *, Args...);
};

} // namespace blockdnn::impl::sched
