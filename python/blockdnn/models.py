"""blockdnn.from_torch: a torch.nn model turned into blockdnn ops, its weights reordered once.

The conversion reads the module tree, not a trace: it knows the forward of torch.nn.Sequential,
of the torch.nn layers blockdnn.nn has a class for, and of torchvision's ResNet, BasicBlock and
Bottleneck. A convolution takes the BatchNorm after it (folded into its weights and bias) and
the activation after that (a post-op), a Linear the activation after it; in a residual block
the add and the ReLU after it are the last convolution's post-ops: it writes onto the shortcut.
Between ops, activations stay in the blocked layout blockdnn.to_blocked picks (nChw16c on
AVX-512): the model reorders its input once at the start and its output once at the end.
"""
import sys

import torch

from . import _blockdnn
from . import nn as _nn
from ._blockdnn import Tensor

__all__ = ['Model', 'from_torch']


def _type_name(m):
    t = type(m)
    return t.__module__ + '.' + t.__qualname__


def _where(path):
    return path or '(the model)'


def _cannot(m, path, why=''):
    return TypeError('%s: cannot convert %s%s' % (_where(path), _type_name(m), ': ' + why if why else ''))


def _is(m, name):
    """True if m is exactly torch.nn.<name> (a subclass may have its own forward)."""
    cls = getattr(torch.nn, name, None)
    return cls is not None and type(m) is cls


_CONVS = ('Conv1d', 'Conv2d', 'Conv3d')
_BATCHNORMS = {'Conv1d': 'BatchNorm1d', 'Conv2d': 'BatchNorm2d', 'Conv3d': 'BatchNorm3d'}
# Layers whose result is the input itself in eval mode.
_IDENTITIES = ('Identity', 'Dropout', 'Dropout1d', 'Dropout2d', 'Dropout3d', 'AlphaDropout', 'FeatureAlphaDropout')
_RNNS = ('RNN', 'LSTM', 'GRU')


def _torchvision_resnet():
    # Only a model built by torchvision can be one of its classes, so an unimported
    # torchvision means none; importing it here would cost a second for every conversion.
    return sys.modules.get('torchvision.models.resnet')


def _first(module, test):
    """(path, module) of the first module of the tree (module itself first) for which test is
    true, or None."""
    return next(((name, m) for name, m in module.named_modules() if test(m)), None)


class _Step:
    """One converted module (or a fused run of them): `run` maps a value (a torch tensor or a
    blockdnn.Tensor) to the next. `blocked_input`: whether it wants its input blocked (ops on
    channels), None for no preference. `consumes`: whether it writes over its input (a residual
    block adding onto its identity shortcut). `returns_tuple`: an RNN's (output, state)."""

    __slots__ = ('run', 'blocked_input', 'consumes', 'returns_tuple', 'path', 'kind')

    def __init__(self, run, path, kind, blocked_input=True, consumes=False, returns_tuple=False):
        self.run = run
        self.path = path
        self.kind = kind
        self.blocked_input = blocked_input
        self.consumes = consumes
        self.returns_tuple = returns_tuple


def _located(e, where):
    """The exception e (a TypeError or ValueError) again, with `where` in front of its message;
    the library's errors keep their `status`."""
    new = type(e)('%s: %s' % (where, e))
    if hasattr(e, 'status'):
        new.status = e.status
    return new


def _wrap(path, make):
    """make() with the module's path put in front of the errors blockdnn.nn raises."""
    try:
        return make()
    except (TypeError, ValueError) as e:
        raise _located(e, _where(path)) from e


def _fusable_activation(m):
    """True if m is a torch.nn activation that blockdnn.nn fuses into a conv or a linear."""
    return _is(m, type(m).__name__) and _nn._eltwise_from_torch(m) is not None


def _conv_step(conv, path, bn=None, activation=None, residual=False):
    """A convolution with an optional folded BatchNorm and fused activation; with `residual`, a
    step whose run takes (x, r) and writes activation(conv(x) + r) into r."""
    op = _wrap(path, lambda: getattr(_nn, type(conv).__name__).from_torch(conv, bn, activation))
    if residual:
        return _Step(lambda x, r: op(x, sum_into=r), path, 'Conv')
    return _Step(op, path, 'Conv')


