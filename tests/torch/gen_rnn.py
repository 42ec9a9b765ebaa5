# SPDX-License-Identifier: Apache-2.0
"""PyTorch recurrent cases: nn.RNN (tanh, relu), nn.LSTM and nn.GRU with 1 and 2 layers,
one direction and bidirectional, with and without initial states, and the tiny nn.RNN(10, 10)
on an unbatched (100, 10) input.

Case rnn_<name>/ holds x, h0 (and c0) if given, every parameter under its PyTorch name
(weight_ih_l0, weight_hh_l0_reverse, ...), the outputs out, hn (and cn), and
meta = [cell (0 rnn_tanh, 1 rnn_relu, 2 lstm, 3 gru), layers, bidirectional, batch_first,
has_initial_states, input_size, hidden_size].
"""
import torch

from torchcase import save

CELLS = {"rnn_tanh": 0, "rnn_relu": 1, "lstm": 2, "gru": 3}


def make(cell, i, h, layers, bidir, batch_first):
    nn = torch.nn
    kw = dict(num_layers=layers, bidirectional=bidir, batch_first=batch_first)
    if cell == "lstm":
        return nn.LSTM(i, h, **kw)
    if cell == "gru":
        return nn.GRU(i, h, **kw)
    return nn.RNN(i, h, nonlinearity=cell[4:], **kw)


def case(outdir, name, cell, i, h, layers, bidir, t, mb, states, batch_first=False, seed=0, unbatched=False):
    torch.manual_seed(seed)
    m = make(cell, i, h, layers, bidir, batch_first)
    d = 2 if bidir else 1
    if unbatched:
        x = torch.randn(t, i)
    else:
        x = torch.randn(mb, t, i) if batch_first else torch.randn(t, mb, i)
    tensors = dict(x=x)
    args = ()
    if states:
        shape = (layers * d, h) if unbatched else (layers * d, mb, h)
        h0 = torch.randn(*shape)
        tensors["h0"] = h0
        if cell == "lstm":
            c0 = torch.randn(*shape)
            tensors["c0"] = c0
            args = ((h0, c0),)
        else:
            args = (h0,)
    with torch.no_grad():
        out, hn = m(x, *args)
    if cell == "lstm":
        hn, cn = hn
        tensors["cn"] = cn
    tensors.update(out=out, hn=hn)
    for pname, p in m.named_parameters():
        tensors[pname] = p
    tensors["meta"] = torch.tensor([CELLS[cell], layers, int(bidir), int(batch_first), int(states), i, h],
                                   dtype=torch.float32)
    save(outdir, "rnn_" + name, **tensors)


def generate(outdir):
    seed = 100
    for cell in CELLS:
        for layers in (1, 2):
            for bidir in (False, True):
                for states in (False, True):
                    seed += 1
                    name = f"{cell}_l{layers}_{'bi' if bidir else 'uni'}_{'h0' if states else 'zero'}"
                    # input_size != hidden_size, so a 2-layer stack's layers differ in width.
                    case(outdir, name, cell, 6, 5, layers, bidir, t=7, mb=3, states=states, seed=seed)
        seed += 1
        case(outdir, cell + "_l2_equal_width", cell, 8, 8, 2, False, t=9, mb=2, states=True, seed=seed)
        seed += 1
        case(outdir, cell + "_batch_first", cell, 4, 6, 1, True, t=5, mb=4, states=True, batch_first=True,
             seed=seed)
    case(outdir, "tiny_rnn_10_10", "rnn_tanh", 10, 10, 1, False, t=100, mb=1, states=False, seed=7,
         unbatched=True)
