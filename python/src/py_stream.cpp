// SPDX-License-Identifier: Apache-2.0
// blockdnn.Stream, blockdnn.Event, `with blockdnn.stream(s):` and the thread-count controls: the
// Python form of torch.cpu.Stream / torch.cpu.StreamContext over blockdnn::stream.
//
// Nothing here waits for a stream while holding the GIL: work queued on a stream may drop the
// last reference to a DLPack view on one of the library's threads, which takes the GIL to hand
// the memory back (release_managed in py_tensor.cpp), so a wait with the GIL held could wait
// for itself.
#include <Python.h>

#include <limits>
#include <stdexcept>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "bindings.hpp"

namespace blockdnn::python {

namespace {

// Deletes a stream with the GIL released: ~stream waits for the work queued on it (see above).
struct release_gil_delete {
    void operator()(stream *s) const noexcept {
        if (PyGILState_Check()) {
            py::gil_scoped_release nogil;
            delete s;
        } else {
            delete s;
        }
    }
};
using stream_holder = std::unique_ptr<stream, release_gil_delete>;

class stream_context;

// The contexts entered on this thread and not yet exited, innermost last.
thread_local std::vector<const stream_context *> entered_here;

// What `blockdnn.stream(s)` returns. stream_scope is per thread and, when it ends, restores the
// stream it replaced, so a context ends on the thread it began on, innermost first; anything
// else would leave the thread on the wrong stream, so it raises instead.
class stream_context {
public:
    explicit stream_context(py::object s) : stream_(std::move(s)) {}
    stream_context(const stream_context &) = delete;
    stream_context &operator=(const stream_context &) = delete;

    ~stream_context() {
        if (!entered_) return;
        if (thread_ == std::this_thread::get_id() && !entered_here.empty() && entered_here.back() == this) {
            scope_.reset();
            entered_here.pop_back();
        } else {
            // Never exited (an abandoned generator, say), and ending it now would undo the scopes
            // entered after it: the thread stays on the stream, which therefore stays alive.
            static_cast<void>(scope_.release());
            static_cast<void>(stream_.release());
        }
    }

    py::object enter() {
        if (entered_)
            throw std::runtime_error("blockdnn.stream: this context is already entered; "
                                     "call blockdnn.stream(s) again for a nested one");
        if (!stream_.is_none()) scope_ = std::make_unique<stream_scope>(stream_.cast<stream &>());
        entered_ = true;
        thread_ = std::this_thread::get_id();
        entered_here.push_back(this);
        return stream_;
    }

    void exit() {
        if (!entered_) throw std::runtime_error("blockdnn.stream: the context was not entered");
        if (thread_ != std::this_thread::get_id())
            throw std::runtime_error("blockdnn.stream: the context is exited on another thread than "
                                     "the one that entered it (each thread has its own current stream)");
        if (entered_here.empty() || entered_here.back() != this)
            throw std::runtime_error("blockdnn.stream: contexts must be exited innermost first");
        scope_.reset();
        entered_here.pop_back();
        entered_ = false;
    }

