// SPDX-License-Identifier: Apache-2.0
// --baseline=onednn: oneDNN's time for each convolution and softmax, measured in the same run
// (baseline/onednn_conv.*, baseline/onednn_softmax.*). Built only when the onednn_baseline
// option found libdnnl.
#pragma once

#include <string>
#include <vector>

#include "driver/runner.hpp"

namespace bdrv {

/// The oneDNN baseline, or an empty function with the reason in `why` when it is not built.
/// oneDNN's ISA is fixed once per process: it is capped at the first ISA of `isas`, and rows
/// of other ISAs get no baseline time.
baseline_t onednn_baseline(const std::vector<blockdnn::isa> &isas, std::string &why);

} // namespace bdrv
