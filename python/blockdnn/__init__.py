"""blockdnn from Python: CPU deep-learning kernels in plain and blocked layouts, for PyTorch users.

Tensors cross without copies: a plain torch tensor (float32, contiguous or channels last) is
viewed in place (DLPack), and a plain blockdnn.Tensor becomes a torch tensor with
torch.from_dlpack. Blocked layouts (nChw16c, nCdhw8c, ...) are blockdnn.Tensor objects, made by
to_blocked and read back with to_dense: the pair PyTorch users know as x.to_mkldnn() and
x.to_dense().

Errors of the library raise blockdnn.Error (RuntimeError); invalid arguments raise
blockdnn.ArgumentError, which is also a ValueError. Both carry `status`, the library's kind of
error ("invalid_arguments", "unimplemented", ...).
"""
import torch

from . import _blockdnn
from ._blockdnn import ArgumentError, Error, Tensor
from . import nn
from .models import Model, from_torch
from .rnn import GRU, LSTM, RNN, from_torch_rnn
from ._blockdnn import (Event, Stream, StreamContext, current_stream, default_stream, get_num_threads,
                        reset_num_threads, set_num_threads, stream, streams)

__all__ = ['ArgumentError', 'Error', 'GRU', 'LSTM', 'RNN', 'Tensor', 'from_dlpack', 'from_torch_rnn', 'to_blocked',
           'to_dense', 'to_torch']
__all__ += ['Model', 'from_torch']
__all__ += ['Event', 'Stream', 'StreamContext', 'current_stream', 'default_stream', 'get_num_threads',
            'reset_num_threads', 'set_num_threads', 'stream', 'streams']


def from_dlpack(x):
    """A blockdnn.Tensor viewing x's memory, without a copy.

    x: a torch tensor, a NumPy array, any object with __dlpack__, or a DLPack capsule; float32 on
    the CPU, contiguous (nchw, nc, ...) or channels last (nhwc, ndhwc, nwc). The result keeps x's
    memory alive and writes through to it.
    """
    return _blockdnn.from_dlpack(x)


def to_blocked(x, layout=None):
    """x (a plain torch tensor or blockdnn.Tensor) reordered into a blocked blockdnn.Tensor.

    The layout is the one blockdnn's ops prefer on this CPU (nChw16c with AVX-512, nChw8c with
    AVX2; nCw.. and nCdhw.. for 3-D and 5-D) unless `layout` names one ("nChw8c"). A tensor
    already in that layout comes back as it is. Like x.to_mkldnn().
    """
    return _blockdnn.to_blocked(x, layout or '')


def to_dense(x):
    """x (a blockdnn.Tensor, blocked or plain) as a plain torch tensor: nChw16c -> nchw.

    A plain x is viewed without a copy; a blocked one is reordered into new memory, which the
    torch tensor then owns. Like x.to_dense() of a to_mkldnn() tensor.
    """
    return torch.from_dlpack(_blockdnn.to_dense(x))


def to_torch(x):
    """A plain blockdnn.Tensor as a torch tensor sharing its memory (no copy); ValueError for a
    blocked one (use to_dense)."""
    return torch.from_dlpack(x)


# The methods a to_mkldnn() tensor has, so that code written for one reads the same.
Tensor.to_dense = to_dense
# Users see the exceptions as blockdnn.Error and blockdnn.ArgumentError, where they import them.
Error.__module__ = ArgumentError.__module__ = 'blockdnn'
