// SPDX-License-Identifier: Apache-2.0
// Checks the ops run on the tensors passed to execute(), and the zeroing of blocked padding.
#pragma once

#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include "blockdnn/tensor.hpp"
#include "tensor/padding.hpp" // zero_padding, used by every op that writes blocked dst
#include "tensor/layout.hpp"

namespace blockdnn::impl {

/// Throws invalid_arguments unless t has memory and exactly the descriptor `want`. Messages
/// name the op, the role and the first difference, with the problem field a dim stands for:
/// "conv_fwd: wei dims[3] (w) = 3, expected kw = 5 (wei is oihw:8x4x3x3)". `fields` holds one
/// name per dim of `want` ("mb", "ic", "ih", ...); a dim without one is named "dims[d]". The
/// names are read only for a message: the checks that pass format nothing.
void check_arg(const char *op, const char *role, const tensor &t, const tensor_desc &want,
        std::span<const std::string> fields = {});

/// Throws invalid_arguments unless `tag` is of `family` and describes `ndims` dims:
/// "conv_fwd: src layout oihw is a weights layout, expected an activation layout".
// Refuses format_tag::any for an op that does not pick a layout itself.
void check_not_any(const char *op, const char *role, format_tag tag);
void check_tag(const char *op, const char *role, format_tag tag, layout_family family, int ndims);

/// tensor_desc(dims, tag), with the descriptor's own errors prefixed by the op and role.
tensor_desc make_arg_desc(const char *op, const char *role, const dims_t &dims, format_tag tag);

/// d for `mb` of its images: its layout and data type, dims[0] = mb (ops that run a batch in
/// passes of images).
tensor_desc with_mb(const tensor_desc &d, dim_t mb);

/// True if the byte ranges of a's and b's memory intersect.
bool overlaps(const tensor &a, const tensor &b);

/// True if a and b are the same memory with the same descriptor (the in-place case).
bool same_tensor(const tensor &a, const tensor &b);

/// Throws invalid_arguments if a and b overlap: "<op>: dst overlaps src".
void check_no_overlap(const char *op, const char *a_role, const tensor &a, const char *b_role, const tensor &b);

/// A tensor of a call and its role, for check_outputs_alone.
struct role_tensor_t {
    const char *role;
    const tensor &t;
};

/// Throws invalid_arguments (check_no_overlap's message) if an output overlaps another output
/// or any input; empty tensors are skipped. An input listed in `in_place` for the output at
/// the same index may be that output exactly (same_tensor), and must not overlap it otherwise.
void check_outputs_alone(const char *op, std::initializer_list<role_tensor_t> outputs,
        std::initializer_list<role_tensor_t> inputs, std::initializer_list<const tensor *> in_place = {});

/// The bias argument of an op created with or without one: with_bias, a bia with memory
/// (else an error naming desc.with_bias = true) and check_arg of bia against `want` (field
/// oc); without, a bia that is not empty (`tensor()`) is an error naming desc.with_bias = false.
void check_bias_arg(const char *op, const tensor &bia, bool with_bias, const tensor_desc &want);

/// The weights of one execute of an op that may hold weights given at creation (conv, ip):
/// if it holds them (`held`), wei and bia must be empty; otherwise wei must have memory. The
/// errors name the two forms of execute.
void check_held_weights(const char *op, bool held, const tensor &wei, const tensor &bia);

/// The op's own copies of weights given at creation: wei reordered into a new tensor of
/// `wei_desc` (the layout its implementation reads best) and, when `bia_desc` has dims, bia
/// into one of `bia_desc`; after the current stream's queued work, which may still write them,
/// and on the calling thread. wei and bia are checked by the caller.
void hold_weights(const tensor &wei, const tensor &bia, const tensor_desc &wei_desc, const tensor_desc &bia_desc,
        tensor &own_wei, tensor &own_bia);

/// The names of a tensor's dims for check_arg: `lead` ("mb", "ic"), then "<prefix>d",
/// "<prefix>h", "<prefix>w" of the last `n` of the 3 spatial dims (1-D: w; 2-D: h, w; 3-D:
/// d, h, w).
std::vector<std::string> dim_fields(std::initializer_list<const char *> lead, const char *prefix, int n);

} // namespace blockdnn::impl
