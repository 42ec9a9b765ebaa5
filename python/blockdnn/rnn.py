"""PyTorch's recurrent layers on blockdnn: RNN, LSTM and GRU with torch.nn's constructor
arguments, forward and parameter names, in eval mode (no dropout, no autograd).

Every layer count, direction and size runs in the library as one rnn_stack_fwd (one
single-layer rnn_fwd per layer, layer k + 1 reading both directions of layer k, as PyTorch
does). The parameters are read once, when the object is made (or by from_torch); an op is
created per (seq_len, batch) and kept for the next calls of that shape. Inside
`with blockdnn.stream(s):` forward queues the work on s and returns tensors that hold the
result once s has been synchronized.
"""
import math

import torch

from . import _blockdnn

__all__ = ['GRU', 'LSTM', 'RNN', 'from_torch_rnn']


def _check_tensor(x, name):
    if not isinstance(x, torch.Tensor):
        raise TypeError(f'{name}: expected a torch.Tensor, got {type(x).__name__}')
    if x.dtype != torch.float32:
        raise ValueError(f'{name}: expected dtype torch.float32, got {x.dtype}')
    if x.device.type != 'cpu':
        raise ValueError(f'{name}: expected a CPU tensor, got device {x.device}')
    if not x.is_contiguous():
        raise ValueError(f'{name}: expected a contiguous tensor (call .contiguous()), got shape {tuple(x.shape)} '
                         f'with strides {x.stride()}')