def _leaf_step(m, path, activation=None):
    """One module by its blockdnn.nn class of the same name (with `activation` fused, for a
    Linear), an identity, or an RNN; TypeError naming m's path and type for anything else."""
    name = type(m).__name__
    if _is(m, name) and name in _IDENTITIES:
        return _Step(lambda x: x, path, 'Identity', blocked_input=None)
    if _is(m, name) and name in _RNNS:
        return _rnn_step(m, path)
    cls = getattr(_nn, name, None)
    if not _is(m, name) or not hasattr(cls, 'from_torch'):
        raise _cannot(m, path)
    if activation is not None:
        op = _wrap(path, lambda: cls.from_torch(m, activation))
    else:
        op = _wrap(path, lambda: cls.from_torch(m))
    kind = 'Flatten1' if name == 'Flatten' and m.start_dim == 1 and m.end_dim == -1 else name
    # Linear reads rows of features whatever its input's rank, and Flatten makes them; the
    # others read channels, which the blocked layouts hold as the ops like them.
    return _Step(op, path, kind, blocked_input=name not in ('Linear', 'Flatten'))


def _flatten_linear_step(flatten, linear):
    """Flatten(1, -1) then Linear: blockdnn.nn.Linear reads a blocked (N, C, [D,] [H,] W) input
    as flattened, so a blocked tensor goes to it as it is, without a reorder."""
    flat, op = flatten.run, linear.run

    def run(x):
        if isinstance(x, Tensor) and x.is_blocked:
            return op(x)
        return op(flat(x))

    return _Step(run, linear.path, 'Linear', blocked_input=False)


def _rnn_step(m, path):
    """nn.RNN / LSTM / GRU: a torch tensor in (a blocked one is made plain), PyTorch's tuple out."""
    from . import rnn
    layer = _wrap(path, lambda: getattr(rnn, type(m).__name__).from_torch(m))

    def run(x, hx=None):
        return layer(_to_torch(x), hx)

    return _Step(run, path, type(m).__name__, blocked_input=False, returns_tuple=True)


def _sequence_steps(children, path):
    """The steps of a chain of modules [(name, module)] run one after another (a Sequential's
    children), with Conv -> BatchNorm -> activation and Linear -> activation fused."""
    steps = []
    prefix = path + '.' if path else ''
    n = len(children)
    k = 0
    while k < n:
        name, m = children[k]
        kind = type(m).__name__
        if kind in _CONVS and _is(m, kind):
            j = k + 1
            bn = activation = None
            # A BatchNorm without running statistics normalises by the batch's own (also in
            # eval mode): it runs as its own op.
            if j < n and _is(children[j][1], _BATCHNORMS[kind]) and children[j][1].running_mean is not None:
                bn = children[j][1]
                j += 1
            if j < n and _fusable_activation(children[j][1]):
                activation = children[j][1]
                j += 1
            steps.append(_conv_step(m, prefix + name, bn, activation))
            k = j
        elif _is(m, 'Linear') and k + 1 < n and _fusable_activation(children[k + 1][1]):
            steps.append(_leaf_step(m, prefix + name, children[k + 1][1]))
            k += 2
        else:
            steps.extend(_module_steps(m, prefix + name))
            k += 1
    merged = []
    for s in steps:
        if s.kind == 'Identity':
            continue
        if merged and merged[-1].kind == 'Flatten1' and s.kind == 'Linear':
            merged[-1] = _flatten_linear_step(merged[-1], s)
        else:
            merged.append(s)
    return merged


def _module_steps(m, path):
    """The steps of module m at `path` ('' for the model itself)."""
    if _is(m, 'Sequential'):
        return _sequence_steps(list(m.named_children()), path)
    tv = _torchvision_resnet()
    if tv is not None:
        if type(m) is tv.ResNet:
            return _resnet_steps(m, path)
        if type(m) is tv.BasicBlock:
            return [_block_step(m, path, ('conv1', 'bn1'), ('conv2', 'bn2'))]
        if type(m) is tv.Bottleneck:
            return [_block_step(m, path, ('conv1', 'bn1'), ('conv2', 'bn2'), ('conv3', 'bn3'))]
    return [_leaf_step(m, path)]


