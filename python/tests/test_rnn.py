"""blockdnn.RNN / LSTM / GRU against torch.nn.RNN / LSTM / GRU: random shapes (layers, both
directions, input != hidden, batch_first, batch 1, unbatched, with and without initial states),
the same results on a stream, and clear errors for what they refuse."""
import random
import threading

import pytest
import torch

import blockdnn

# RNN outputs against another float implementation (testing/tolerances.hpp, tol::rnn):
# max |got - want| / max(1, |want|).
TOL = 2e-5


def rel_err(got, want):
    return ((got - want).abs() / want.abs().clamp(min=1)).max().item()


def torch_module(kind, input_size, hidden_size, num_layers, bidirectional, batch_first, bias=True,
                 nonlinearity='tanh'):
    kwargs = dict(num_layers=num_layers, bidirectional=bidirectional, batch_first=batch_first, bias=bias)
    if kind == 'RNN':
        kwargs['nonlinearity'] = nonlinearity
    return getattr(torch.nn, kind)(input_size, hidden_size, **kwargs).eval()


def compare(kind, m, x, states):
    """Runs torch's module m and blockdnn's from_torch(m) on x, and compares every output."""
    ours = getattr(blockdnn, kind).from_torch(m)
    with torch.no_grad():
        if kind == 'LSTM':
            want_out, (want_h, want_c) = m(x, states) if states is not None else m(x)
            out, (h, c) = ours(x, states) if states is not None else ours(x)
            assert c.shape == want_c.shape
            assert rel_err(c, want_c) <= TOL
        else:
            want_out, want_h = m(x, states) if states is not None else m(x)
            out, h = ours(x, states) if states is not None else ours(x)
    assert out.shape == want_out.shape
    assert h.shape == want_h.shape
    assert rel_err(out, want_out) <= TOL
    assert rel_err(h, want_h) <= TOL
    return ours


def random_cases(seed, n):
    rng = random.Random(seed)
    cases = []
    for k in range(n):
        kind = ['RNN', 'LSTM', 'GRU'][k % 3]
        cases.append(dict(kind=kind, input_size=rng.randint(1, 24), hidden_size=rng.randint(1, 24),
                          num_layers=rng.randint(1, 3), bidirectional=bool(rng.getrandbits(1)),
                          batch_first=bool(rng.getrandbits(1)), bias=rng.random() < 0.8,
                          nonlinearity=rng.choice(['tanh', 'relu']), seq=rng.randint(1, 9),
                          batch=rng.choice([1, rng.randint(1, 7)]), with_states=bool(rng.getrandbits(1)),
                          seed=rng.getrandbits(31)))
    return cases


@pytest.mark.parametrize('case', random_cases(20261202, 24), ids=lambda c: '{kind}-l{num_layers}-i{input_size}-h'
                         '{hidden_size}-{d}-{bf}-mb{batch}-t{seq}'.format(
                             d='bi' if c['bidirectional'] else 'uni', bf='bf' if c['batch_first'] else 'tf', **c))
def test_random_shapes_match_torch(case):
    torch.manual_seed(case['seed'])
    m = torch_module(case['kind'], case['input_size'], case['hidden_size'], case['num_layers'],
                     case['bidirectional'], case['batch_first'], case['bias'], case['nonlinearity'])
    dims = (case['batch'], case['seq']) if case['batch_first'] else (case['seq'], case['batch'])
    x = torch.randn(*dims, case['input_size'])
    states = None
    if case['with_states']:
        shape = (case['num_layers'] * (2 if case['bidirectional'] else 1), case['batch'], case['hidden_size'])
        states = (torch.randn(shape), torch.randn(shape)) if case['kind'] == 'LSTM' else torch.randn(shape)
    compare(case['kind'], m, x, states)


@pytest.mark.parametrize('batch_first', [False, True])
@pytest.mark.parametrize('batch', [1, 3])
@pytest.mark.parametrize('with_states', [False, True])
def test_two_layer_bidirectional_lstm_input_ne_hidden(batch_first, batch, with_states):
    # PyTorch's most common stacked LSTM, which a single rnn_fwd refuses (slc 5 != dhc 10, l 2).
    torch.manual_seed(3)
    m = torch_module('LSTM', 5, 10, 2, True, batch_first)
    x = torch.randn(batch, 7, 5) if batch_first else torch.randn(7, batch, 5)
    states = (torch.randn(4, batch, 10), torch.randn(4, batch, 10)) if with_states else None
    ours = compare('LSTM', m, x, states)
    assert ours.impl_name in ('jit:avx512_core', 'jit:avx2', 'ref')


@pytest.mark.parametrize('kind', ['RNN', 'LSTM', 'GRU'])
@pytest.mark.parametrize('batch_first', [False, True])
def test_unbatched_input(kind, batch_first):
    # The RNN(10, 10) on a (100, 10) sequence, and the others, unbatched.
    torch.manual_seed(5)
    m = torch_module(kind, 10, 10, 2, kind != 'RNN', batch_first)
    x = torch.randn(100, 10)
    d = 2 if kind != 'RNN' else 1
    states = (torch.randn(2 * d, 10), torch.randn(2 * d, 10)) if kind == 'LSTM' else torch.randn(2 * d, 10)
    compare(kind, m, x, None)
    compare(kind, m, x, states)