class _RNNBase:
    """What RNN, LSTM and GRU share: the parameters (PyTorch's names and shapes), their
    conversion, and forward."""

    _mode = None   # PyTorch's mode: 'RNN_TANH', 'RNN_RELU', 'LSTM' or 'GRU'
    _gates = 1

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, *, _params=None):
        for name, v, low in (('input_size', input_size, 1), ('hidden_size', hidden_size, 1),
                             ('num_layers', num_layers, 1)):
            if not isinstance(v, int) or isinstance(v, bool) or v < low:
                raise ValueError(f'{type(self).__name__}: {name} must be an integer >= {low}, got {v!r}')
        if not isinstance(dropout, (int, float)) or isinstance(dropout, bool) or dropout != 0:
            raise ValueError(f'{type(self).__name__}: dropout = {dropout!r} is not supported (eval mode only: '
                             'dropout must be 0)')
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bool(bias)
        self.batch_first = bool(batch_first)
        self.dropout = 0.0
        self.bidirectional = bool(bidirectional)
        dirs = 2 if self.bidirectional else 1
        g, h = self._gates, hidden_size
        names = []
        for k in range(num_layers):
            for d in range(dirs):
                sfx = f'_l{k}' + ('_reverse' if d else '')
                names.append(sfx)
        if _params is None:
            # PyTorch's initialization: every parameter uniform in [-1/sqrt(hidden), 1/sqrt(hidden)].
            bound = 1.0 / math.sqrt(h)
            _params = {}
            for k in range(num_layers):
                for sfx in names[k * dirs:(k + 1) * dirs]:
                    in_k = input_size if k == 0 else h * dirs
                    shapes = {'weight_ih': (g * h, in_k), 'weight_hh': (g * h, h)}
                    if self.bias:
                        shapes.update({'bias_ih': (g * h,), 'bias_hh': (g * h,)})
                    for base, shape in shapes.items():
                        _params[base + sfx] = torch.empty(shape).uniform_(-bound, bound)
        for name, p in _params.items():
            setattr(self, name, p)
        params = []
        for k in range(num_layers):
            in_k = input_size if k == 0 else h * dirs
            for sfx in names[k * dirs:(k + 1) * dirs]:
                entry = []
                for base, shape in (('weight_ih', (g * h, in_k)), ('weight_hh', (g * h, h)), ('bias_ih', (g * h,)),
                                    ('bias_hh', (g * h,))):
                    p = getattr(self, base + sfx, None)
                    if p is None and base.startswith('bias') and not self.bias:
                        entry.append(None)
                        continue
                    if p is None:
                        raise ValueError(f'{type(self).__name__}: {base + sfx} is missing')
                    _check_tensor(p, base + sfx)
                    if tuple(p.shape) != shape:
                        raise ValueError(f'{type(self).__name__}: {base + sfx} has shape {tuple(p.shape)}, '
                                         f'expected {shape}')
                    entry.append(p)
                params.append(tuple(entry))
        cell = {'RNN_TANH': 'vanilla_rnn', 'RNN_RELU': 'vanilla_rnn', 'LSTM': 'lstm', 'GRU': 'lbr_gru'}[self._mode]
        act = 'relu' if self._mode == 'RNN_RELU' else 'tanh'
        self._stack = _blockdnn.RnnStack(cell, act, num_layers, self.bidirectional, input_size, hidden_size,
                                         self.batch_first, params)

    @classmethod
    def from_torch(cls, module):
        """The blockdnn layer of a torch.nn.RNN / LSTM / GRU module (of this class's kind), its
        parameters converted once. Dropout between layers is ignored (eval mode); a module with
        proj_size (LSTM projections) is refused."""
        want = {'RNN': torch.nn.RNN, 'LSTM': torch.nn.LSTM, 'GRU': torch.nn.GRU}[cls.__name__]
        if not isinstance(module, want):
            raise TypeError(f'{cls.__name__}.from_torch: expected a torch.nn.{cls.__name__}, got '
                            f'{type(module).__name__}')
        if getattr(module, 'proj_size', 0):
            raise ValueError(f'{cls.__name__}.from_torch: proj_size = {module.proj_size} is not supported (no '
                             'projection)')
        params = {}
        for name, p in module.named_parameters():
            params[name] = p.detach().to(torch.float32).contiguous()
        kwargs = {}
        if cls is RNN:
            kwargs['nonlinearity'] = module.nonlinearity
        return cls(module.input_size, module.hidden_size, module.num_layers, bias=module.bias,
                   batch_first=module.batch_first, bidirectional=module.bidirectional, _params=params, **kwargs)

    @property
    def impl_name(self):
        """The implementation the layers run: "jit:avx512_core", "jit:avx2" or "ref"."""
        return self._stack.impl_name

    def _state(self, s, name, batched, mb):
        dirs = 2 if self.bidirectional else 1
        want = (self.num_layers * dirs, mb, self.hidden_size) if batched else (self.num_layers * dirs,
                                                                               self.hidden_size)
        _check_tensor(s, name)
        if tuple(s.shape) != want:
            raise ValueError(f'{type(self).__name__}: {name} has shape {tuple(s.shape)}, expected {want}')
        return s if batched else s.unsqueeze(1)

    def _run(self, x, h_0, c_0, h_name='hx', c_name=None):
        """h_0, c_0: the initial states or None; h_name, c_name: what errors call them."""
        _check_tensor(x, 'input')
        # Eval only: the results carry no autograd history, whatever the inputs'.
        x = x.detach()
        h_0 = h_0.detach() if isinstance(h_0, torch.Tensor) else h_0
        c_0 = c_0.detach() if isinstance(c_0, torch.Tensor) else c_0
        name = type(self).__name__
        if x.dim() not in (2, 3):
            raise ValueError(f'{name}: input must have 2 (unbatched) or 3 dims, got shape {tuple(x.shape)}')
        if x.shape[-1] != self.input_size:
            raise ValueError(f'{name}: input.size(-1) = {x.shape[-1]} must equal input_size = {self.input_size}')
        batched = x.dim() == 3
        bf = self.batch_first
        if not batched:
            x = x.unsqueeze(0 if bf else 1)  # a batch of 1, still contiguous
        if x.shape[0] == 0 or x.shape[1] == 0:
            raise ValueError(f'{name}: input has an empty dim, shape {tuple(x.shape)}')
        mb = x.shape[0] if bf else x.shape[1]
        dirs = 2 if self.bidirectional else 1
        if h_0 is not None:
            h_0 = self._state(h_0, h_name, batched, mb)
        if c_0 is not None:
            c_0 = self._state(c_0, c_name, batched, mb)
        out = torch.empty(x.shape[0], x.shape[1], dirs * self.hidden_size)
        h_n = torch.empty(self.num_layers * dirs, mb, self.hidden_size)
        c_n = torch.empty(self.num_layers * dirs, mb, self.hidden_size) if self._mode == 'LSTM' else None
        self._stack.run(x, h_0, c_0, out, h_n, c_n)
        if not batched:
            out = out.squeeze(0 if bf else 1)
            h_n = h_n.squeeze(1)
            c_n = c_n.squeeze(1) if c_n is not None else None
        return out, h_n, c_n

    def __repr__(self):
        s = f'{type(self).__name__}({self.input_size}, {self.hidden_size}'
        if self.num_layers != 1:
            s += f', num_layers={self.num_layers}'
        if not self.bias:
            s += ', bias=False'
        if self.batch_first:
            s += ', batch_first=True'
        if self.bidirectional:
            s += ', bidirectional=True'
        return s + ')'


