// SPDX-License-Identifier: Apache-2.0
// For tools that generate kernels without running them (kernelgen): dispatch as if the CPU had
// a given ISA, so that the AVX-512 kernels can be created and inspected on an AVX2-only
// machine. Nothing created while an assumption above the CPU's ISA is in force may run.
#pragma once

#include "blockdnn/isa.hpp"

namespace blockdnn::impl {

/// From now on, effective_isa() is min(level, max_isa()) instead of
/// min(detected_isa(), max_isa()). Process-wide.
void assume_cpu_isa(isa level);
/// Forgets the assumption: dispatch follows the CPU again.
void reset_assumed_cpu_isa();

} // namespace blockdnn::impl