@pytest.mark.parametrize('kind', ['RNN', 'LSTM', 'GRU'])
def test_forward_takes_torchs_keywords(kind):
    # forward(input, hx=None) as torch.nn's: the same call, with keywords, runs on both.
    torch.manual_seed(7)
    m = torch_module(kind, 4, 6, 2, True, False)
    ours = getattr(blockdnn, kind).from_torch(m)
    x = torch.randn(5, 3, 4)
    hx = (torch.randn(4, 3, 6), torch.randn(4, 3, 6)) if kind == 'LSTM' else torch.randn(4, 3, 6)
    with torch.no_grad():
        want_out, want_state = m(input=x, hx=hx)
    out, state = ours(input=x, hx=hx)
    assert rel_err(out, want_out) <= TOL
    wants, gots = (want_state, state) if kind == 'LSTM' else ((want_state,), (state,))
    for got, want in zip(gots, wants):
        assert rel_err(got, want) <= TOL
    zero_out, _ = ours.forward(x, hx=None)
    assert torch.equal(zero_out, ours(x)[0])


def test_constructor_matches_torch_layout():
    # Made from sizes, a layer has PyTorch's parameter names and shapes, and from_torch of a
    # module with the same parameters gives the same results.
    torch.manual_seed(9)
    ours = blockdnn.GRU(6, 4, num_layers=2, bidirectional=True)
    assert tuple(ours.weight_ih_l0.shape) == (12, 6)
    assert tuple(ours.weight_ih_l1_reverse.shape) == (12, 8)
    assert tuple(ours.bias_hh_l1.shape) == (12,)
    m = torch_module('GRU', 6, 4, 2, True, False)
    with torch.no_grad():
        for name, p in m.named_parameters():
            p.copy_(getattr(ours, name))
    x = torch.randn(5, 2, 6)
    with torch.no_grad():
        want_out, want_h = m(x)
    out, h = ours(x)
    assert rel_err(out, want_out) <= TOL
    assert rel_err(h, want_h) <= TOL
    assert repr(ours) == 'GRU(6, 4, num_layers=2, bidirectional=True)'


def test_from_torch_rnn_picks_the_class():
    assert isinstance(blockdnn.from_torch_rnn(torch.nn.LSTM(3, 4)), blockdnn.LSTM)
    assert isinstance(blockdnn.from_torch_rnn(torch.nn.GRU(3, 4)), blockdnn.GRU)
    rnn = blockdnn.from_torch_rnn(torch.nn.RNN(3, 4, nonlinearity='relu'))
    assert isinstance(rnn, blockdnn.RNN) and rnn.nonlinearity == 'relu'
    with pytest.raises(TypeError, match='Linear'):
        blockdnn.from_torch_rnn(torch.nn.Linear(3, 4))
    with pytest.raises(TypeError, match='expected a torch.nn.LSTM, got GRU'):
        blockdnn.LSTM.from_torch(torch.nn.GRU(3, 4))
    with pytest.raises(ValueError, match='proj_size = 2'):
        blockdnn.LSTM.from_torch(torch.nn.LSTM(3, 4, proj_size=2))


def test_the_same_op_serves_new_shapes():
    # One object, several (seq, batch) shapes in turn, and back to the first.
    torch.manual_seed(11)
    m = torch_module('LSTM', 4, 6, 2, True, False)
    ours = blockdnn.LSTM.from_torch(m)
    for seq, batch in [(3, 2), (1, 1), (8, 5), (3, 2)]:
        x = torch.randn(seq, batch, 4)
        with torch.no_grad():
            want, _ = m(x)
        got, _ = ours(x)
        assert rel_err(got, want) <= TOL


def test_impl_name_keeps_the_ops_made():
    # Asking impl_name makes no op, so with the cache full it pushes out no shape's op.
    torch.manual_seed(19)
    ours = blockdnn.LSTM.from_torch(torch_module('LSTM', 4, 6, 2, True, False))
    assert ours.impl_name in ('jit:avx512_core', 'jit:avx2', 'ref')
    assert ours._stack._kept == []
    shapes = [(seq, 3) for seq in range(2, 10)]   # 8: as many shapes as an RnnStack keeps
    for seq, batch in shapes:
        ours(torch.randn(seq, batch, 4))
    kept = ours._stack._kept
    assert [(t, mb) for t, mb, _ in kept] == shapes
    assert all(impl == ours.impl_name for _, _, impl in kept)
    assert ours._stack._kept == kept


