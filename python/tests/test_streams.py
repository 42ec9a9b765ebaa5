"""Streams from Python: calls inside `with blockdnn.stream(s):` queue on s and give what the
same calls give synchronously; events order streams; errors surface at synchronize; the
current stream is per thread; and no blockdnn call holds the GIL while it runs or waits.

Nothing here measures time. The GIL test lets the GIL change hands only when a thread blocks
(a switch interval far longer than the test), so a second thread can see the first one inside
a blockdnn call only if that call released the GIL."""
import faulthandler
import gc
import sys
import threading
import weakref

import numpy as np
import pytest
import torch

import blockdnn
from blockdnn import _blockdnn


@pytest.fixture
def two_threads():
    """Two library threads whatever the machine's cores, so that queued work runs on a thread of
    its own while the caller goes on (with one thread it would run inline, at the call)."""
    blockdnn.set_num_threads(2)
    yield
    blockdnn.reset_num_threads()


@pytest.fixture
def long_switch_interval(deadlock_watchdog):
    """The GIL changes hands only when the thread holding it blocks or releases it."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1000.0)
    yield
    sys.setswitchinterval(old)


@pytest.fixture
def deadlock_watchdog():
    """A wait that keeps the GIL while queued work needs it never returns, and nothing in Python
    can interrupt it: faulthandler's own thread then prints every thread's stack and ends the
    process, a failure with the place it hung, rather than a test run that never ends. The
    limit is no speed requirement; the tests it guards take well under a second."""
    faulthandler.dump_traceback_later(300, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


# ---- results on streams ------------------------------------------------------------------------


@pytest.mark.parametrize('shape', [(1, 1, 1, 1), (2, 17, 5, 3), (3, 64, 7, 7), (1, 3, 4, 5, 6), (2, 20, 9)])
def test_reorders_on_a_stream_match_synchronous_ones(two_threads, shape):
    x = torch.randn(*shape)
    want_blocked = blockdnn.to_blocked(x)
    s = blockdnn.Stream()
    with blockdnn.stream(s):
        xb = blockdnn.to_blocked(x)
        y = blockdnn.to_dense(xb)   # queued after the reorder it reads
    s.synchronize()
    assert s.query()
    assert xb.layout == want_blocked.layout
    assert torch.equal(y, x)
    assert torch.equal(blockdnn.to_dense(xb), blockdnn.to_dense(want_blocked))


def test_many_calls_queued_in_order(two_threads):
    xs = [torch.randn(2, 16 + k, 5, 5) for k in range(20)]
    s = blockdnn.Stream(threads=1)
    with blockdnn.stream(s):
        ys = [blockdnn.to_dense(blockdnn.to_blocked(x)) for x in xs]
    s.synchronize()
    for x, y in zip(xs, ys):
        assert torch.equal(x, y)


def test_queued_work_keeps_its_torch_tensors_alive(two_threads):
    s = blockdnn.Stream()
    with blockdnn.stream(s):
        xb = blockdnn.to_blocked(torch.arange(2 * 16 * 9, dtype=torch.float32).reshape(2, 16, 3, 3))
    gc.collect()
    s.synchronize()
    assert torch.equal(blockdnn.to_dense(xb), torch.arange(2 * 16 * 9, dtype=torch.float32).reshape(2, 16, 3, 3))


def test_rnn_on_a_stream_matches_a_synchronous_call(two_threads):
    torch.manual_seed(3)
    ref = torch.nn.RNN(10, 10).eval()
    rnn = blockdnn.RNN.from_torch(ref)
    x = torch.randn(100, 10)
    want, want_h = rnn(x)
    s = blockdnn.Stream()
    with blockdnn.stream(s):
        got, got_h = rnn(x)
    s.synchronize()
    assert torch.equal(got, want)
    assert torch.equal(got_h, want_h)


@pytest.mark.parametrize('blocked', [False, True])
def test_conv_and_relu_on_a_stream_match_synchronous_calls(two_threads, blocked):
    torch.manual_seed(4)
    conv = blockdnn.nn.Conv2d.from_torch(torch.nn.Conv2d(16, 32, 3, padding=1).eval())
    relu = blockdnn.nn.ReLU()
    x = torch.randn(2, 16, 12, 12)
    if blocked:
        x = blockdnn.to_blocked(x)
    want = blockdnn.to_dense(relu(conv(x)))
    s = blockdnn.Stream()
    with blockdnn.stream(s):
        # A second conv object: its op is made inside the block, which waits for s's work first.
        conv2 = blockdnn.nn.Conv2d.from_torch(torch.nn.Conv2d(16, 32, 3, padding=1).eval())
        conv2.weight, conv2.bias = conv.weight, conv.bias
        got = [relu(conv(x)) for _ in range(3)] + [relu(conv2(x))]
        dense = [blockdnn.to_dense(y) for y in got]
    s.synchronize()
    for y in dense:
        assert torch.equal(y, want)


# ---- streams, events, the current stream --------------------------------------------------------


def test_two_streams_ordered_by_an_event(two_threads):
    x = torch.randn(4, 32, 28, 28)
    s1, s2 = blockdnn.Stream(), blockdnn.Stream()
    with blockdnn.stream(s1):
        xb = blockdnn.to_blocked(x)
    e = s1.record()
    s2.wait(e)                      # s2's work below starts after s1's reorder
    with blockdnn.stream(s2):
        y = blockdnn.to_dense(xb)
    s2.synchronize()
    assert e.query()
    assert torch.equal(y, x)
    e.synchronize()
    s1.synchronize()


def test_event_synchronize_makes_results_readable(two_threads):
    x = torch.randn(2, 16, 9, 9)
    s = blockdnn.Stream()
    with blockdnn.stream(s):
        y = blockdnn.to_dense(blockdnn.to_blocked(x))
    e = s.record()
    e.synchronize()
    assert e.query()
    assert torch.equal(y, x)
    assert 'complete' in repr(e)


def test_streams_share_out_the_threads():
    blockdnn.set_num_threads(5)
    try:
        assert blockdnn.get_num_threads() == 5
        ss = blockdnn.streams(3)
        assert [s.threads for s in ss] == [2, 2, 1]
        assert [s.threads for s in blockdnn.streams(7)] == [1] * 7
        assert blockdnn.Stream().threads == 5
        assert blockdnn.Stream(threads=2).threads == 2
        assert blockdnn.Stream(threads=9).threads == 5
        assert repr(blockdnn.Stream(threads=2)) == 'blockdnn.Stream(threads=2)'
        x = torch.randn(3, 8, 6, 6)
        ys = []
        for s in ss:
            with blockdnn.stream(s):
                ys.append(blockdnn.to_dense(blockdnn.to_blocked(x)))
        for s in ss:
            s.synchronize()
        for y in ys:
            assert torch.equal(y, x)
    finally:
        blockdnn.reset_num_threads()


def test_current_stream_follows_the_contexts():
    d = blockdnn.current_stream()
    assert d.is_default
    assert d is blockdnn.default_stream()
    assert repr(d) == 'blockdnn.Stream(default)'
    s1, s2 = blockdnn.Stream(), blockdnn.Stream()
    with blockdnn.stream(s1) as entered:
        assert entered is s1
        assert blockdnn.current_stream() is s1
        with blockdnn.stream(s2):
            assert blockdnn.current_stream() is s2
            with blockdnn.stream(None):
                assert blockdnn.current_stream() is s2
        assert blockdnn.current_stream() is s1
    assert blockdnn.current_stream().is_default
    assert not s1.is_default


def test_each_thread_has_its_own_current_stream():
    s = blockdnn.Stream()
    seen = []
    with blockdnn.stream(s):
        t = threading.Thread(target=lambda: seen.append(blockdnn.current_stream().is_default))
        t.start()
        t.join()
        assert blockdnn.current_stream() is s
    assert seen == [True]


def test_threads_on_streams_of_their_own(two_threads):
    xs = [torch.randn(2, 24, 10, 10) for _ in range(4)]
    results = [None] * len(xs)

    def work(k):
        s = blockdnn.Stream(threads=1)
        with blockdnn.stream(s):
            ys = [blockdnn.to_dense(blockdnn.to_blocked(xs[k])) for _ in range(10)]
        s.synchronize()
        results[k] = all(torch.equal(y, xs[k]) for y in ys)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(xs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [True] * len(xs)


def test_default_stream_runs_at_once():
    d = blockdnn.default_stream()
    e = d.record()
    assert e.query()
    d.wait(e)
    d.synchronize()
    assert d.query()
    x = torch.randn(1, 16, 3, 3)
    with blockdnn.stream(d):
        y = blockdnn.to_dense(blockdnn.to_blocked(x))
    assert torch.equal(y, x)


# ---- errors ---------------------------------------------------------------------------------------


def test_an_error_in_queued_work_surfaces_at_synchronize(two_threads):
    x = torch.randn(2, 16, 4, 4)
    s = blockdnn.Stream()
    with blockdnn.stream(s):
        blockdnn._blockdnn._queue_error('queued op failed')
        blockdnn.to_blocked(x)   # skipped: it comes after the failure
    with pytest.raises(blockdnn.ArgumentError, match='queued op failed') as info:
        s.synchronize()
    assert info.value.status == 'invalid_arguments'
    s.synchronize()   # reported once
    with blockdnn.stream(s):
        y = blockdnn.to_dense(blockdnn.to_blocked(x))
    s.synchronize()   # the stream runs new work normally
    assert torch.equal(y, x)


def test_argument_errors_raise_at_the_call_and_queue_nothing(two_threads):
    s = blockdnn.Stream()
    with blockdnn.stream(s):
        with pytest.raises(ValueError, match='float32'):
            blockdnn.to_blocked(torch.zeros(2, 16, 3, 3, dtype=torch.float64))
        with pytest.raises(ValueError, match='needs 4 dims'):
            blockdnn.to_blocked(torch.zeros(2, 16, 3), 'nChw8c')
    s.synchronize()


@pytest.mark.parametrize('make, match', [
    (lambda: blockdnn.Stream(threads=-1), 'threads = -1'),
    (lambda: blockdnn.Stream(threads=1025), 'threads = 1025'),
    (lambda: blockdnn.Stream(threads=2**40), 'threads = 1099511627776'),
    (lambda: blockdnn.streams(0), 'n = 0'),
    (lambda: blockdnn.streams(2**33), 'n = 8589934592'),
    (lambda: blockdnn.set_num_threads(0), 'n = 0'),
    (lambda: blockdnn.set_num_threads(1025), 'n = 1025'),
    (lambda: blockdnn.set_num_threads(2**40), 'n = 1099511627776'),
])
def test_bad_counts_are_named(make, match):
    with pytest.raises(blockdnn.ArgumentError, match=match):
        make()


def test_stream_of_something_else_is_a_type_error():
    with pytest.raises(TypeError, match='expected a blockdnn.Stream or None, got int'):
        blockdnn.stream(3)
    with pytest.raises(TypeError):
        blockdnn.Stream().wait(None)


def test_contexts_end_innermost_first_on_their_own_thread():
    s1, s2 = blockdnn.Stream(), blockdnn.Stream()
    c1, c2 = blockdnn.stream(s1), blockdnn.stream(s2)
    c1.__enter__()
    c2.__enter__()
    with pytest.raises(RuntimeError, match='innermost first'):
        c1.__exit__(None, None, None)
    assert blockdnn.current_stream() is s2
    with pytest.raises(RuntimeError, match='already entered'):
        c2.__enter__()
    errors = []

    def exit_elsewhere():
        try:
            c2.__exit__(None, None, None)
        except RuntimeError as e:
            errors.append(str(e))

    t = threading.Thread(target=exit_elsewhere)
    t.start()
    t.join()
    assert len(errors) == 1 and 'another thread' in errors[0]
    c2.__exit__(None, None, None)
    c1.__exit__(None, None, None)
    assert blockdnn.current_stream().is_default
    with pytest.raises(RuntimeError, match='not entered'):
        c1.__exit__(None, None, None)


def test_an_exception_in_the_block_ends_the_context():
    s = blockdnn.Stream()
    with pytest.raises(KeyError):
        with blockdnn.stream(s):
            raise KeyError('inside')
    assert blockdnn.current_stream().is_default


# ---- the GIL --------------------------------------------------------------------------------------


def _seen_inside(call, rounds=200, prepare=lambda: None):
    """Runs call() up to `rounds` times on this thread (prepare() before each, outside what is
    watched) while a second Python thread, woken just before each call, looks at whether this
    thread is inside it. With the GIL changing hands
    only when a thread blocks or releases it (long_switch_interval), the watcher can run while
    `inside` is True only if call() released the GIL. Stops at the first sighting; returns
    whether there was one.

    call() must reach no torch code (give it blockdnn.Tensor arguments made beforehand, and
    call the extension, not a wrapper that converts results): torch's own functions release the
    GIL, which would let the watcher in even while a blockdnn call kept it."""
    state = {'inside': False, 'seen': False, 'stop': False}
    woken, looked = threading.Semaphore(0), threading.Semaphore(0)

    def watch():
        while True:
            woken.acquire()
            if state['stop']:
                return
            if state['inside']:
                state['seen'] = True
            looked.release()

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        for _ in range(rounds):
            prepare()
            state['inside'] = True
            woken.release()
            call()
            state['inside'] = False
            looked.acquire()
            if state['seen']:
                break
    finally:
        state['stop'] = True
        woken.release()
        watcher.join()
    return state['seen']


def test_reorders_release_the_gil(two_threads, long_switch_interval):
    """The extension's reorders themselves, on tensors viewed beforehand: the wrappers'
    x.__dlpack__ and torch.from_dlpack release the GIL on their own, so watching them would
    say nothing about the reorder."""
    x = torch.randn(8, 64, 56, 56)
    xv = blockdnn.from_dlpack(x)
    xb = _blockdnn.to_blocked(xv, '')
    assert _seen_inside(lambda: _blockdnn.to_blocked(xv, ''))
    assert _seen_inside(lambda: _blockdnn.to_dense(xb))


def test_waits_release_the_gil(two_threads, long_switch_interval):
    x = torch.randn(8, 64, 56, 56)
    s = blockdnn.Stream()

    events = []

    def queue():
        with blockdnn.stream(s):
            blockdnn.to_dense(blockdnn.to_blocked(x))
        events.append(s.record())

    assert _seen_inside(s.synchronize, prepare=queue)
    assert _seen_inside(lambda: events[-1].synchronize(), prepare=queue)
    s.synchronize()


def test_conv_releases_the_gil(two_threads, long_switch_interval):
    """A blocked input gives a blocked result: the watched call reaches no torch code (a torch
    input's __dlpack__ and the result's torch.from_dlpack release the GIL themselves)."""
    conv = blockdnn.nn.Conv2d.from_torch(torch.nn.Conv2d(64, 64, 3, padding=1).eval())
    xb = blockdnn.to_blocked(torch.randn(8, 64, 28, 28))
    assert isinstance(conv(xb), blockdnn.Tensor)   # makes the op; the calls watched only run it
    assert _seen_inside(lambda: conv(xb))


def test_lstm_releases_the_gil(two_threads, long_switch_interval):
    """The RnnStack's run on blockdnn.Tensor views made beforehand: LSTM.__call__ itself makes
    its results with torch.empty, which releases the GIL on its own."""
    lstm = blockdnn.LSTM.from_torch(torch.nn.LSTM(64, 64, num_layers=2).eval())
    x, out = torch.randn(50, 8, 64), torch.empty(50, 8, 64)
    h_n, c_n = torch.empty(2, 8, 64), torch.empty(2, 8, 64)
    xv, out_v, h_n_v, c_n_v = (blockdnn.from_dlpack(t) for t in (x, out, h_n, c_n))
    lstm._stack.run(xv, None, None, out_v, h_n_v, c_n_v)   # makes the op; the calls watched only run it
    assert _seen_inside(lambda: lstm._stack.run(xv, None, None, out_v, h_n_v, c_n_v))
    want_out, (want_h_n, want_c_n) = lstm(x)
    assert torch.equal(out, want_out) and torch.equal(h_n, want_h_n) and torch.equal(c_n, want_c_n)


def test_rnn_weight_imports_release_the_gil(two_threads, long_switch_interval):
    """An RnnStack's creation converts PyTorch's weights into the library's layout; with the
    parameters given as blockdnn.Tensor views, the watched creation reaches no torch code."""
    h = 256
    shapes = ((4 * h, h), (4 * h, h), (4 * h,), (4 * h,))   # w_ih, w_hh, b_ih, b_hh
    params = [tuple(blockdnn.from_dlpack(torch.randn(shape)) for shape in shapes)]
    assert _seen_inside(lambda: _blockdnn.RnnStack('lstm', 'tanh', 1, False, h, h, False, params))


def test_python_threads_running_convs_get_the_synchronous_results(two_threads):
    """Two Python threads, each calling one conv object in a loop (the GIL released while each
    call runs), get what one call at a time gives."""
    torch.manual_seed(6)
    conv = blockdnn.nn.Conv2d.from_torch(torch.nn.Conv2d(32, 32, 3, padding=1).eval())
    xs = [torch.randn(8, 32, 14, 14) for _ in range(2)]
    wants = [conv(x) for x in xs]
    results = [None, None]

    def work(k):
        results[k] = all(torch.equal(conv(xs[k]), wants[k]) for _ in range(10))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [True, True]


def test_a_control_that_holds_the_gil_is_never_seen_inside(long_switch_interval):
    """The harness itself: a call that keeps the GIL (pure Python work) is never caught."""
    assert not _seen_inside(lambda: sum(range(20000)), rounds=20)


def _gated_array(shape, freed):
    """A float32 array whose memory is handed back (freeing it) only when the last holder lets
    go; `freed` then gets the id of the thread that did, which for queued work is a library
    thread that had to take the GIL."""
    a = np.random.default_rng(5).standard_normal(shape).astype(np.float32)
    weakref.finalize(a, lambda: freed.append(threading.get_ident()))
    return a


@pytest.mark.parametrize('wait', ['synchronize', 'event', 'del'])
def test_waiting_while_queued_work_frees_python_memory(two_threads, deadlock_watchdog, wait):
    """Queued work hands the memory of its DLPack views back with the GIL, on a library thread
    (or on the waiting thread, when that one ran it while helping); a wait that kept the GIL
    would wait for itself. Which thread runs the work varies, so the wait is tried a few times.
    The big reorder queued first makes the small one run after this thread let go of its array."""
    big = torch.randn(8, 64, 56, 56)
    for _ in range(8):
        freed = []
        s = blockdnn.Stream()
        a = _gated_array((2, 16, 6, 6), freed)
        want = torch.from_numpy(a.copy())
        with blockdnn.stream(s):
            blockdnn.to_blocked(big)
            ab = blockdnn.to_blocked(a)
        del a
        if wait == 'synchronize':
            s.synchronize()
        elif wait == 'event':
            s.record().synchronize()
        else:
            del s
        assert len(freed) == 1
        assert torch.equal(blockdnn.to_dense(ab), want)


def test_set_num_threads_waits_for_queued_work_without_the_gil(deadlock_watchdog):
    freed = []
    s = blockdnn.Stream()
    blockdnn.set_num_threads(2)
    try:
        a = _gated_array((2, 16, 6, 6), freed)
        with blockdnn.stream(s):
            blockdnn.to_blocked(torch.randn(8, 64, 56, 56))
            blockdnn.to_blocked(a)
        del a
        blockdnn.set_num_threads(1)   # waits for the work queued on s
        assert len(freed) == 1
        assert s.query()
    finally:
        blockdnn.reset_num_threads()
    s.synchronize()
