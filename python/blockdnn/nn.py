"""blockdnn.nn: blockdnn's ops as objects a PyTorch user knows, for inference.

Each class takes torch.nn's arguments, with its names and defaults (Conv2d(in_channels,
out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True), ...), and
initialises its weights as PyTorch does, so that under one torch.manual_seed the weights equal
torch.nn's. Weights are exposed as torch tensors (.weight, .bias, .running_mean, ...); the op
keeps its own copy, read when it is built and whenever one of them is assigned (an in-place
change of the torch tensor is not seen; assign it again). `Cls.from_torch(module)` builds one
from a torch.nn module (its weights, eval-mode semantics); Conv*d.from_torch(conv, bn,
activation) folds a following BatchNorm into the conv and fuses an activation.

Calling an op, `op(x)`:
- x a torch tensor (float32 on the CPU, contiguous or channels last): the result is a torch
  tensor, in x's memory format, viewing memory blockdnn allocated (no copy on the way out).
- x a blockdnn.Tensor (blockdnn.to_blocked(t)): the result is a blockdnn.Tensor in x's layout
  family (nChw16c in, nChw16c out), which is how a network runs without reorders.
- x a torch tensor that requires grad is read as x.detach(): the ops are for inference, so the
  result has no autograd history (requires_grad False), and what an op writes into x
  (inplace=True, sum_into) is not seen by autograd.
The library's ops are made for one shape, so an object makes its op on the first call with a
given input shape and layout and keeps it (up to 16 of them) for later calls. Calls release the
GIL while the op runs and honour the current stream: inside `with blockdnn.stream(s):` the work
is queued on s and the result is ready after s.synchronize(). Making an op for a new shape reads
only the object's own copy of its weights, so it does not wait for the work queued on s.

Results live in memory blockdnn.nn keeps and hands out again once nothing (no torch tensor,
blockdnn.Tensor or queued stream work) views it, so a network's loop does not pay for fresh
pages on every call; empty_cache() releases what no result holds (up to 1 GiB is kept).

Errors: an input of the wrong rank or channel count raises ValueError naming the module and the
shape given; a tensor blockdnn cannot view (float64, non-contiguous, on CUDA) raises ValueError,
another object TypeError; the library's own refusals raise blockdnn.Error / ArgumentError.
"""
import math

import torch

from . import _blockdnn

__all__ = [
    'AdaptiveAvgPool1d', 'AdaptiveAvgPool2d', 'AdaptiveAvgPool3d', 'AdaptiveMaxPool1d', 'AdaptiveMaxPool2d',
    'AdaptiveMaxPool3d', 'AvgPool1d', 'AvgPool2d', 'AvgPool3d', 'BatchNorm1d', 'BatchNorm2d', 'BatchNorm3d', 'Conv1d',
    'Conv2d', 'Conv3d', 'Dropout', 'ELU', 'Flatten', 'GELU', 'Hardtanh', 'Identity', 'LeakyReLU', 'Linear', 'MaxPool1d',
    'MaxPool2d', 'MaxPool3d', 'Module', 'ReLU', 'ReLU6', 'SiLU', 'Sigmoid', 'Softmax', 'Tanh', 'empty_cache',
    'from_torch'
]


def empty_cache():
    """Releases the result memory blockdnn.nn keeps for reuse; results still held keep theirs."""
    _blockdnn.empty_cache()


class Module:
    """What blockdnn.nn's classes share with torch.nn.Module's surface: a repr in torch's style,
    and eval() (they compute eval-mode results only)."""

    def eval(self):
        return self

    def extra_repr(self):
        return ''

    def __repr__(self):
        return f'{type(self).__name__}({self.extra_repr()})'


def _check_device_dtype(name, device, dtype):
    if device is not None and torch.device(device).type != 'cpu':
        raise ValueError(f'{name}: device = {device!r}; blockdnn runs on the CPU')
    if dtype is not None and dtype != torch.float32:
        raise TypeError(f'{name}: dtype = {dtype}; blockdnn takes torch.float32')


