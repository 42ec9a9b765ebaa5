// SPDX-License-Identifier: Apache-2.0
// How kernels treat denormal (subnormal) floats. On many x86 cores an operation on or producing a
// denormal takes a microcode assist a hundred or more times slower than the normal path, so
// denormal weights or activations would make an op's speed depend on its data. The default
// flushes them (what torch.set_flush_denormal(True) and OpenVINO's denormals optimization
// give on request). The mode holds on every thread an op runs on, and kernels round to nearest
// with every floating-point exception masked, whatever the caller's MXCSR holds (its rounding
// mode, its exception masks, its own FTZ and DAZ). No call changes the caller's MXCSR control
// bits, and an op's execution leaves its exception flags as they were too, also when it throws
// (with BLOCKDNN_VERBOSE on, the timing it prints may raise the precision flag).
#pragma once

namespace blockdnn {

enum class denormals_mode {
    /// Every kernel runs with MXCSR's flush-to-zero (FTZ: a denormal result becomes a zero of
    /// the same sign) and denormals-are-zero (DAZ: a denormal input reads as zero) bits set.
    flush,
    /// Every kernel runs with both bits clear: IEEE 754 gradual underflow, whatever the
    /// caller's own MXCSR holds.
    keep,
};

/// "flush" or "keep".
const char *to_string(denormals_mode m);

/// Sets the mode for the ops run afterwards; takes precedence over `BLOCKDNN_DENORMALS`.
/// Thread-safe. A reorder queued on a stream (inside a `stream_scope`) runs in the mode in force
/// when it was called; an op called from a function given to `stream::submit` reads the mode
/// when it runs.
/// Throws `blockdnn::error` (invalid_arguments) if m is not a denormals_mode value.
void set_denormals_mode(denormals_mode m);

/// Forgets a mode set with `set_denormals_mode`, so `BLOCKDNN_DENORMALS` (or flush) applies again.
void reset_denormals_mode();

/// The mode in force: the one from `set_denormals_mode`, else `BLOCKDNN_DENORMALS` (`flush` or
/// `keep`, read once), else flush. Throws `blockdnn::error` (invalid_arguments) naming the value
/// if `BLOCKDNN_DENORMALS` holds anything else (then so does every op).
denormals_mode get_denormals_mode();

} // namespace blockdnn
