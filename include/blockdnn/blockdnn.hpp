// SPDX-License-Identifier: Apache-2.0
// blockdnn: CPU deep-learning kernels in plain and blocked layouts. The one header to include.
#pragma once

#include "blockdnn/bnorm.hpp"
#include "blockdnn/eltwise_alg.hpp"
#include "blockdnn/isa.hpp"
#include "blockdnn/reorder.hpp"
#include "blockdnn/rnn.hpp"
#include "blockdnn/status.hpp"
#include "blockdnn/tensor.hpp"
#include "blockdnn/types.hpp"