def _child(m, path, name):
    return getattr(m, name), (path + '.' if path else '') + name


def _relu_of(m, path):
    relu, relu_path = _child(m, path, 'relu')
    if not _is(relu, 'ReLU'):
        raise _cannot(relu, relu_path, 'torchvision\'s blocks use torch.nn.ReLU here')
    return relu


def _resnet_steps(m, path):
    """torchvision's ResNet: its _forward_impl is this chain, flatten(x, 1) included."""
    names = ('conv1', 'bn1', 'relu', 'maxpool', 'layer1', 'layer2', 'layer3', 'layer4', 'avgpool')
    chain = [(name, getattr(m, name)) for name in names]
    chain += [('flatten', torch.nn.Flatten(1)), ('fc', m.fc)]
    return _sequence_steps(chain, path)


def _block_step(m, path, *convs):
    """A residual block: relu(main(x) + shortcut(x)), where main is the chain of (conv, bn)
    names, a ReLU after each but the last, and the shortcut x or downsample(x). Each bn folds
    into its conv, and the add and the last ReLU are the last conv's post-ops: it writes onto
    the shortcut, which for an identity shortcut is x itself (the block writes over its input)."""
    relu = _relu_of(m, path)
    steps = []
    for k, (conv_name, bn_name) in enumerate(convs):
        conv, conv_path = _child(m, path, conv_name)
        bn, bn_path = _child(m, path, bn_name)
        kind = type(conv).__name__
        if kind not in _CONVS or not _is(conv, kind):
            raise _cannot(conv, conv_path)
        if not _is(bn, _BATCHNORMS[kind]):
            raise _cannot(bn, bn_path)
        if bn.running_mean is None:
            raise _cannot(bn, bn_path, 'a residual block folds its batch norms, which needs running statistics '
                          '(track_running_stats=True)')
        last = k + 1 == len(convs)
        steps.append(_conv_step(conv, conv_path, bn, relu, residual=last))
    runs = [s.run for s in steps[:-1]]
    last_run = steps[-1].run
    down_runs = []
    if m.downsample is not None:
        down_runs = [s.run for s in _module_steps(*_child(m, path, 'downsample'))]

    def run(x):
        y = x
        for f in runs:
            y = f(y)
        r = x
        for f in down_runs:
            r = f(r)
        return last_run(y, r)

    return _Step(run, path, type(m).__name__, consumes=not down_runs)


def _to_torch(x):
    if isinstance(x, Tensor):
        return torch.from_dlpack(_blockdnn.to_dense(x))
    return x


class Model:
    """A torch.nn model converted by blockdnn.from_torch: model(x) runs it with blockdnn's ops.

    x: a float32 torch tensor on the CPU (contiguous or channels last), of the shape the torch
    model takes ((mb, 3, 224, 224) for a ResNet). The result is a new torch tensor (PyTorch's
    tuple where an RNN, LSTM or GRU comes last), what the torch model gives in eval mode, without
    autograd history. Between the first and the last op, activations are blockdnn.Tensor
    objects in a blocked layout: x is reordered into it once, the result out of it once.

    Ops are made for the first input of each shape (mb and image size included), so the first
    call at a new shape is slower. The weights are the module's when from_torch ran; later
    changes to the torch module are not seen. Calls may run from several threads at once, and
    inside `with blockdnn.stream(s):`, where the work is queued on s and the result holds its
    values once s.synchronize() returns.

    A model converted from an RNN, LSTM or GRU alone also takes PyTorch's initial state,
    model(x, hx) (LSTM: hx = (h_0, c_0)).

    Errors: TypeError for an x that is not a torch tensor, or an hx the model does not take;
    ValueError (or blockdnn.ArgumentError, also a ValueError) for an x the library cannot view
    or an op refuses (another channel count, an image too small for the net), naming the model
    and the module's path ("ResNet: layer1.0: ...", "ResNet: x: ..." for the input itself).
    """

    def __init__(self, steps, source, takes_state=False):
        self._steps = steps
        # A lone RNN, LSTM or GRU takes PyTorch's initial state beside its input.
        self._takes_state = takes_state
        self._blocked_input = next((s.blocked_input for s in steps if s.blocked_input is not None), False)
        # x is the caller's: a step that writes over its input gets a copy.
        self._copy_input = bool(steps) and steps[0].consumes
        self._source = source

    def __call__(self, x, hx=None):
        if isinstance(x, Tensor):
            raise TypeError('%s: x must be a torch tensor, got a blockdnn.Tensor (%s); blockdnn.to_dense(x) '
                            'gives one' % (self._source, x.layout))
        if not isinstance(x, torch.Tensor):
            raise TypeError('%s: x must be a torch tensor, got %s' % (self._source, type(x).__qualname__))
        if hx is not None and not self._takes_state:
            raise TypeError('%s: hx is taken only by a model converted from an RNN, LSTM or GRU alone' %
                            self._source)
        if x.requires_grad:
            x = x.detach()
        step = None
        try:
            if self._blocked_input and 3 <= x.dim() <= 5:
                y = _blockdnn.to_blocked(x, '')  # a new tensor, which the steps may write over
            else:
                y = x.clone() if self._copy_input else x
            if hx is not None:
                step = self._steps[0]
                y = step.run(y, hx)
            else:
                for step in self._steps:
                    y = step.run(y)
        except (TypeError, ValueError) as e:
            raise _located(e, '%s: %s' % (self._source, 'x' if step is None else _where(step.path))) from e
        if isinstance(y, Tensor):
            return _to_torch(y)
        return y

    def __repr__(self):
        return 'blockdnn.Model(%s: %s)' % (self._source, ', '.join(s.path or s.kind for s in self._steps))