    const py::object &stream_object() const { return stream_; }

private:
    py::object stream_; // the Stream, held so that it outlives the scope; None: no change
    std::unique_ptr<stream_scope> scope_;
    bool entered_ = false;
    std::thread::id thread_;
};

int threads_arg(long long threads) {
    // Out-of-range values within int go to the library, which names them in its own error.
    if (threads < std::numeric_limits<int>::min() || threads > std::numeric_limits<int>::max())
        throw error(status::invalid_arguments,
                "blockdnn.Stream: threads = " + std::to_string(threads)
                        + " must be in [0, 1024] (0: all the library's threads)");
    return static_cast<int>(threads);
}

int count_arg(long long n, const char *fn) {
    // Out-of-range values within int go to the library, which names them in its own error.
    if (n < std::numeric_limits<int>::min() || n > std::numeric_limits<int>::max())
        throw error(
                status::invalid_arguments, std::string(fn) + ": n = " + std::to_string(n) + " must be in [1, 1024]");
    return static_cast<int>(n);
}

std::unique_ptr<stream_context> make_context(py::object s) {
    if (!s.is_none() && !py::isinstance<stream>(s))
        throw py::type_error("blockdnn.stream: expected a blockdnn.Stream or None, got "
                + std::string(py::str(py::type::of(s).attr("__qualname__"))));
    return std::make_unique<stream_context>(std::move(s));
}

std::string stream_repr(const stream &s) {
    if (s.is_default()) return "blockdnn.Stream(default)";
    return "blockdnn.Stream(threads=" + std::to_string(s.threads()) + ")";
}

} // namespace

void bind_streams(py::module_ &m) {
    using nogil = py::call_guard<py::gil_scoped_release>;

    py::class_<event>(m, "Event", R"(A point in a stream's sequence of operations, made by Stream.record().

Complete once every operation submitted to that stream before record() has finished. Like
torch.cuda.Event: it orders work across streams (Stream.wait) and lets the host wait for part
of a stream (synchronize). An event carries no error: errors surface at Stream.synchronize().)")
            .def("query", &event::query, "True once every operation recorded before it has finished; never blocks.")
            .def("synchronize", &event::synchronize, nogil(),
                    R"(Blocks until the event completes, with the GIL released, so other Python
threads run meanwhile. After it, the results of the operations recorded before it may be read.)")
            .def("__repr__", [](const event &e) {
                return std::string("blockdnn.Event(") + (e.query() ? "complete" : "pending") + ")";
            });

    py::class_<stream, stream_holder>(m, "Stream", R"(An ordered queue of blockdnn operations on the library's threads.

Like torch.cpu.Stream, with real asynchrony: inside `with blockdnn.stream(s):` every blockdnn
call of that Python thread (to_blocked, to_dense, each op's call) checks its arguments at once,
raising there, then is queued on s and returns before it has run. A result returned inside the
block may not be written until s.synchronize() (or an event recorded after it) returns, and an
input must not be changed before then; queued work keeps its tensors alive, torch tensors
included. Operations of one stream run one after another in call order; operations of different
streams run at the same time.

threads: how many of the library's threads each parallel loop of the stream's ops splits its
work for (OpenVINO's CPU throughput streams); 0, the default, means all of them, and a budget
above get_num_threads() counts as get_num_threads(). Results do not depend on it. Must be in
[0, 1024], else blockdnn.ArgumentError.

Deleting a stream waits for its queued work (with the GIL released); an error it has not
reported is then dropped.)")
            .def(py::init([](long long threads) {
                return stream_holder(new stream(stream_options {threads_arg(threads)}));
            }),
                    py::arg("threads") = 0)
            .def("synchronize", &stream::synchronize, nogil(),
                    R"(Blocks until everything queued on the stream so far has finished, with the GIL
released, then raises the first error an operation raised since the last synchronize
(blockdnn.Error, or blockdnn.ArgumentError for invalid arguments); the operations queued after a
failed one were skipped, and the stream then runs new work normally.)")
            .def("query", &stream::query, "True if everything queued on the stream so far has finished; never blocks.")
            .def("record", &stream::record, R"(An Event that completes when everything queued on the stream so far has
finished; returns at once (on the default stream the event is already complete).)")
            .def("wait", &stream::wait, py::arg("event"), nogil(),
                    R"(Makes the work queued on this stream after this call start only once `event` has
completed. Returns at once, except on the default stream, which runs work as it is called: there
it is event.synchronize().)")
            .def_property_readonly("threads", &stream::threads,
                    "the threads one op of the stream splits its work for now: its budget capped at "
                    "get_num_threads(), or get_num_threads() for a stream without one")
            .def_property_readonly("is_default", &stream::is_default,
                    "True for default_stream(), which runs every call at once, on the calling thread")
            .def("__repr__", &stream_repr);

    py::class_<stream_context>(m, "StreamContext", R"(What blockdnn.stream(s) returns: a context manager that makes
s the current stream of the calling Python thread while it is entered (None: no change).
Contexts end on the thread that entered them, innermost first; each may be entered once at a time.)")
            .def(py::init(&make_context), py::arg("stream"))
            .def_property_readonly("stream", &stream_context::stream_object, "the Stream it makes current (or None)")
            .def("__enter__", &stream_context::enter)
            .def("__exit__", [](stream_context &c, py::args) {
                c.exit();
                return false; // an exception raised inside the block propagates
            });

    m.def("stream", &make_context, py::arg("stream"),
            R"(A context manager that queues every blockdnn call of this Python thread on `stream`:

    s = blockdnn.Stream()
    with blockdnn.stream(s):
        xb = blockdnn.to_blocked(x)     # queued; xb is not written yet
        y = blockdnn.to_dense(xb)       # queued after it
    s.synchronize()                     # now y holds x

The form of `with torch.cpu.stream(s):`. Arguments are checked at each call, which raises there;
a result is ready once s.synchronize() returns. Other threads keep their own current stream.
None leaves the current stream as it is. Contexts nest.)");

    m.def(
            "current_stream", [] { return py::cast(&current_stream(), py::return_value_policy::reference); },
            "The stream blockdnn calls of this Python thread are queued on: that of the innermost "
            "`with blockdnn.stream(s):`, else default_stream().");
    m.def(
            "default_stream", [] { return py::cast(&default_stream(), py::return_value_policy::reference); },
            "The default stream: synchronous, so each call has finished (or raised) when it returns.");
    m.def(
            "streams",
            [](long long n) {
                std::vector<std::unique_ptr<stream>> made = make_streams(count_arg(n, "blockdnn.streams"));
                py::list out;
                for (auto &s : made) out.append(py::cast(stream_holder(s.release())));
                return out;
            },
            py::arg("n"),
            R"(n new Streams that share out the library's threads evenly (OpenVINO's num_streams): with
T = get_num_threads(), stream k gets a budget of T // n threads, one more for k < T % n, and at
least 1. The budgets are fixed when made. n must be in [1, 1024], else blockdnn.ArgumentError.

    ss = blockdnn.streams(2)
    for s, x in zip(ss, requests):
        with blockdnn.stream(s):
            outs.append(model(x))         # request k on stream k, half the threads each
    for s in ss:
        s.synchronize())");

    m.def(
            "set_num_threads", [](long long n) { set_num_threads(count_arg(n, "blockdnn.set_num_threads")); },
            py::arg("n"), nogil(),
            R"(Sets the number of threads blockdnn uses (the calling thread counts as one; 1 runs
everything on the calling thread, streams included). Takes precedence over BLOCKDNN_NUM_THREADS.
Work already queued on streams finishes first (the GIL is released while it waits). Call it while
no other Python thread is inside blockdnn. n must be in [1, 1024], else blockdnn.ArgumentError.)");
    m.def("get_num_threads", &get_num_threads,
            "The number of threads blockdnn uses: set_num_threads's, else BLOCKDNN_NUM_THREADS, else "
            "the physical cores. Raises blockdnn.ArgumentError if BLOCKDNN_NUM_THREADS is not an "
            "integer in [1, 1024].");
    m.def("reset_num_threads", &reset_num_threads, nogil(),
            "Forgets the count of set_num_threads, so BLOCKDNN_NUM_THREADS (read again) or the core "
            "count applies. Same rules as set_num_threads.");

    // For tests of the error path at synchronize, which blockdnn's own calls do not reach:
    // they check every argument at the call.
    m.def(
            "_queue_error",
            [](const std::string &message) {
                current_stream().submit([message] { throw error(status::invalid_arguments, message); });
            },
            py::arg("message"),
            "Queues on the current stream an operation that raises blockdnn.ArgumentError(message) when it runs.");
}

} // namespace blockdnn::python
