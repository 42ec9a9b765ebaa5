// SPDX-License-Identifier: Apache-2.0
// CPU streams (ordered queues of operations on the shared work-stealing pool), events that order
// work across streams, the current-stream scope, and the thread-count controls. The model is
// torch.cpu.Stream / torch.cpu.StreamContext, with real asynchrony.
#pragma once

#include <functional>
#include <memory>
#include <vector>

namespace blockdnn {

/// Sets the number of threads the library uses (the calling thread counts as one): 1 runs
/// everything inline on the calling thread. Takes precedence over `BLOCKDNN_NUM_THREADS`. Work
/// already queued on streams finishes first, on the old threads. Call it while no other thread
/// is inside the library. Throws `blockdnn::error` (invalid_arguments) if n is not in
/// [1, 1024], or if called from a task the library runs: a stream operation (also one run
/// inline on the caller's thread when there is 1 thread) or work on the library's threads.
void set_num_threads(int n);

/// The number of threads the library uses: the count from `set_num_threads`, else
/// `BLOCKDNN_NUM_THREADS`, else the number of physical cores cpuinfo reports (`cpu().physical_cores`).
/// Throws `blockdnn::error` (invalid_arguments) if `BLOCKDNN_NUM_THREADS` is set to anything
/// but an integer in [1, 1024] (then so does every call that needs the threads).
int get_num_threads();

/// Forgets a count set with `set_num_threads`, so `BLOCKDNN_NUM_THREADS` (read again) or the
/// core count applies to the threads started next. Same rules as `set_num_threads`.
void reset_num_threads();

namespace impl {
struct stream_state_t;
struct event_state_t;
} // namespace impl

/// A point in a stream's sequence of operations (CUDA's and torch's event). Copies refer to
/// the same event. A default-constructed event counts as complete.
class event {
public:
    event() = default;
    /// True once every operation submitted to the stream before `record()` has finished.
    bool query() const;
    /// Blocks until query() is true. The calling thread runs other queued work meanwhile.
    /// Throws `blockdnn::error` (invalid_arguments) when called, before the event completes,
    /// inside an operation of the stream it was recorded on, also from an op of another
    /// stream running nested in that operation (it would wait for itself).
    void synchronize() const;

private:
    friend class stream;
    explicit event(std::shared_ptr<impl::event_state_t> s) : state_(std::move(s)) {}
    std::shared_ptr<impl::event_state_t> state_;
};

/// How a stream shares the library's threads: OpenVINO's CPU "throughput streams", where each
/// stream serves its requests on a share of the cores so that several run side by side.
struct stream_options {
    /// The most threads each parallel loop of the stream's ops splits its work for and runs
    /// on at once, so streams whose budgets add up to get_num_threads() serve their requests
    /// side by side, each loop synchronizing only the threads of its share. Which threads
    /// those are is not fixed: any idle thread may join a loop of any stream (work stealing).
    /// Every op's result is the same whatever the budget. 0: all the library's threads; a
    /// budget above get_num_threads() counts as get_num_threads(). Must be in [0, 1024].
    int threads = 0;
};

/// An ordered queue of operations on the library's threads.
///
/// `submit` returns at once. Operations of one stream run one after another in submission
/// order (each sees the effects of the ones before); operations of different streams run at
/// the same time, and each may itself split its work with the library's parallel loops. With
/// one thread (`set_num_threads(1)`) `submit` runs the operation inline.
///
/// If an operation throws, the operations queued after it on that stream are skipped (events
/// recorded after it still complete) until `synchronize()` rethrows the exception; the stream
/// then runs new work normally. This holds with one thread too, where the op runs inside
/// submit: its exception still waits for `synchronize()`. An event carries no error: a stream
/// waiting on an event recorded after a failed op runs its own work anyway.
///
/// Two ops of different streams that each synchronize the other's stream wait for each other
/// forever; the library refuses only a wait on the stream an op itself runs on.
///
/// Data used by queued work must stay alive until it has run. `blockdnn::tensor` copies share
/// ownership of their memory, so an operation that captures tensors by value keeps them alive;
/// memory a tensor merely wraps (`tensor(desc, ptr)`) remains the caller's duty.
///
/// @code
///   blockdnn::stream s1, s2;
///   s1.submit([=] { reorder(a, a_blocked); });
///   blockdnn::event e = s1.record();
///   s2.wait(e);                      // s2's later work starts after s1's reorder; returns at once
///   { blockdnn::stream_scope on(s2); reorder(a_blocked, b); }   // queued on s2
///   s2.synchronize();                // rethrows the first error raised on s2
/// @endcode
///
/// A stream may be used from several threads; submissions are ordered as they reach it.
/// Streams are neither copyable nor movable (scopes refer to them by address).
class stream {
public:
    /// A new, empty, asynchronous stream whose ops use all the library's threads.
    stream();
    /// A new, empty, asynchronous stream with a thread budget. Throws `blockdnn::error`
    /// (invalid_arguments) naming `threads` and its value if it is outside [0, 1024].
    explicit stream(const stream_options &options);
    /// Waits for the work submitted so far; an error not yet reported by `synchronize` is
    /// dropped. Inside an operation of this same stream it cannot wait (it would wait for
    /// itself) and returns at once; the queued work still runs.
    ~stream();
    stream(const stream &) = delete;
    stream &operator=(const stream &) = delete;