def from_torch(module):
    """module (a torch.nn.Module in eval mode) as a blockdnn Model, its weights reordered once.

    Converts torch.nn.Sequential; Conv1d/2d/3d, with a BatchNorm1d/2d/3d with running statistics
    right after it folded into its weights, and an activation after those fused as its post-op;
    BatchNorm1d/2d/3d elsewhere; the activations (ReLU, LeakyReLU, ReLU6, Hardtanh, Tanh,
    Sigmoid, ELU, GELU, SiLU), pooling (MaxPool, AvgPool, AdaptiveAvgPool, AdaptiveMaxPool), Linear
    (an activation after it fused), Softmax and Flatten of blockdnn.nn; Identity and Dropout (the
    identity in eval mode); torchvision's ResNet, BasicBlock and Bottleneck (ResNet-18/34/50/
    101/152, ResNeXt, Wide ResNet), the residual add and its ReLU fused into the last convolution
    of each block; RNN, LSTM and GRU (blockdnn.RNN, ...), whose (output, state) tuple ends the
    model. Exactly these classes: a subclass may have its own forward, and is refused, as is a
    module with a forward hook or pre-hook (the conversion would not call it). Eval mode
    only: a module in training mode is refused rather than run with other semantics than torch's.

    Raises TypeError naming the path and the type of the first module it cannot convert
    ("features.3: cannot convert torch.nn.modules.conv.ConvTranspose2d"), ValueError for a
    module in training mode (blockdnn runs inference: call module.eval() first) and for
    parameters the ops refuse, with the module's path in front of blockdnn.nn's message.
    """
    if not isinstance(module, torch.nn.Module):
        raise TypeError('from_torch: module must be a torch.nn.Module, got %s' % type(module).__qualname__)
    # The conversion reads modules, not their calls, so a hook's change to an input or output
    # would be lost.
    hooked = _first(module, lambda m: m._forward_hooks or m._forward_pre_hooks)
    if hooked is not None:
        raise _cannot(hooked[1], hooked[0], 'it has forward hooks, which blockdnn would not call')
    training = _first(module, lambda m: m.training)
    if training is not None:
        raise ValueError('from_torch: %s is in training mode (%s.training is True); blockdnn runs inference: '
                         'call module.eval() first' % (_where(training[0]), type(training[1]).__name__))
    steps = _module_steps(module, '')
    for s in steps[:-1]:
        if s.returns_tuple:
            raise TypeError('%s: its output is a tuple, which the next module cannot take' % _where(s.path))
    takes_state = len(steps) == 1 and steps[0].returns_tuple and steps[0].path == ''
    return Model(steps, type(module).__name__, takes_state)