def _count(value, what, name, low=1):
    """value, an int >= low (a bool is refused): else TypeError or ValueError naming the class,
    the argument and the value."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f'{name}: {what} must be an integer >= {low}, got {value!r}')
    if value < low:
        raise ValueError(f'{name}: {what} must be an integer >= {low}, got {value!r}')
    return value


def _ntuple(value, n, what, name):
    """value as n ints (an int is repeated), or ValueError naming the argument."""
    if isinstance(value, int) and not isinstance(value, bool):
        return (value,) * n
    try:
        t = tuple(value)
    except TypeError:
        t = ()
    if len(t) != n or not all(isinstance(v, int) and not isinstance(v, bool) for v in t):
        raise ValueError(f'{name}: {what} = {value!r}; expected an int or {n} ints')
    return t


def _plain(t):
    """A parameter as the op takes it: detached from autograd (the op copies it)."""
    return None if t is None else t.detach()


def _param_property(name, doc):
    """The property `name` ('weight' or 'bias') of a Conv*d or Linear: reads the torch tensor;
    an assignment has the op copy the new pair (weight, bias), then keeps the tensor (a failed
    one, e.g. of the wrong shape, changes nothing)."""

    def get(self):
        return getattr(self, '_' + name)

    def set_(self, value):
        params = {'weight': self._weight, 'bias': self._bias, name: _plain(value)}
        self._set_params(params['weight'], params['bias'])
        setattr(self, '_' + name, params[name])

    return property(get, set_, doc=doc)


# ------------------------------------------------------------------ activations

# torch.nn activation type -> the blockdnn.nn activation equal to a module of that type.
def _torch_activations():
    nn = torch.nn
    return [
        (nn.ReLU6, lambda m: ReLU6(m.inplace)),  # a Hardtanh: before it
        (nn.Hardtanh, lambda m: Hardtanh(m.min_val, m.max_val, m.inplace)),
        (nn.ReLU, lambda m: ReLU(m.inplace)),
        (nn.LeakyReLU, lambda m: LeakyReLU(m.negative_slope, m.inplace)),
        (nn.Tanh, lambda m: Tanh()),
        (nn.Sigmoid, lambda m: Sigmoid()),
        (nn.ELU, lambda m: ELU(m.alpha, m.inplace)),
        (nn.GELU, lambda m: GELU(m.approximate)),
        (nn.SiLU, lambda m: SiLU(m.inplace)),
    ]


def _eltwise_from_torch(module):
    for cls, convert in _torch_activations():
        if isinstance(module, cls):
            return convert(module)
    return None


def _activation_of(activation, name):
    """(alg, alpha, beta) of an activation given as None, 'relu' (a blockdnn eltwise alg name), a
    blockdnn.nn activation or a torch.nn one; None for none."""
    if activation is None or isinstance(activation, (Identity, torch.nn.Identity)):
        return None
    if isinstance(activation, str):
        return (activation, 0.0, 0.0)
    ours = activation if isinstance(activation, _Eltwise) else _eltwise_from_torch(activation)
    if ours is None:
        raise TypeError(f'{name}: activation {type(activation).__name__} is not one blockdnn fuses '
                        '(ReLU, LeakyReLU, ReLU6, Hardtanh, Tanh, Sigmoid, ELU, GELU, SiLU, or an eltwise alg name)')
    return (ours.alg, ours.alpha, ours.beta)


class _Eltwise(Module, _blockdnn._Eltwise):
    """An element-wise function in the input's layout; inplace=True writes the result into the
    input and returns it."""
    alg = 'relu'

    def __init__(self, alpha=0.0, beta=0.0, inplace=False):
        self.alpha, self.beta, self.inplace = float(alpha), float(beta), bool(inplace)
        _blockdnn._Eltwise.__init__(self, type(self).__name__, self.alg, self.alpha, self.beta, self.inplace)

    @classmethod
    def from_torch(cls, module):
        """The blockdnn.nn activation of a torch.nn one of the same name (ReLU, GELU, ...)."""
        ours = _eltwise_from_torch(module)
        if not isinstance(ours, cls):
            raise TypeError(f'{cls.__name__}.from_torch: no blockdnn {cls.__name__} for a {type(module).__name__}')
        return ours

    def extra_repr(self):
        return 'inplace=True' if self.inplace else ''


class ReLU(_Eltwise):
    """max(x, 0), as torch.nn.ReLU."""
    alg = 'relu'

    def __init__(self, inplace=False):
        super().__init__(0.0, 0.0, inplace)


class LeakyReLU(_Eltwise):
    """x > 0 ? x : negative_slope * x, as torch.nn.LeakyReLU."""
    alg = 'relu'

    def __init__(self, negative_slope=0.01, inplace=False):
        self.negative_slope = negative_slope
        super().__init__(negative_slope, 0.0, inplace)

    def extra_repr(self):
        return f'negative_slope={self.negative_slope}' + (', inplace=True' if self.inplace else '')


class Tanh(_Eltwise):
    alg = 'tanh'

    def __init__(self):
        super().__init__()


class Sigmoid(_Eltwise):
    alg = 'sigmoid'

    def __init__(self):
        super().__init__()


class ELU(_Eltwise):
    """x > 0 ? x : alpha * (exp(x) - 1), as torch.nn.ELU."""
    alg = 'elu'

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__(alpha, 0.0, inplace)


class GELU(_Eltwise):
    """torch.nn.GELU: approximate='none' is the erf form, 'tanh' the tanh one."""

    def __init__(self, approximate='none'):
        if approximate not in ('none', 'tanh'):
            raise ValueError(f"GELU: approximate = {approximate!r}; expected 'none' or 'tanh'")
        self.approximate = approximate
        self.alg = 'gelu_tanh' if approximate == 'tanh' else 'gelu_erf'
        super().__init__()


class SiLU(_Eltwise):
    """x * sigmoid(x), as torch.nn.SiLU (blockdnn's swish with alpha 1)."""
    alg = 'swish'

    def __init__(self, inplace=False):
        super().__init__(1.0, 0.0, inplace)


class Hardtanh(_Eltwise):
    """min(max(x, min_val), max_val), as torch.nn.Hardtanh."""
    alg = 'clip'

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False):
        if min_val > max_val:
            raise ValueError(f'Hardtanh: min_val = {min_val} is above max_val = {max_val}')
        self.min_val, self.max_val = min_val, max_val
        super().__init__(min_val, max_val, inplace)