def test_the_least_recently_used_shape_is_dropped():
    torch.manual_seed(23)
    ours = blockdnn.GRU.from_torch(torch_module('GRU', 3, 4, 1, False, False))
    shapes = [(seq, 2) for seq in range(1, 10)]   # 9: one more than an RnnStack keeps
    for seq, batch in shapes[:8]:
        ours(torch.randn(seq, batch, 3))
    ours(torch.randn(1, 2, 3))   # (1, 2) is now the most recently used
    ours(torch.randn(9, 2, 3))   # pushes out (2, 2), the least recently used
    kept = [(t, mb) for t, mb, _ in ours._stack._kept]
    assert kept == shapes[2:8] + [(1, 2), (9, 2)]


def test_stream_gives_the_synchronous_result():
    torch.manual_seed(13)
    m = torch_module('LSTM', 5, 10, 2, True, True)
    ours = blockdnn.LSTM.from_torch(m)
    x = torch.randn(3, 9, 5)
    h0, c0 = torch.randn(4, 3, 10), torch.randn(4, 3, 10)
    want_out, (want_h, want_c) = ours(x, (h0, c0))
    if not hasattr(blockdnn, 'Stream'):
        pytest.skip('blockdnn.Stream is not bound yet')
    s = blockdnn.Stream()
    with blockdnn.stream(s):
        outs = [ours(x, (h0, c0)) for _ in range(3)]
    s.synchronize()
    for out, (h, c) in outs:
        assert torch.equal(out, want_out)
        assert torch.equal(h, want_h)
        assert torch.equal(c, want_c)


def test_threads_share_one_layer():
    # Python threads calling one object at once, with shapes new to it (its per-shape ops are
    # made concurrently), get the results of calls made one at a time.
    torch.manual_seed(17)
    m = torch_module('GRU', 6, 8, 2, True, False)
    inputs = [torch.randn(seq, batch, 6) for seq, batch in [(4, 1), (2, 3), (5, 2), (3, 3)] * 2]
    want = [blockdnn.GRU.from_torch(m)(x)[0] for x in inputs]
    shared = blockdnn.GRU.from_torch(m)
    got = [None] * len(inputs)

    def work(k0):
        for k in range(k0, len(inputs), 2):
            got[k] = shared(inputs[k])[0]

    threads = [threading.Thread(target=work, args=(k0,)) for k0 in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k, (g, w) in enumerate(zip(got, want)):
        assert torch.equal(g, w), k


def test_bad_inputs():
    lstm = blockdnn.LSTM(5, 10, num_layers=2)
    x = torch.randn(7, 3, 5)
    with pytest.raises(TypeError, match='input: expected a torch.Tensor, got list'):
        lstm([[1.0] * 5])
    with pytest.raises(ValueError, match='input: expected dtype torch.float32, got torch.float64'):
        lstm(x.double())
    with pytest.raises(ValueError, match='input: expected a contiguous tensor'):
        lstm(torch.randn(3, 7, 5).transpose(0, 1))
    with pytest.raises(ValueError, match=r'input.size\(-1\) = 4 must equal input_size = 5'):
        lstm(torch.randn(7, 3, 4))
    with pytest.raises(ValueError, match='input must have 2 .* or 3 dims, got shape'):
        lstm(torch.randn(7, 3, 5, 1))
    with pytest.raises(ValueError, match=r'hx\[0\] \(h_0\) has shape \(2, 2, 10\), expected \(2, 3, 10\)'):
        lstm(x, (torch.randn(2, 2, 10), torch.randn(2, 3, 10)))
    with pytest.raises(ValueError, match=r'hx\[1\] \(c_0\): expected dtype torch.float32'):
        lstm(x, hx=(torch.randn(2, 3, 10), torch.randn(2, 3, 10).double()))
    gru = blockdnn.GRU(5, 10, num_layers=2)
    with pytest.raises(ValueError, match=r'hx has shape \(2, 10\), expected \(2, 3, 10\)'):
        gru(x, hx=torch.randn(2, 10))
    with pytest.raises(TypeError, match='hx must be a tuple'):
        lstm(x, torch.randn(2, 3, 10))
    with pytest.raises(ValueError, match='dropout = 0.5 is not supported'):
        blockdnn.LSTM(5, 10, num_layers=2, dropout=0.5)
    with pytest.raises(ValueError, match='proj_size = 3 is not supported'):
        blockdnn.LSTM(5, 10, proj_size=3)
    with pytest.raises(ValueError, match="nonlinearity = 'gelu'"):
        blockdnn.RNN(5, 10, nonlinearity='gelu')
    with pytest.raises(ValueError, match='hidden_size must be an integer >= 1, got 0'):
        blockdnn.GRU(5, 0)
    with pytest.raises(ValueError, match='num_layers must be an integer >= 1'):
        blockdnn.GRU(5, 4, num_layers=0)
    m = torch.nn.GRU(5, 4)
    m.weight_hh_l0 = torch.nn.Parameter(torch.randn(12, 5))
    with pytest.raises(ValueError, match=r'weight_hh_l0 has shape \(12, 5\), expected \(12, 4\)'):
        blockdnn.GRU.from_torch(m)
