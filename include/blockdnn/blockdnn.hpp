// SPDX-License-Identifier: Apache-2.0
// blockdnn: CPU deep-learning kernels in plain and blocked layouts. The one header to include.
#pragma once

#include "blockdnn/binary.hpp"
#include "blockdnn/bnorm.hpp"
#include "blockdnn/conv.hpp"
#include "blockdnn/denormals.hpp"
#include "blockdnn/eltwise.hpp"
#include "blockdnn/eltwise_alg.hpp"
#include "blockdnn/inner_product.hpp"
#include "blockdnn/isa.hpp"
#include "blockdnn/pool.hpp"
#include "blockdnn/post_ops.hpp"
#include "blockdnn/primitive.hpp"
#include "blockdnn/reorder.hpp"
#include "blockdnn/rnn.hpp"
#include "blockdnn/softmax.hpp"
#include "blockdnn/status.hpp"
#include "blockdnn/stream.hpp"
#include "blockdnn/tensor.hpp"
#include "blockdnn/types.hpp"