class ReLU6(Hardtanh):
    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)


class Softmax(Module, _blockdnn._Softmax):
    """softmax along `dim` (negative counts from the end), as torch.nn.Softmax(dim), in the
    input's layout (Softmax(1) of an nChw16c tensor runs over the channels)."""

    def __init__(self, dim=None):
        if dim is None:
            raise ValueError('Softmax: dim = None; give the dim (PyTorch\'s implicit choice is deprecated)')
        if not isinstance(dim, int) or isinstance(dim, bool):
            raise TypeError(f'Softmax: dim must be an int, got {dim!r}')
        self.dim = dim
        _blockdnn._Softmax.__init__(self, 'Softmax', dim)

    @classmethod
    def from_torch(cls, module):
        return cls(module.dim)

    def extra_repr(self):
        return f'dim={self.dim}'


class Identity(Module):
    """Returns its input (torch.nn.Identity)."""

    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, x):
        return x

    @classmethod
    def from_torch(cls, module):
        return cls()


class Dropout(Identity):
    """Dropout in eval mode: returns its input."""

    def __init__(self, p=0.5, inplace=False):
        self.p = p

    @classmethod
    def from_torch(cls, module):
        return cls(module.p)


class Flatten(Module):
    """torch.nn.Flatten(start_dim=1, end_dim=-1): a torch input is flattened by torch (a view
    when it can be); a blockdnn.Tensor gives a plain blockdnn.Tensor (a blocked one is reordered
    to its plain layout first)."""

    def __init__(self, start_dim=1, end_dim=-1):
        self.start_dim, self.end_dim = start_dim, end_dim

    def __call__(self, x):
        if isinstance(x, _blockdnn.Tensor):
            return _blockdnn.flatten(x, self.start_dim, self.end_dim)
        return torch.flatten(x, self.start_dim, self.end_dim)

    @classmethod
    def from_torch(cls, module):
        return cls(module.start_dim, module.end_dim)

    def extra_repr(self):
        return f'start_dim={self.start_dim}, end_dim={self.end_dim}'