    /// Queues op. On the default stream op runs at once, inline, and its exceptions reach the
    /// caller. A queued op runs with the MXCSR control bits (rounding, exception masks, FTZ,
    /// DAZ) the calling thread had at the call, as it would have inline; blockdnn ops inside it
    /// still run in the denormals mode (blockdnn/denormals.hpp), and the exception flags it
    /// raises stay on the thread that ran it. Throws `blockdnn::error` (invalid_arguments) if
    /// op is empty.
    void submit(std::function<void()> op);

    /// An event that completes when everything submitted so far has finished (at once on the
    /// default stream).
    event record();

    /// Work submitted to this stream after this call starts only once e has completed; the
    /// caller does not block. On the default stream, which runs work at once, this is
    /// `e.synchronize()`.
    void wait(const event &e);

    /// Blocks until everything submitted so far has finished, then rethrows the first
    /// exception an operation raised since the last synchronize (if any). The calling thread
    /// runs other queued work meanwhile, so it may be called from inside an operation of
    /// another stream or a parallel loop. Throws `blockdnn::error` (invalid_arguments) when
    /// called inside an operation of this same stream, also from an op of another stream
    /// running nested in it (with 1 thread, ops submitted from an op run inline, nested),
    /// which would wait for itself.
    void synchronize();

    /// True if everything submitted so far has finished.
    bool query() const;

    /// True for `default_stream()`.
    bool is_default() const { return state_ == nullptr; }

    /// The threads one op of this stream splits its work for now: its budget
    /// (stream_options::threads) capped at get_num_threads(), or get_num_threads() for a
    /// stream without a budget and for the default stream.
    int threads() const;

private:
    struct default_tag {};
    explicit stream(default_tag) {}
    friend stream &default_stream();
    std::shared_ptr<impl::stream_state_t> state_; // null: the default (synchronous) stream
};

/// n streams that share out the library's threads evenly, OpenVINO's `num_streams`: with
/// T = get_num_threads(), stream k gets a budget of T / n threads, one more for k < T % n, and
/// at least 1 (so n > T gives n one-thread streams, of which only T run at once: more streams
/// than threads add no throughput). The budgets are fixed here: a later set_num_threads does
/// not share them out again, though threads() still caps them. Throws `blockdnn::error`
/// (invalid_arguments) naming n if it is outside [1, 1024].
///
/// @code
///   auto ss = blockdnn::make_streams(2);           // two streams, half the threads each
///   for (int k = 0; k < 2; ++k) {
///       blockdnn::stream_scope on(*ss[k]);
///       conv.execute(src[k], dst[k]);             // queued on stream k, split for its share
///   }
///   for (auto &s : ss) s->synchronize();
/// @endcode
std::vector<std::unique_ptr<stream>> make_streams(int n);

/// The default stream: synchronous, so plain calls behave as users expect (the op has finished,
/// or thrown, when the call returns).
stream &default_stream();

/// The stream ops called on this thread are queued on: the innermost `stream_scope`'s, else
/// `default_stream()`. Inside an operation running on a stream it is the default stream, so
/// nested ops run inline within that operation.
stream &current_stream();

/// Makes `s` the current stream of this thread for the guard's lifetime, the C++ form of
/// `with torch.cpu.stream(s):`. These library calls are queued on `s`, in call order: each op's
/// `execute`, `reorder`, `to_blocked`, `to_dense`, `bnorm_fold_into_conv`,
/// `bnorm_update_running_stats`, `rnn_import_weights` and `rnn_import_bias`. Their argument
/// checks run at the call and throw there; the queued work holds the op's state and shares
/// ownership of the tensors' memory (no copy of the data), so both stay alive until it has
/// run (memory a tensor merely wraps stays the caller's duty); it runs in the denormals mode
/// the caller had at the call. Do not write an input or read an output before
/// `s.synchronize()` (or an event recorded after the op). Creating an op with its weights
/// (conv_fwd, inner_product_fwd, rnn_fwd) reads them at once, so inside a scope it first
/// waits for the work queued on `s` (which may be what writes them) and rethrows its error;
/// constructing a tensor and `tensor::zero()` are never queued. Scopes nest; `s` must outlive
/// the guard.
///
/// @code
///   blockdnn::stream s;
///   {
///       blockdnn::stream_scope on(s);
///       blockdnn::reorder(x, x_blocked);         // queued on s
///       conv.execute(x_blocked, y);              // queued after it: reads the reordered x
///   }
///   s.synchronize();                             // y is ready
/// @endcode
class stream_scope {
public:
    explicit stream_scope(stream &s);
    ~stream_scope();
    stream_scope(const stream_scope &) = delete;
    stream_scope &operator=(const stream_scope &) = delete;

private:
    stream *prev_;
};

} // namespace blockdnn
