// SPDX-License-Identifier: Apache-2.0
// oneDNN (v2 API, Debian's libdnnl 2.6.3) forward softmax as a baseline in the same binary as
// blockdnn's: one problem created once, executed per benchmark iteration.
#pragma once

#include <memory>
#include <string>

#include "blockdnn/softmax.hpp"

namespace bench {

class onednn_softmax_t {
public:
    /// Creates the primitive (forward_inference along d.axis) with src and dst of its own in
    /// the plain layout `tag` (oneDNN's memory desc from its strides; throws
    /// std::invalid_argument for a blocked one), dst on src's memory when `inplace`. src holds
    /// fill_pattern's values (onednn_memory.hpp), not the blockdnn row's: a softmax's time
    /// does not depend on them. `nthr` OpenMP threads run it.
    onednn_softmax_t(const blockdnn::softmax_desc &d, blockdnn::format_tag tag, bool inplace, int nthr);
    ~onednn_softmax_t();
    void execute();
    /// oneDNN's implementation name ("jit:avx512_core", "ref:any").
    std::string impl_name() const;

private:
    struct impl_t;
    std::unique_ptr<impl_t> impl_;
};

} // namespace bench