# ------------------------------------------------------------------ Conv


class _ConvNd(Module, _blockdnn._Conv):
    """A forward convolution with torch.nn.Conv*d's arguments, optionally followed by an
    activation (fused into the conv's kernel). `conv(x, sum_into=r)` adds the result into r (a
    tensor of the output's shape, not sharing memory with x: else ValueError) before the
    activation, writes it there and returns r: the residual add of a ResNet block,
    relu(conv(x) + r), in one pass."""
    _sp = 2

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode='zeros', device=None, dtype=None, *, activation=None):
        name = type(self).__name__
        _check_device_dtype(name, device, dtype)
        self._check_counts(name, in_channels, out_channels, groups)
        if in_channels % groups or out_channels % groups:
            raise ValueError(f'{name}: in_channels = {in_channels} and out_channels = {out_channels} must be '
                             f'multiples of groups = {groups}')
        k = _ntuple(kernel_size, self._sp, 'kernel_size', name)
        if min(k) <= 0:
            raise ValueError(f'{name}: kernel_size = {k} must be positive')
        weight = torch.empty((out_channels, in_channels // groups) + k)
        torch.nn.init.kaiming_uniform_(weight, a=math.sqrt(5))
        b = None
        if bias:
            b = torch.empty(out_channels)
            fan_in, _ = torch.nn.init._calculate_fan_in_and_fan_out(weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                torch.nn.init.uniform_(b, -bound, bound)
        self._setup(in_channels, out_channels, k, stride, padding, dilation, groups, padding_mode, weight, b,
                    activation)

    @staticmethod
    def _check_counts(name, in_channels, out_channels, groups):
        _count(in_channels, 'in_channels', name)
        _count(out_channels, 'out_channels', name)
        _count(groups, 'groups', name)

    def _setup(self, in_channels, out_channels, kernel_size, stride, padding, dilation, groups, padding_mode, weight,
               bias, activation):
        name = type(self).__name__
        sp = self._sp
        self._check_counts(name, in_channels, out_channels, groups)
        if padding_mode != 'zeros':
            raise ValueError(f"{name}: padding_mode = {padding_mode!r}; blockdnn pads with zeros only")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size = _ntuple(kernel_size, sp, 'kernel_size', name)
        self.stride = _ntuple(stride, sp, 'stride', name)
        self.dilation = _ntuple(dilation, sp, 'dilation', name)
        self.padding = padding if isinstance(padding, str) else _ntuple(padding, sp, 'padding', name)
        self.padding_mode = padding_mode
        not_positive = min(self.kernel_size + self.stride + self.dilation) <= 0
        if not_positive or (not isinstance(padding, str) and min(self.padding) < 0):
            raise ValueError(f'{name}: kernel_size = {self.kernel_size}, stride = {self.stride} and dilation = '
                             f'{self.dilation} must be positive, padding = {self.padding} not negative')
        if padding == 'valid':
            pad, pad_r = (0,) * sp, (0,) * sp
        elif padding == 'same':
            if any(s != 1 for s in self.stride):
                raise ValueError(f"{name}: padding='same' needs stride 1 (PyTorch's rule), got {self.stride}")
            total = [d * (k - 1) for d, k in zip(self.dilation, self.kernel_size)]
            pad = tuple(t // 2 for t in total)
            pad_r = tuple(t - t // 2 for t in total)
        elif isinstance(padding, str):
            raise ValueError(f"{name}: padding = {padding!r}; expected 'valid', 'same', an int or {sp} ints")
        else:
            pad = pad_r = self.padding
        self.activation = _activation_of(activation, name)
        self._weight, self._bias = _plain(weight), _plain(bias)
        alg, alpha, beta = self.activation or (None, 0.0, 0.0)
        _blockdnn._Conv.__init__(self, self._label(), in_channels, out_channels, groups, self.kernel_size, self.stride,
                                 pad, pad_r, self.dilation, self._weight, self._bias, alg, alpha, beta)

    @classmethod
    def from_torch(cls, conv, bn=None, activation=None):
        """A blockdnn conv with the weights of torch.nn.Conv*d `conv`; `bn`, a torch.nn.BatchNorm*d
        after it, folded in (its running statistics: eval mode); `activation` (torch.nn.ReLU or
        another, see the class) fused after both."""
        torch_cls = getattr(torch.nn, cls.__name__)
        if not isinstance(conv, torch_cls):
            raise TypeError(f'{cls.__name__}.from_torch: expected a torch.nn.{cls.__name__}, got {type(conv).__name__}')
        weight, bias = conv.weight.detach(), _plain(conv.bias)
        if bn is not None:
            bn_cls = getattr(torch.nn, f'BatchNorm{cls._sp}d')
            if not isinstance(bn, bn_cls):
                raise TypeError(f'{cls.__name__}.from_torch: bn is a {type(bn).__name__}, expected a '
                                f'torch.nn.{bn_cls.__name__}')
            if bn.num_features != conv.out_channels:
                raise ValueError(f'{cls.__name__}.from_torch: bn has {bn.num_features} features, the conv '
                                 f'{conv.out_channels} output channels')
            if bn.running_mean is None:
                raise ValueError(f'{cls.__name__}.from_torch: bn has no running statistics '
                                 '(track_running_stats=False), so it cannot be folded into the conv')
            weight, bias = _blockdnn.fold_bn(weight, bias, bn.running_mean.detach(), bn.running_var.detach(),
                                             _plain(bn.weight), _plain(bn.bias), float(bn.eps))
        obj = cls.__new__(cls)
        obj._setup(conv.in_channels, conv.out_channels, conv.kernel_size, conv.stride, conv.padding, conv.dilation,
                   conv.groups, conv.padding_mode, weight, bias, activation)
        return obj

    weight = _param_property('weight', '(out_channels, in_channels / groups, *kernel_size); a folded bn is in it.')
    bias = _param_property('bias', '(out_channels,) or None.')

    def _label(self):
        return f'{type(self).__name__}({self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size})'

    def extra_repr(self):
        s = f'{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}'
        if self.padding != (0,) * self._sp:
            s += f', padding={self.padding}'
        if self.dilation != (1,) * self._sp:
            s += f', dilation={self.dilation}'
        if self.groups != 1:
            s += f', groups={self.groups}'
        if self._bias is None:
            s += ', bias=False'
        if self.activation is not None:
            s += f', activation={self.activation[0]}'
        return s


class Conv1d(_ConvNd):
    """torch.nn.Conv1d: input (N, C, L), or a blockdnn.Tensor in nCw16c / nCw8c."""
    _sp = 1


class Conv2d(_ConvNd):
    """torch.nn.Conv2d: input (N, C, H, W) (contiguous or channels last), or a blockdnn.Tensor
    in nChw16c / nChw8c."""
    _sp = 2


class Conv3d(_ConvNd):
    """torch.nn.Conv3d: input (N, C, D, H, W), or a blockdnn.Tensor in nCdhw16c / nCdhw8c."""
    _sp = 3


# ------------------------------------------------------------------ BatchNorm


class _BatchNorm(Module, _blockdnn._BatchNorm):
    """Batch normalization in eval mode: the running statistics (or, with
    track_running_stats=False, the batch's own, as PyTorch's eval mode then does), and the affine
    weight and bias when affine=True. momentum is kept for the repr only."""
    _ranks = (4,)

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None,
                 dtype=None):
        _check_device_dtype(type(self).__name__, device, dtype)
        _count(num_features, 'num_features', type(self).__name__)
        w = torch.ones(num_features) if affine else None
        b = torch.zeros(num_features) if affine else None
        mean = torch.zeros(num_features) if track_running_stats else None
        var = torch.ones(num_features) if track_running_stats else None
        self._setup(num_features, eps, momentum, w, b, mean, var)

    def _setup(self, num_features, eps, momentum, weight, bias, running_mean, running_var):
        _count(num_features, 'num_features', type(self).__name__)
        self.num_features, self.eps, self.momentum = num_features, float(eps), momentum
        self._params = {
            'weight': _plain(weight),
            'bias': _plain(bias),
            'running_mean': _plain(running_mean),
            'running_var': _plain(running_var)
        }
        _blockdnn._BatchNorm.__init__(self, f'{type(self).__name__}({num_features})', num_features, list(self._ranks),
                                      self.eps, *self._params.values())

    @classmethod
    def from_torch(cls, bn):
        """A blockdnn batch norm with the parameters and running statistics of `bn`."""
        torch_cls = getattr(torch.nn, cls.__name__)
        if not isinstance(bn, torch_cls):
            raise TypeError(f'{cls.__name__}.from_torch: expected a torch.nn.{cls.__name__}, got {type(bn).__name__}')
        obj = cls.__new__(cls)
        obj._setup(bn.num_features, bn.eps, bn.momentum, bn.weight, bn.bias, bn.running_mean, bn.running_var)
        return obj

    def _param(name):  # pylint: disable=no-self-argument
        def get(self):
            return self._params[name]

        def set_(self, value):
            params = dict(self._params, **{name: _plain(value)})
            self._set_params(*params.values())
            self._params = params

        return property(get, set_, doc='(num_features,) or None')

    weight = _param('weight')
    bias = _param('bias')
    running_mean = _param('running_mean')
    running_var = _param('running_var')
    del _param

    @property
    def affine(self):
        return self._params['weight'] is not None

    @property
    def track_running_stats(self):
        return self._params['running_mean'] is not None

    def extra_repr(self):
        return (f'{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, '
                f'track_running_stats={self.track_running_stats}')


class BatchNorm1d(_BatchNorm):
    """torch.nn.BatchNorm1d: input (N, C) or (N, C, L)."""
    _ranks = (2, 3)


class BatchNorm2d(_BatchNorm):
    """torch.nn.BatchNorm2d: input (N, C, H, W)."""
    _ranks = (4,)


class BatchNorm3d(_BatchNorm):
    """torch.nn.BatchNorm3d: input (N, C, D, H, W)."""
    _ranks = (5,)


# ------------------------------------------------------------------ pooling


class _Pool(Module, _blockdnn._Pool):
    """Pooling in the input's layout (a plain nchw input runs blocked, reordered around the op)."""
    _sp = 2

    def _setup(self, alg, kernel_size, stride, padding, dilation, ceil_mode):
        name = type(self).__name__
        sp = self._sp
        self.kernel_size = _ntuple(kernel_size, sp, 'kernel_size', name)
        self.stride = self.kernel_size if stride is None or stride == [] else _ntuple(stride, sp, 'stride', name)
        self.padding = _ntuple(padding, sp, 'padding', name)
        self.dilation = _ntuple(dilation, sp, 'dilation', name)
        self.ceil_mode = bool(ceil_mode)
        for what, low in (('kernel_size', 1), ('stride', 1), ('padding', 0), ('dilation', 1)):
            if min(getattr(self, what)) < low:
                raise ValueError(f'{name}: {what} = {getattr(self, what)} must be {low} or more')
        for k, p in zip(self.kernel_size, self.padding):
            if p > k // 2:
                raise ValueError(f'{name}: padding = {self.padding} must be at most half of kernel_size = '
                                 f'{self.kernel_size} (PyTorch\'s rule)')
        label = f'{name}(kernel_size={self.kernel_size})'
        _blockdnn._Pool.__init__(self, label, alg, self.kernel_size, self.stride, self.padding, self.dilation,
                                 self.ceil_mode, [])

    def extra_repr(self):
        return (f'kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, '
                f'ceil_mode={self.ceil_mode}')


class _MaxPoolNd(_Pool):
    """torch.nn.MaxPool*d; return_indices is not supported."""

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        if return_indices:
            raise ValueError(f'{type(self).__name__}: return_indices=True is not supported')
        self._setup('max', kernel_size, stride, padding, dilation, ceil_mode)

    @classmethod
    def from_torch(cls, module):
        return cls(module.kernel_size, module.stride, module.padding, module.dilation, module.return_indices,
                   module.ceil_mode)


class MaxPool1d(_MaxPoolNd):
    _sp = 1


class MaxPool2d(_MaxPoolNd):
    _sp = 2


class MaxPool3d(_MaxPoolNd):
    _sp = 3


class _AvgPoolNd(_Pool):
    """torch.nn.AvgPool*d; divisor_override is not supported."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        if divisor_override is not None:
            raise ValueError(f'{type(self).__name__}: divisor_override = {divisor_override} is not supported')
        self.count_include_pad = bool(count_include_pad)
        alg = 'avg_include_pad' if count_include_pad else 'avg_exclude_pad'
        self._setup(alg, kernel_size, stride, padding, 1, ceil_mode)

    @classmethod
    def from_torch(cls, module):
        divisor = getattr(module, 'divisor_override', None)  # AvgPool1d has none
        extra = {} if divisor is None else {'divisor_override': divisor}
        return cls(module.kernel_size, module.stride, module.padding, module.ceil_mode, module.count_include_pad,
                   **extra)


class AvgPool1d(_AvgPoolNd):
    _sp = 1

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
        super().__init__(kernel_size, stride, padding, ceil_mode, count_include_pad)


class AvgPool2d(_AvgPoolNd):
    _sp = 2


class AvgPool3d(_AvgPoolNd):
    _sp = 3


class _AdaptivePool(Module, _blockdnn._Pool):
    """torch.nn.Adaptive*Pool*d where each input size is a multiple of its output size (windows
    of one size); output_size 1 is the global pool, e.g. ResNet's AdaptiveAvgPool2d((1, 1))."""
    _sp = 2
    _alg = 'avg_exclude_pad'

    def __init__(self, output_size, return_indices=False):
        name = type(self).__name__
        if return_indices:
            raise ValueError(f'{name}: return_indices=True is not supported')
        self.output_size = _ntuple(output_size, self._sp, 'output_size', name)
        if min(self.output_size) < 1:
            raise ValueError(f'{name}: output_size = {self.output_size} must be 1 or more')
        _blockdnn._Pool.__init__(self, f'{name}({self.output_size})', self._alg, [], [], [], [], False,
                                 list(self.output_size))

    @classmethod
    def from_torch(cls, module):
        return cls(module.output_size, *([module.return_indices] if hasattr(module, 'return_indices') else []))

    def extra_repr(self):
        return f'output_size={self.output_size}'


class AdaptiveAvgPool1d(_AdaptivePool):
    _sp = 1

    def __init__(self, output_size):
        super().__init__(output_size)


class AdaptiveAvgPool2d(_AdaptivePool):
    _sp = 2

    def __init__(self, output_size):
        super().__init__(output_size)


class AdaptiveAvgPool3d(_AdaptivePool):
    _sp = 3

    def __init__(self, output_size):
        super().__init__(output_size)


class AdaptiveMaxPool1d(_AdaptivePool):
    _sp, _alg = 1, 'max'


class AdaptiveMaxPool2d(_AdaptivePool):
    _sp, _alg = 2, 'max'


class AdaptiveMaxPool3d(_AdaptivePool):
    _sp, _alg = 3, 'max'


# ------------------------------------------------------------------ Linear


class Linear(Module, _blockdnn._Linear):
    """torch.nn.Linear: y = x W^T + b over the last dim of a torch input (N, *, in_features), with
    an optional fused activation. A blocked blockdnn.Tensor (N, C, H, W) is taken as flattened
    (its C * H * W features in torch.flatten's order), e.g. a global pool's output straight into
    a classifier, and gives a plain (N, out_features) blockdnn.Tensor."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None, *, activation=None):
        _check_device_dtype('Linear', device, dtype)
        _count(in_features, 'in_features', 'Linear')
        _count(out_features, 'out_features', 'Linear')
        weight = torch.empty(out_features, in_features)
        torch.nn.init.kaiming_uniform_(weight, a=math.sqrt(5))
        b = None
        if bias:
            b = torch.empty(out_features)
            bound = 1 / math.sqrt(in_features) if in_features > 0 else 0
            torch.nn.init.uniform_(b, -bound, bound)
        self._setup(in_features, out_features, weight, b, activation)

    def _setup(self, in_features, out_features, weight, bias, activation):
        _count(in_features, 'in_features', 'Linear')
        _count(out_features, 'out_features', 'Linear')
        self.in_features, self.out_features = in_features, out_features
        self.activation = _activation_of(activation, 'Linear')
        self._weight, self._bias = _plain(weight), _plain(bias)
        alg, alpha, beta = self.activation or (None, 0.0, 0.0)
        _blockdnn._Linear.__init__(self, f'Linear({in_features}, {out_features})', in_features, out_features,
                                   self._weight, self._bias, alg, alpha, beta)

    @classmethod
    def from_torch(cls, module, activation=None):
        """A blockdnn Linear with the weights of torch.nn.Linear `module`, and `activation` fused."""
        if not isinstance(module, torch.nn.Linear):
            raise TypeError(f'Linear.from_torch: expected a torch.nn.Linear, got {type(module).__name__}')
        obj = cls.__new__(cls)
        obj._setup(module.in_features, module.out_features, module.weight, module.bias, activation)
        return obj

    weight = _param_property('weight', '(out_features, in_features).')
    bias = _param_property('bias', '(out_features,) or None.')

    def extra_repr(self):
        s = f'in_features={self.in_features}, out_features={self.out_features}, bias={self._bias is not None}'
        if self.activation is not None:
            s += f', activation={self.activation[0]}'
        return s


# ------------------------------------------------------------------ one module


def _leaf_classes():
    nn = torch.nn
    table = {
        nn.Conv1d: Conv1d.from_torch, nn.Conv2d: Conv2d.from_torch, nn.Conv3d: Conv3d.from_torch,
        nn.BatchNorm1d: BatchNorm1d.from_torch, nn.BatchNorm2d: BatchNorm2d.from_torch,
        nn.BatchNorm3d: BatchNorm3d.from_torch, nn.MaxPool1d: MaxPool1d.from_torch,
        nn.MaxPool2d: MaxPool2d.from_torch, nn.MaxPool3d: MaxPool3d.from_torch, nn.AvgPool1d: AvgPool1d.from_torch,
        nn.AvgPool2d: AvgPool2d.from_torch, nn.AvgPool3d: AvgPool3d.from_torch,
        nn.AdaptiveAvgPool1d: AdaptiveAvgPool1d.from_torch, nn.AdaptiveAvgPool2d: AdaptiveAvgPool2d.from_torch,
        nn.AdaptiveAvgPool3d: AdaptiveAvgPool3d.from_torch, nn.AdaptiveMaxPool1d: AdaptiveMaxPool1d.from_torch,
        nn.AdaptiveMaxPool2d: AdaptiveMaxPool2d.from_torch, nn.AdaptiveMaxPool3d: AdaptiveMaxPool3d.from_torch,
        nn.Linear: Linear.from_torch, nn.Softmax: Softmax.from_torch, nn.Flatten: Flatten.from_torch,
        nn.Identity: Identity.from_torch, nn.Dropout: Dropout.from_torch
    }
    for cls, _ in _torch_activations():
        table[cls] = _eltwise_from_torch
    return table


def from_torch(module):
    """The blockdnn.nn object for one torch.nn leaf module (Conv2d, BatchNorm2d, ReLU, MaxPool2d,
    Linear, Flatten, Dropout, ...), with its weights and eval-mode semantics. TypeError naming the
    type for a module it has no class for; ValueError for arguments it does not support
    (padding_mode='reflect', return_indices=True, ...)."""
    convert = _leaf_classes().get(type(module))
    if convert is None:
        raise TypeError(f'blockdnn.nn.from_torch: no blockdnn op for torch module {type(module).__name__}')
    return convert(module)
