// SPDX-License-Identifier: Apache-2.0
// The unit the pool runs: a function pointer and an intrusive link. Concrete tasks derive from
// task_t and carry their own data; the pool never allocates or frees them.
#pragma once

namespace blockdnn::impl::sched {

struct task_t {
    /// Runs the task. It may free the task; the pool does not touch it afterwards.
    void (*run)(task_t *self) = nullptr;
    /// Link used only while the task sits in an inbox_t.
    task_t *next = nullptr;
};

} // namespace blockdnn::impl::sched
