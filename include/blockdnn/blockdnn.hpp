// SPDX-License-Identifier: Apache-2.0
// blockdnn: CPU deep-learning kernels in plain and blocked layouts. The one header to include.
#pragma once

#include "blockdnn/eltwise_alg.hpp"
#include "blockdnn/isa.hpp"
#include "blockdnn/reorder.hpp"
#include "blockdnn/status.hpp"
#include "blockdnn/stream.hpp"
#include "blockdnn/tensor.hpp"
#include "blockdnn/types.hpp"