class RNN(_RNNBase):
    """torch.nn.RNN on blockdnn: h_t = nonlinearity(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh).

    RNN(input_size, hidden_size, num_layers=1, nonlinearity='tanh', bias=True, batch_first=False,
    dropout=0.0, bidirectional=False); dropout must be 0. Parameters weight_ih_l{k}[_reverse]
    (hidden, input_size or directions * hidden), weight_hh_l{k}[_reverse] (hidden, hidden),
    bias_ih_l{k}[_reverse], bias_hh_l{k}[_reverse] (hidden,), read once here.

    rnn(input, hx=None) -> (output, h_n), torch.nn.RNN's names and order: input (seq, batch,
    input_size), (batch, seq, input_size) when batch_first, or (seq, input_size) unbatched; hx,
    the initial state, (num_layers * directions, batch, hidden_size) ((num_layers * directions,
    hidden_size) unbatched) or None (zeros); output (seq, batch, directions * hidden_size) in
    input's order; h_n like hx. Contiguous float32 CPU tensors, else TypeError / ValueError
    naming the argument.
    """

    _gates = 1

    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity='tanh', bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, *, _params=None):
        if nonlinearity not in ('tanh', 'relu'):
            raise ValueError(f"RNN: nonlinearity = {nonlinearity!r} must be 'tanh' or 'relu'")
        self.nonlinearity = nonlinearity
        self._mode = 'RNN_TANH' if nonlinearity == 'tanh' else 'RNN_RELU'
        super().__init__(input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         _params=_params)

    def forward(self, input, hx=None):
        out, h_n, _ = self._run(input, hx, None)
        return out, h_n

    __call__ = forward


class LSTM(_RNNBase):
    """torch.nn.LSTM on blockdnn (gates i, f, g, o as PyTorch stores them; no proj_size).

    LSTM(input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
    bidirectional=False, proj_size=0); dropout and proj_size must be 0. Parameters as RNN's with
    4 * hidden rows.

    lstm(input, hx=None) -> (output, (h_n, c_n)), torch.nn.LSTM's names and order: hx is None
    (zeros) or the tuple (h_0, c_0), each shaped as RNN's hx; shapes as RNN's, c like h.
    """

    _mode = 'LSTM'
    _gates = 4

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, *, _params=None):
        if proj_size != 0:
            raise ValueError(f'LSTM: proj_size = {proj_size!r} is not supported (no projection: must be 0)')
        self.proj_size = 0
        super().__init__(input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         _params=_params)

    def forward(self, input, hx=None):
        h_0 = c_0 = None
        if hx is not None:
            if not isinstance(hx, (tuple, list)) or len(hx) != 2:
                raise TypeError(f'LSTM: hx must be a tuple (h_0, c_0), got {type(hx).__name__}')
            h_0, c_0 = hx
            if h_0 is None or c_0 is None:
                raise TypeError('LSTM: hx must hold two tensors (h_0, c_0), got None')
        out, h_n, c_n = self._run(input, h_0, c_0, 'hx[0] (h_0)', 'hx[1] (c_0)')
        return out, (h_n, c_n)

    __call__ = forward


class GRU(_RNNBase):
    """torch.nn.GRU on blockdnn (gates r, z, n as PyTorch stores them; the library's lbr_gru,
    whose reset gate applies after W_hn h + b_hn, as PyTorch's).

    GRU(input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
    bidirectional=False); parameters as RNN's with 3 * hidden rows.

    gru(input, hx=None) -> (output, h_n); names, order and shapes as RNN's.
    """

    _mode = 'GRU'
    _gates = 3

    def forward(self, input, hx=None):
        out, h_n, _ = self._run(input, hx, None)
        return out, h_n

    __call__ = forward


def from_torch_rnn(module):
    """The blockdnn RNN, LSTM or GRU of a torch.nn.RNN, LSTM or GRU module, parameters converted
    once. TypeError for any other module."""
    for torch_cls, cls in ((torch.nn.LSTM, LSTM), (torch.nn.GRU, GRU), (torch.nn.RNN, RNN)):
        if isinstance(module, torch_cls):
            return cls.from_torch(module)
    raise TypeError(f'from_torch_rnn: expected a torch.nn.RNN, LSTM or GRU, got {type(module).__name__}')
