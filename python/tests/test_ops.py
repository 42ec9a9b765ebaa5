"""blockdnn.nn's ops against torch.nn: seeded random inputs over odd shapes (odd channels and
sizes, big pads, strides above the kernel, mb 1, 1-D to 3-D, groups, depthwise, dilation), each
with a plain torch input and a blocked blockdnn.Tensor, and seeded random shapes for pooling,
batch norm, linear, the activations and softmax; fused activations, residual sums and folded
batch norms; ops on streams; the per-shape op cache; and the errors for bad input."""
import math
import random
import threading
import weakref

import numpy
import pytest
import torch

import blockdnn
from blockdnn import nn

# f32 sums of up to a few hundred products of O(1) values, against PyTorch's own f32 sums.
TOL = dict(rtol=1e-4, atol=1e-4)


def randn(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def run_both(op, x):
    """op on the plain torch tensor x and on x blocked; the blocked result comes back blocked."""
    y = op(x)
    assert isinstance(y, torch.Tensor)
    xb = blockdnn.to_blocked(x)
    yb = op(xb)
    assert isinstance(yb, blockdnn.Tensor)
    if x.dim() >= 3 and yb.shape[1] > 1:
        assert yb.is_blocked and yb.layout[-3:] == xb.layout[-3:], (xb.layout, yb.layout)
    return y, blockdnn.to_dense(yb)


def assert_matches(op, x, ref, **tol):
    """op(x) is close to ref, for x as given and, where it has a blocked layout (3 dims and up), blocked."""
    if x.dim() < 3:
        torch.testing.assert_close(op(x), ref, **tol)
        return
    y, yb = run_both(op, x)
    torch.testing.assert_close(y, ref, **tol)
    torch.testing.assert_close(yb, ref, **tol)


def torch_eval(module, x):
    with torch.no_grad():
        return module.eval()(x)


# (mb, ic, oc, groups, kernel, stride, padding, dilation, input spatial sizes)
CONV_CASES = {
    'first_layer': (1, 3, 8, 1, 3, 1, 1, 1, (13, 13)),
    'odd_channels_stride2': (2, 17, 29, 1, 3, 2, 2, 1, (11, 9)),
    'depthwise': (1, 32, 32, 32, 3, 1, 1, 1, (9, 9)),
    'depthwise_multiplier': (2, 8, 16, 8, 3, 2, 1, 1, (7, 8)),
    'groups_blocks': (2, 32, 48, 2, 3, 1, 1, 1, (7, 7)),
    'groups_odd_dilated': (1, 6, 9, 3, 3, 1, 2, 2, (10, 10)),
    'stride_above_kernel': (2, 16, 16, 1, 1, 3, 0, 1, (10, 10)),
    'big_pads_asym_kernel': (1, 5, 7, 1, (3, 5), (1, 2), (4, 0), (1, 2), (8, 12)),
    'same_even_kernel': (1, 16, 20, 1, 4, 1, 'same', 2, (9, 9)),
    'valid': (2, 3, 5, 1, 3, 1, 'valid', 1, (6, 7)),
    'pointwise_wide': (1, 64, 64, 1, 1, 1, 0, 1, (7, 7)),
    'conv1d': (2, 7, 20, 1, 5, 2, 3, 1, (31,)),
    'conv1d_depthwise_dilated': (1, 16, 16, 16, 3, 1, 1, 2, (17,)),
    'conv3d': (1, 4, 9, 1, 3, 1, 1, 1, (6, 6, 6)),
    'conv3d_strided': (2, 16, 32, 1, (1, 3, 3), (1, 2, 2), (0, 1, 1), 1, (4, 9, 9)),
    'conv3d_groups': (1, 12, 6, 3, 2, 2, 1, 1, (5, 6, 7)),
}


def random_conv_cases(n, seed=2024):
    rng = random.Random(seed)
    cases = {}
    for i in range(n):
        g = rng.choice([1, 1, 2, 3])
        k = rng.choice([1, 2, 3, 5])
        s = rng.choice([1, 2, 3])
        d = rng.choice([1, 1, 2])
        p = rng.randint(0, k + 1)
        ext = d * (k - 1) + 1
        size = tuple(rng.randint(max(1, ext - 2 * p), 14) for _ in range(2))
        cases[f'random{i}'] = (rng.randint(1, 3), g * rng.randint(1, 9), g * rng.randint(1, 9), g, k, s, p, d, size)
    return cases


CONV_CASES.update(random_conv_cases(6))


def torch_conv(case, bias=True, seed=1):
    mb, ic, oc, g, k, s, p, d, size = case
    cls = [torch.nn.Conv1d, torch.nn.Conv2d, torch.nn.Conv3d][len(size) - 1]
    torch.manual_seed(seed)
    return cls(ic, oc, k, stride=s, padding=p, dilation=d, groups=g, bias=bias), randn(mb, ic, *size, seed=seed)


@pytest.mark.parametrize('name', sorted(CONV_CASES))
def test_conv_matches_torch(name):
    conv, x = torch_conv(CONV_CASES[name], bias=name != 'depthwise')
    ref = torch_eval(conv, x)
    op = nn.Conv1d.from_torch(conv) if x.dim() == 3 else (nn.Conv2d if x.dim() == 4 else nn.Conv3d).from_torch(conv)
    assert_matches(op, x, ref, **TOL)


def test_conv_channels_last_in_and_out():
    conv, x = torch_conv(CONV_CASES['odd_channels_stride2'])
    x = x.to(memory_format=torch.channels_last)
    y = nn.Conv2d.from_torch(conv)(x)
    assert y.is_contiguous(memory_format=torch.channels_last)
    torch.testing.assert_close(y, torch_eval(conv, x), **TOL)


def test_conv_constructor_initialises_as_torch():
    torch.manual_seed(7)
    ours = nn.Conv2d(6, 10, (3, 2), stride=2, groups=2)
    torch.manual_seed(7)
    theirs = torch.nn.Conv2d(6, 10, (3, 2), stride=2, groups=2)
    assert torch.equal(ours.weight, theirs.weight.detach())
    assert torch.equal(ours.bias, theirs.bias.detach())
    x = randn(2, 6, 9, 8)
    torch.testing.assert_close(ours(x), torch_eval(theirs, x), **TOL)


@pytest.mark.parametrize('activation', [torch.nn.ReLU(), torch.nn.LeakyReLU(0.1), torch.nn.GELU(), torch.nn.ReLU6()])
def test_conv_fused_activation(activation):
    conv, x = torch_conv(CONV_CASES['odd_channels_stride2'])
    op = nn.Conv2d.from_torch(conv, activation=activation)
    ref = activation(torch_eval(conv, x))
    assert_matches(op, x, ref, **TOL)


@pytest.mark.parametrize('blocked', [False, True])
def test_conv_sum_into_then_relu(blocked):
    """The residual add of a ResNet block: relu(conv(x) + r), written into r."""
    conv, x = torch_conv((2, 16, 32, 1, 3, 1, 1, 1, (7, 7)))
    r = randn(2, 32, 7, 7, seed=5)
    ref = torch.relu(torch_eval(conv, x) + r)
    op = nn.Conv2d.from_torch(conv, activation='relu')
    if blocked:
        rb = blockdnn.to_blocked(r)
        out = op(blockdnn.to_blocked(x), sum_into=rb)
        assert out is rb
        torch.testing.assert_close(blockdnn.to_dense(rb), ref, **TOL)
    else:
        r_before = r.clone()
        out = op(x, sum_into=r)
        assert out is r
        torch.testing.assert_close(r, ref, **TOL)
        # the same op without a sum still gives relu(conv(x))
        torch.testing.assert_close(op(x), torch.relu(torch_eval(conv, x)), **TOL)
        assert not torch.equal(r, r_before)


def test_conv_sum_into_plain_from_blocked_op():
    """sum_into in another layout than the op's dst: reordered in and the result written back."""
    conv, x = torch_conv((1, 16, 16, 1, 3, 1, 1, 1, (6, 6)))
    r = randn(1, 16, 6, 6, seed=3)
    ref = torch_eval(conv, x) + r
    nn.Conv2d.from_torch(conv)(blockdnn.to_blocked(x), sum_into=r)
    torch.testing.assert_close(r, ref, **TOL)


@pytest.mark.parametrize('sp', [1, 2, 3])
def test_conv_with_batchnorm_folded(sp):
    conv, x = torch_conv((2, 5, 24, 1, 3, 1, 1, 1, (7,) * sp))
    bn = getattr(torch.nn, f'BatchNorm{sp}d')(24)
    gen = torch.Generator().manual_seed(11)
    with torch.no_grad():
        for t in (bn.running_mean, bn.weight, bn.bias):
            t.copy_(torch.randn(24, generator=gen))
        bn.running_var.copy_(torch.rand(24, generator=gen) + 0.5)
    ref = torch.relu(torch_eval(bn, torch_eval(conv, x)))
    op = getattr(nn, f'Conv{sp}d').from_torch(conv, bn, torch.nn.ReLU())
    assert_matches(op, x, ref, **TOL)
    assert op.bias is not None and conv.bias is not None


def test_conv_folds_bn_without_conv_bias():
    torch.manual_seed(3)
    conv = torch.nn.Conv2d(8, 16, 1, bias=False)
    bn = torch.nn.BatchNorm2d(16, affine=False)
    bn.running_mean.uniform_(-1, 1)
    bn.running_var.uniform_(0.5, 2)
    x = randn(1, 8, 5, 5)
    ref = torch_eval(bn, torch_eval(conv, x))
    torch.testing.assert_close(nn.Conv2d.from_torch(conv, bn)(x), ref, **TOL)


def random_bn(cls, c, affine=True, track=True, seed=4):
    bn = cls(c, affine=affine, track_running_stats=track, eps=1e-3)
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        if track:
            bn.running_mean.copy_(torch.randn(c, generator=gen))
            bn.running_var.copy_(torch.rand(c, generator=gen) + 0.1)
        if affine:
            bn.weight.copy_(torch.randn(c, generator=gen))
            bn.bias.copy_(torch.randn(c, generator=gen))
    return bn


@pytest.mark.parametrize('shape', [(3, 7), (2, 5, 9), (1, 19, 5, 6), (2, 16, 3, 3), (2, 3, 4, 5, 3)])
@pytest.mark.parametrize('affine,track', [(True, True), (False, True), (True, False)])
def test_batchnorm_matches_torch_eval(shape, affine, track):
    cls = {2: torch.nn.BatchNorm1d, 3: torch.nn.BatchNorm1d, 4: torch.nn.BatchNorm2d, 5: torch.nn.BatchNorm3d}
    bn = random_bn(cls[len(shape)], shape[1], affine, track)
    x = randn(*shape) * 3 + 1
    ref = torch_eval(bn, x)
    op = getattr(nn, type(bn).__name__).from_torch(bn)
    assert_matches(op, x, ref, **TOL)


def test_batchnorm_constructor_and_assigned_stats():
    op = nn.BatchNorm2d(4)
    x = randn(2, 4, 3, 3)
    torch.testing.assert_close(op(x), x / (1 + 1e-5)**0.5, **TOL)
    op.running_mean = torch.full((4,), 2.0)
    torch.testing.assert_close(op(x), (x - 2) / (1 + 1e-5)**0.5, **TOL)


POOL_CASES = {
    'max2d_resnet': (torch.nn.MaxPool2d(3, 2, 1), (2, 16, 12, 12)),
    'max2d_odd': (torch.nn.MaxPool2d((2, 3), (3, 1), (1, 1)), (1, 7, 9, 10)),
    'max2d_ceil': (torch.nn.MaxPool2d(3, 2, 0, ceil_mode=True), (2, 5, 8, 10)),
    'max2d_dilated': (torch.nn.MaxPool2d(3, 1, 1, dilation=2), (1, 3, 9, 9)),
    'max2d_stride_above_kernel': (torch.nn.MaxPool2d(2, 3), (1, 17, 11, 11)),
    'max1d': (torch.nn.MaxPool1d(3, 2, 1), (2, 9, 15)),
    'max3d': (torch.nn.MaxPool3d(2, 2, ceil_mode=True), (1, 6, 5, 6, 7)),
    'avg2d_include_pad': (torch.nn.AvgPool2d(3, 2, 1), (2, 13, 9, 11)),
    'avg2d_exclude_pad': (torch.nn.AvgPool2d(3, 2, 1, count_include_pad=False), (2, 13, 9, 11)),
    'avg2d_ceil_exclude': (torch.nn.AvgPool2d(3, 2, 1, ceil_mode=True, count_include_pad=False), (1, 4, 8, 8)),
    'avg2d_ceil_include_fits': (torch.nn.AvgPool2d(2, 2, 1, ceil_mode=True), (1, 4, 7, 7)),
    'avg1d': (torch.nn.AvgPool1d(4, 3, 2), (3, 5, 17)),
    'avg3d': (torch.nn.AvgPool3d((1, 2, 2), (1, 2, 2)), (2, 20, 3, 6, 6)),
    'global_avg': (torch.nn.AdaptiveAvgPool2d((1, 1)), (2, 24, 7, 7)),
    'adaptive_avg_2x3': (torch.nn.AdaptiveAvgPool2d((2, 3)), (1, 9, 8, 9)),
    'adaptive_avg1d': (torch.nn.AdaptiveAvgPool1d(1), (2, 5, 13)),
    'adaptive_avg3d': (torch.nn.AdaptiveAvgPool3d(1), (1, 3, 4, 5, 6)),
    'adaptive_max2d': (torch.nn.AdaptiveMaxPool2d(2), (2, 6, 8, 6)),
}


@pytest.mark.parametrize('name', sorted(POOL_CASES))
def test_pool_matches_torch(name):
    module, shape = POOL_CASES[name]
    x = randn(*shape)
    ref = torch_eval(module, x)
    assert_matches(nn.from_torch(module), x, ref, **TOL)


def test_pool_channels_last_stays_channels_last():
    x = randn(2, 16, 10, 10).to(memory_format=torch.channels_last)
    y = nn.MaxPool2d(3, 2, 1)(x)
    assert y.is_contiguous(memory_format=torch.channels_last)
    torch.testing.assert_close(y, torch.nn.functional.max_pool2d(x, 3, 2, 1), **TOL)


@pytest.mark.parametrize('shape', [(4, 10), (2, 3, 10), (10,), (1, 10)])
def test_linear_over_the_last_dim(shape):
    torch.manual_seed(2)
    module = torch.nn.Linear(10, 7)
    x = randn(*shape)
    y = nn.Linear.from_torch(module)(x)
    assert y.shape == shape[:-1] + (7,)
    torch.testing.assert_close(y, torch_eval(module, x), **TOL)


def test_linear_constructor_initialises_as_torch_and_fuses_relu():
    torch.manual_seed(9)
    ours = nn.Linear(20, 5, activation=nn.ReLU())
    torch.manual_seed(9)
    theirs = torch.nn.Linear(20, 5)
    assert torch.equal(ours.weight, theirs.weight.detach())
    x = randn(3, 20)
    torch.testing.assert_close(ours(x), torch.relu(torch_eval(theirs, x)), **TOL)


@pytest.mark.parametrize('shape', [(2, 24, 1, 1), (3, 5, 2, 3)])
def test_linear_takes_a_blocked_input_as_flattened(shape):
    """A global pool's blocked output straight into the classifier, as torch's flatten + Linear."""
    torch.manual_seed(4)
    features = shape[1] * shape[2] * shape[3]
    module = torch.nn.Linear(features, 11)
    x = randn(*shape)
    y = nn.Linear.from_torch(module)(blockdnn.to_blocked(x))
    assert isinstance(y, blockdnn.Tensor) and y.shape == (shape[0], 11)
    torch.testing.assert_close(blockdnn.to_torch(y), torch_eval(module, x.flatten(1)), **TOL)


ACTIVATIONS = [
    torch.nn.ReLU(), torch.nn.LeakyReLU(0.2), torch.nn.Tanh(), torch.nn.Sigmoid(), torch.nn.ELU(0.7),
    torch.nn.GELU(), torch.nn.GELU(approximate='tanh'), torch.nn.SiLU(), torch.nn.Hardtanh(-0.5, 2.0), torch.nn.ReLU6()
]


@pytest.mark.parametrize('module', ACTIVATIONS, ids=lambda m: repr(m))
@pytest.mark.parametrize('shape', [(2, 17, 5, 3), (7,), (3, 4, 9), (1, 3, 2, 3, 4)])
def test_activation_matches_torch(module, shape):
    x = randn(*shape) * 4
    ref = module(x)
    op = nn.from_torch(module)
    assert type(op).__name__ == type(module).__name__
    assert_matches(op, x, ref, rtol=1e-5, atol=1e-5)


def test_inplace_relu_returns_its_input():
    x = randn(2, 3, 4, 5)
    ref = torch.relu(x)
    out = nn.ReLU(inplace=True)(x)
    assert out is x
    assert torch.equal(x, ref)
    xb = blockdnn.to_blocked(randn(1, 16, 3, 3))
    assert nn.ReLU(inplace=True)(xb) is xb


@pytest.mark.parametrize('dim', [0, 1, -1, 2])
def test_softmax_matches_torch(dim):
    x = randn(2, 19, 4, 5) * 3
    ref = torch.softmax(x, dim)
    assert_matches(nn.Softmax(dim), x, ref, rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------------ random shapes, fixed seeds

RANDOM_CASES = 30


def random_pool(rng, _):
    """A torch pooling module (max or avg, 1-D to 3-D) and an input shape it accepts."""
    sp = rng.randint(1, 3)
    is_max = rng.random() < 0.5
    k = tuple(rng.randint(1, 4) for _ in range(sp))
    s = tuple(rng.randint(1, 4) for _ in range(sp))
    p = tuple(rng.randint(0, kk // 2) for kk in k)
    d = tuple(rng.choice([1, 1, 2]) for _ in range(sp)) if is_max else (1,) * sp
    ceil_mode = rng.random() < 0.5
    ext = [dd * (kk - 1) + 1 for dd, kk in zip(d, k)]
    # PyTorch's average pooling wants the kernel within the unpadded input.
    low = [max(1, e - 2 * pp) if is_max else e for e, pp in zip(ext, p)]
    size = tuple(rng.randint(lo, 7 if sp == 3 else 11) for lo in low)
    shape = (rng.randint(1, 2), rng.randint(1, 20)) + size
    if is_max:
        cls = [torch.nn.MaxPool1d, torch.nn.MaxPool2d, torch.nn.MaxPool3d][sp - 1]
        return cls(k, s, p, d, ceil_mode=ceil_mode), shape
    # PyTorch divides a last window that runs past the end padding (ceil_mode) by fewer taps
    # than the kernel's with count_include_pad, which blockdnn refuses: exclude the pad then.
    include_pad = rng.random() < 0.5
    for i, kk, ss, pp in zip(size, k, s, p):
        o = -(-(i + 2 * pp - kk) // ss) + 1 if ceil_mode else (i + 2 * pp - kk) // ss + 1
        if ceil_mode and (o - 1) * ss >= i + pp:
            o -= 1
        include_pad = include_pad and (o - 1) * ss - pp + kk <= i + pp
    cls = [torch.nn.AvgPool1d, torch.nn.AvgPool2d, torch.nn.AvgPool3d][sp - 1]
    return cls(k, s, p, ceil_mode=ceil_mode, count_include_pad=include_pad), shape


def random_cases(make, seed):
    """RANDOM_CASES cases make(rng, i) from one seeded generator."""
    rng = random.Random(seed)
    return [make(rng, i) for i in range(RANDOM_CASES)]


@pytest.mark.parametrize('case', random_cases(random_pool, 31), ids=lambda c: f'{c[0]}-{c[1]}')
def test_pool_matches_torch_on_random_shapes(case):
    module, shape = case
    x = randn(*shape, seed=shape[-1])
    ref = torch_eval(module, x)
    assert_matches(nn.from_torch(module), x, ref, **TOL)


def random_bn_case(rng, _):
    rank = rng.randint(2, 5)
    shape = (rng.randint(1, 3), rng.randint(1, 40)) + tuple(rng.randint(1, 6) for _ in range(rank - 2))
    affine, track = rng.choice([(True, True), (False, True), (True, False), (False, False)])
    if not track and shape[0] * math.prod(shape[2:]) == 1:  # PyTorch wants 2 values for batch stats
        shape = (2,) + shape[1:]
    return shape, affine, track, rng.randint(0, 1000)


@pytest.mark.parametrize('case', random_cases(random_bn_case, 32), ids=str)
def test_batchnorm_matches_torch_on_random_shapes(case):
    shape, affine, track, seed = case
    cls = {2: torch.nn.BatchNorm1d, 3: torch.nn.BatchNorm1d, 4: torch.nn.BatchNorm2d, 5: torch.nn.BatchNorm3d}
    bn = random_bn(cls[len(shape)], shape[1], affine, track, seed)
    x = randn(*shape, seed=seed) * 2 - 1
    ref = torch_eval(bn, x)
    op = getattr(nn, type(bn).__name__).from_torch(bn)
    assert_matches(op, x, ref, **TOL)


def random_linear_case(rng, _):
    lead = tuple(rng.randint(1, 5) for _ in range(rng.randint(0, 3)))
    return lead, rng.randint(1, 70), rng.randint(1, 40), rng.random() < 0.7, rng.randint(0, 1000)


@pytest.mark.parametrize('case', random_cases(random_linear_case, 33), ids=str)
def test_linear_matches_torch_on_random_shapes(case):
    lead, ic, oc, bias, seed = case
    torch.manual_seed(seed)
    module = torch.nn.Linear(ic, oc, bias=bias)
    x = randn(*lead, ic, seed=seed)
    y = nn.Linear.from_torch(module)(x)
    assert y.shape == lead + (oc,)
    torch.testing.assert_close(y, torch_eval(module, x), **TOL)


def random_activation(rng, i):
    """The i-th case: each torch activation in turn, with random parameters where it has some."""
    kinds = [
        lambda: torch.nn.ReLU(), lambda: torch.nn.LeakyReLU(rng.uniform(0.0, 0.5)), lambda: torch.nn.Tanh(),
        lambda: torch.nn.Sigmoid(), lambda: torch.nn.ELU(rng.uniform(0.1, 2.0)), lambda: torch.nn.GELU(),
        lambda: torch.nn.GELU(approximate='tanh'), lambda: torch.nn.SiLU(),
        lambda: torch.nn.Hardtanh(-rng.uniform(0.0, 2.0), rng.uniform(0.0, 3.0)), lambda: torch.nn.ReLU6()
    ]
    module = kinds[i % len(kinds)]()
    rank = rng.randint(1, 5)
    shape = tuple(rng.randint(1, 3 if rank == 5 else 9) for _ in range(rank))
    return module, shape


@pytest.mark.parametrize('case', random_cases(random_activation, 34), ids=lambda c: f'{c[0]}-{c[1]}')
def test_activation_matches_torch_on_random_shapes(case):
    module, shape = case
    x = randn(*shape, seed=len(shape)) * 4
    ref = module(x)
    op = nn.from_torch(module)
    assert_matches(op, x, ref, rtol=1e-5, atol=1e-5)


def random_softmax_case(rng, _):
    rank = rng.randint(1, 5)
    shape = tuple(rng.randint(1, 4 if rank == 5 else 20) for _ in range(rank))
    return shape, rng.randint(-rank, rank - 1)


@pytest.mark.parametrize('case', random_cases(random_softmax_case, 35), ids=str)
def test_softmax_matches_torch_on_random_shapes(case):
    shape, dim = case
    x = randn(*shape, seed=len(shape)) * 3
    ref = torch.softmax(x, dim)
    op = nn.Softmax(dim)
    assert_matches(op, x, ref, rtol=1e-5, atol=1e-6)


def test_flatten_identity_dropout():
    x = randn(2, 20, 3, 3)
    xb = blockdnn.to_blocked(x)
    f = nn.Flatten()
    assert torch.equal(f(x), x.flatten(1))
    fb = f(xb)
    assert isinstance(fb, blockdnn.Tensor) and not fb.is_blocked and fb.shape == (2, 180)
    assert torch.equal(blockdnn.to_torch(fb), x.flatten(1))
    assert nn.Identity()(xb) is xb
    assert nn.from_torch(torch.nn.Dropout(0.3))(x) is x


def test_a_small_network_stays_blocked():
    torch.manual_seed(5)
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.BatchNorm2d(16), torch.nn.ReLU(),
                                torch.nn.MaxPool2d(2), torch.nn.Conv2d(16, 32, 3, stride=2, padding=1),
                                torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d((1, 1)), torch.nn.Flatten(),
                                torch.nn.Linear(32, 10), torch.nn.Softmax(1)).eval()
    model[1].running_mean.uniform_(-0.5, 0.5)
    model[1].running_var.uniform_(0.5, 1.5)
    x = randn(2, 3, 16, 16)
    ref = torch_eval(model, x)
    ops = [nn.Conv2d.from_torch(model[0], model[1], model[2])] + [nn.from_torch(m) for m in list(model)[3:]]
    h = blockdnn.to_blocked(x)
    for op in ops[:-4]:
        h = op(h)
        assert h.is_blocked
    for op in ops[-4:]:
        h = op(h)
    torch.testing.assert_close(blockdnn.to_torch(h), ref, **TOL)


def test_one_op_per_shape_and_layout():
    op = nn.Conv2d(4, 8, 3)
    x = randn(1, 4, 6, 6)
    for _ in range(3):
        op(x)
    assert op._cache_size == 1
    op(blockdnn.to_blocked(x))
    op(randn(2, 4, 6, 6))
    assert op._cache_size == 3
    assert all(impl != 'ref' for _, impl in op._impls), op._impls


def test_the_op_cache_drops_the_least_recently_used_shape():
    op = nn.ReLU()
    xs = [randn(1, c, 4) for c in range(1, 18)]   # 17 shapes: one more than an op object keeps
    for x in xs[:16]:
        op(x)
    op(xs[0])          # now the most recently used
    op(xs[16])         # pushes out xs[1], the least recently used
    assert op._cache_size == 16
    kept = [src for src, _ in op._impls]
    assert kept[0] == 'ncw:1x3x4' and kept[-2:] == ['ncw:1x1x4', 'ncw:1x17x4'], kept
    assert 'ncw:1x2x4' not in kept


def test_results_are_reused_only_once_released():
    op = nn.Conv2d(16, 32, 3, padding=1)
    x1, x2 = randn(2, 16, 9, 9, seed=1), randn(2, 16, 9, 9, seed=2)
    nn.empty_cache()
    y1 = op(x1)
    ref1 = y1.clone()
    y2 = op(x2)
    assert y2.data_ptr() != y1.data_ptr()
    torch.testing.assert_close(y1, ref1, rtol=0, atol=0)
    yb = op(blockdnn.to_blocked(x1))
    ptr = yb.data_ptr()
    del yb
    assert blockdnn._blockdnn.cached_result_bytes() > 0
    assert op(blockdnn.to_blocked(x2)).data_ptr() == ptr
    nn.empty_cache()
    assert blockdnn._blockdnn.cached_result_bytes() == 0
    torch.testing.assert_close(y1, ref1, rtol=0, atol=0)


def test_reused_memory_leaves_nothing_in_the_padding():
    """A blocked result in memory a NaN result had: its padding channels must read as zeros, or
    the next conv (whose padded weights are zeros) would give 0 * NaN."""
    torch.manual_seed(6)
    conv1, conv2 = torch.nn.Conv2d(16, 17, 3, padding=1), torch.nn.Conv2d(17, 8, 1)
    op1, op2 = nn.Conv2d.from_torch(conv1), nn.Conv2d.from_torch(conv2)
    x = randn(2, 16, 5, 5)
    xb = blockdnn.to_blocked(x)
    h = op1(xb)
    assert h.is_blocked and h.shape[1] == 17  # 17 channels padded to the block
    nbytes = h.nbytes
    del h
    nn.empty_cache()
    nans = nn.ReLU()(torch.full((nbytes // 4,), float('nan')))
    del nans  # its memory, all NaN, is the only free buffer of this size
    y = op2(op1(xb))
    torch.testing.assert_close(blockdnn.to_dense(y), torch_eval(conv2, torch_eval(conv1, x)), **TOL)


def test_assigning_weights_rebuilds():
    op = nn.Conv2d(2, 3, 1, bias=False)
    x = randn(1, 2, 4, 4)
    op(x)
    op.weight = torch.ones(3, 2, 1, 1)
    assert op._cache_size == 0
    torch.testing.assert_close(op(x), x.sum(1, keepdim=True).expand(1, 3, 4, 4), **TOL)


def test_assigning_bias_and_a_refused_weight():
    torch.manual_seed(8)
    module = torch.nn.Linear(6, 4)
    op = nn.Linear.from_torch(module)
    x = randn(3, 6)
    op.bias = torch.zeros(4)
    torch.testing.assert_close(op(x), x @ module.weight.detach().t(), **TOL)
    weight = op.weight
    with pytest.raises(ValueError, match=r'Linear\(6, 4\): weight has shape \(4, 5\), expected \(4, 6\)'):
        op.weight = torch.zeros(4, 5)
    assert op.weight is weight and torch.equal(op.bias, torch.zeros(4))
    conv = nn.Conv1d(2, 3, 1)
    conv.bias = None
    assert conv.bias is None
    torch.testing.assert_close(conv(randn(1, 2, 5)), torch.nn.functional.conv1d(randn(1, 2, 5), conv.weight), **TOL)


def test_threads_sharing_one_conv_get_the_results_of_one_at_a_time():
    conv, _ = torch_conv((1, 16, 32, 1, 3, 1, 1, 1, (12, 12)))
    op = nn.Conv2d.from_torch(conv)
    xs = [randn(2, 16, 12, 12, seed=s) for s in range(8)]
    refs = [op(x) for x in xs]
    outs = [None] * len(xs)

    def work(i):
        for _ in range(5):
            outs[i] = op(xs[i])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(xs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for out, ref in zip(outs, refs):
        assert torch.equal(out, ref)


def test_numpy_input_gives_a_torch_tensor():
    a = randn(2, 5).numpy()
    op = nn.Linear(5, 3)
    y = op(a)
    assert isinstance(y, torch.Tensor)
    torch.testing.assert_close(y, op(torch.from_numpy(a)), rtol=0, atol=0)


def test_ops_inside_a_stream_give_the_synchronous_results():
    conv, x = torch_conv((2, 16, 32, 1, 3, 1, 1, 1, (10, 10)))
    ops = [nn.Conv2d.from_torch(conv, activation='relu'), nn.MaxPool2d(2), nn.BatchNorm2d(32), nn.Softmax(1)]
    r = randn(2, 32, 10, 10, seed=8)

    def run(x):
        r_copy = blockdnn.to_blocked(r) if isinstance(x, blockdnn.Tensor) else r.clone()
        h = ops[0](x, sum_into=r_copy)
        for op in ops[1:]:
            h = op(h)
        return h

    xb = blockdnn.to_blocked(x)
    refs = [run(x), blockdnn.to_dense(run(xb))]
    s = blockdnn.Stream()
    with blockdnn.stream(s):
        outs = [run(x) for _ in range(3)] + [run(xb) for _ in range(3)]
    s.synchronize()
    for out in outs[:3]:
        assert torch.equal(out, refs[0])
    for out in outs[3:]:
        assert torch.equal(blockdnn.to_dense(out), refs[1])


@pytest.mark.parametrize('channels_last_weights', [False, True])
def test_ops_built_inside_a_stream_have_their_weights(channels_last_weights):
    """A conv with a folded batch norm, converted inside a stream context: the fold and the
    copies of the weights run at the call, so the op holds the folded weights, not memory the
    stream has yet to write."""
    conv, x = torch_conv((2, 8, 16, 1, 3, 1, 1, 1, (9, 9)))
    bn = random_bn(torch.nn.BatchNorm2d, 16)
    if channels_last_weights:
        conv = conv.to(memory_format=torch.channels_last)
    ref = torch_eval(bn, torch_eval(conv, x))
    s = blockdnn.Stream()
    blockdnn.set_num_threads(2)
    try:
        with blockdnn.stream(s):
            op = nn.Conv2d.from_torch(conv, bn)
            y = op(x)
        s.synchronize()
    finally:
        blockdnn.reset_num_threads()
    torch.testing.assert_close(y, ref, **TOL)
    torch.testing.assert_close(op(x), ref, **TOL)


def _stream_held_until(gate):
    """A stream whose queued work cannot finish before gate.set(): its op holds the last view of
    a NumPy array, released on the library thread that ran it before the op counts as finished,
    and the array's finalizer waits for the gate there. None if every try's op finished before
    this thread let go of its array (whose finalizer then ran here, without waiting)."""
    main, entered, freed_here = threading.get_ident(), threading.Event(), []
    held = blockdnn.Stream()

    def on_free():
        if threading.get_ident() == main:
            freed_here.append(True)
            return
        entered.set()
        gate.wait()

    for _ in range(20):
        freed_here.clear()
        a = numpy.ones((2, 16, 6, 6), numpy.float32)
        weakref.finalize(a, on_free)
        with blockdnn.stream(held):
            blockdnn.to_blocked(torch.randn(8, 64, 32, 32))  # so the view is still queued at `del a`
            blockdnn.to_blocked(a)
        del a
        if not freed_here:
            entered.wait()
            return held
        held.synchronize()
    return None


def test_first_call_inside_a_stream_does_not_wait_for_it():
    """Making an op reads only the nn object's own copies of the weights, so the first call at
    a shape queues its work without waiting for what s has queued before (a held stream here:
    waiting for it would last until the gate opens)."""
    conv, x = torch_conv((2, 16, 32, 1, 3, 1, 1, 1, (8, 8)))
    ops = [nn.Conv2d.from_torch(conv), nn.Linear(8, 5)]
    gate = threading.Event()
    # Opens the gate should a call wait for the stream anyway, so that the test then fails
    # instead of hanging; the calls that pass take far less.
    opener = threading.Timer(30, gate.set)
    blockdnn.set_num_threads(2)
    try:
        held = _stream_held_until(gate)
        assert held is not None, 'the stream could not be held'
        s = blockdnn.Stream()
        s.wait(held.record())
        opener.start()
        with blockdnn.stream(s):
            ys = [op(x) for op in ops]
        assert not gate.is_set() and not s.query()
        gate.set()
        s.synchronize()
        held.synchronize()
    finally:
        gate.set()
        opener.cancel()
        blockdnn.reset_num_threads()
    torch.testing.assert_close(ys[0], torch_eval(conv, x), **TOL)
    torch.testing.assert_close(ys[1], ops[1](x), rtol=0, atol=0)


def test_inputs_that_require_grad_are_read_detached():
    """Tensors of a training graph are taken as x.detach(): same values, no autograd history."""
    conv, x = torch_conv((2, 16, 16, 1, 3, 1, 1, 1, (6, 6)))
    ops = [
        nn.Conv2d.from_torch(conv),
        nn.BatchNorm2d.from_torch(random_bn(torch.nn.BatchNorm2d, 16)),
        nn.MaxPool2d(2),
        nn.Linear(6, 3),
        nn.GELU(),
        nn.Softmax(1)
    ]
    xg = x.clone().requires_grad_()
    for op in ops:
        y = op(xg)
        assert not y.requires_grad and y.grad_fn is None
        torch.testing.assert_close(y, op(x), rtol=0, atol=0)
    r, rg = randn(2, 16, 6, 6, seed=2), randn(2, 16, 6, 6, seed=2).requires_grad_()
    assert ops[0](xg * 1, sum_into=rg) is rg
    torch.testing.assert_close(rg.detach(), ops[0](x, sum_into=r), rtol=0, atol=0)
    xg2 = x.clone().requires_grad_()
    assert nn.ReLU(inplace=True)(xg2) is xg2
    torch.testing.assert_close(xg2.detach(), torch.relu(x), rtol=0, atol=0)


# ------------------------------------------------------------------ bad input


def test_wrong_rank_names_the_module_and_shape():
    with pytest.raises(ValueError, match=r'Conv2d\(3, 8.*4-D input.*\(3, 9, 9\).*unsqueeze'):
        nn.Conv2d(3, 8, 3)(randn(3, 9, 9))
    with pytest.raises(ValueError, match=r'MaxPool3d.*5-D input.*\(1, 2, 3, 4\)'):
        nn.MaxPool3d(2)(randn(1, 2, 3, 4))
    with pytest.raises(ValueError, match=r'BatchNorm1d\(4\).*2-D or 3-D input'):
        nn.BatchNorm1d(4)(randn(1, 4, 2, 2))


def test_wrong_channels_names_the_count():
    with pytest.raises(ValueError, match=r'Conv2d\(3, 8.*expected 3 input channels \(in_channels\), got 5'):
        nn.Conv2d(3, 8, 3)(randn(1, 5, 9, 9))
    with pytest.raises(ValueError, match=r'BatchNorm2d\(6\).*expected 6 input channels.*got 4'):
        nn.BatchNorm2d(6)(randn(1, 4, 3, 3))
    with pytest.raises(ValueError, match=r'Linear\(10, 2\).*\(\*, 10\).*\(3, 9\)'):
        nn.Linear(10, 2)(randn(3, 9))


def test_non_float32_and_non_tensors():
    with pytest.raises(ValueError, match='float32'):
        nn.ReLU()(torch.zeros(2, 3, dtype=torch.float64))
    with pytest.raises(TypeError, match='list'):
        nn.ReLU()([1.0, 2.0])
    with pytest.raises(TypeError, match='float32'):
        nn.Conv2d(1, 1, 1, dtype=torch.float16)
    with pytest.raises(ValueError, match=r'Conv2d\(2, 3.*weight: .*(64 bits|float64)'):
        nn.Conv2d.from_torch(torch.nn.Conv2d(2, 3, 1).double())
    with pytest.raises(ValueError, match=r'Linear\(2, 3\).*softplus'):
        nn.Linear(2, 3, activation='softplus')


def test_kernel_larger_than_padded_input():
    with pytest.raises(ValueError, match=r'Conv2d\(2, 2.*kernel \(extent 5 with dilation 1\) is larger than input '
                       r'size 3 plus padding 0 in input of shape \(1, 2, 3, 3\)'):
        nn.Conv2d(2, 2, 5)(randn(1, 2, 3, 3))
    # PyTorch's dilation convention (1 = dense), not the library's (0 = dense).
    with pytest.raises(ValueError, match=r'extent 5 with dilation 2\) is larger than input size 4 plus padding 0'):
        nn.Conv2d(2, 2, 3, dilation=2)(randn(1, 2, 9, 4))
    nn.Conv2d(2, 2, 3, dilation=2, padding=(0, 1))(randn(1, 2, 9, 4))
    with pytest.raises(ValueError, match=r'MaxPool2d.*larger than input size 2'):
        nn.MaxPool2d(3)(randn(1, 2, 2, 2))


def test_bad_arguments():
    with pytest.raises(ValueError, match='groups = 3'):
        nn.Conv2d(4, 6, 3, groups=3)
    with pytest.raises(ValueError, match="padding_mode = 'reflect'"):
        nn.Conv2d(4, 6, 3, padding_mode='reflect')
    with pytest.raises(ValueError, match='kernel_size = \\(3, 3, 3\\)'):
        nn.Conv2d(4, 6, (3, 3, 3))
    with pytest.raises(ValueError, match=r'kernel_size = \(0, 0\).* must be positive'):
        nn.Conv2d(4, 6, 0)
    with pytest.raises(ValueError, match=r'padding = \(-1, -1\) not negative'):
        nn.Conv2d(4, 6, 3, padding=-1)
    with pytest.raises(ValueError, match="padding='same' needs stride 1"):
        nn.Conv2d(4, 6, 3, stride=2, padding='same')
    with pytest.raises(ValueError, match='return_indices'):
        nn.MaxPool2d(2, return_indices=True)
    with pytest.raises(ValueError, match='Softmax: dim = None'):
        nn.Softmax()
    with pytest.raises(ValueError, match=r'Softmax: dim = 4 is out of range.*\(2, 3\)'):
        nn.Softmax(4)(randn(2, 3))
    with pytest.raises(ValueError, match=r'weight has shape \(2, 2, 3, 3\), expected \(6, 2, 3, 3\)'):
        nn.Conv2d(2, 6, 3).weight = torch.zeros(2, 2, 3, 3)


BAD_COUNTS = [
    (lambda: nn.Conv2d(-1, 4, 3), ValueError, r'Conv2d: in_channels must be an integer >= 1, got -1'),
    (lambda: nn.Conv2d(4.0, 4, 3), TypeError, r'Conv2d: in_channels must be an integer >= 1, got 4\.0'),
    (lambda: nn.Conv1d(4, 0, 3), ValueError, r'Conv1d: out_channels must be an integer >= 1, got 0'),
    (lambda: nn.Conv3d(4, 4, 3, groups=True), TypeError, r'Conv3d: groups must be an integer >= 1, got True'),
    (lambda: nn.Conv2d(4, 4, 3, groups=0), ValueError, r'Conv2d: groups must be an integer >= 1, got 0'),
    (lambda: nn.Linear(4.5, 4), TypeError, r'Linear: in_features must be an integer >= 1, got 4\.5'),
    (lambda: nn.Linear(4, -2), ValueError, r'Linear: out_features must be an integer >= 1, got -2'),
    (lambda: nn.Linear(True, 4), TypeError, r'Linear: in_features must be an integer >= 1, got True'),
    (lambda: nn.BatchNorm2d(4.5), TypeError, r'BatchNorm2d: num_features must be an integer >= 1, got 4\.5'),
    (lambda: nn.BatchNorm1d(0), ValueError, r'BatchNorm1d: num_features must be an integer >= 1, got 0'),
    (lambda: nn.BatchNorm3d('4'), TypeError, r"BatchNorm3d: num_features must be an integer >= 1, got '4'"),
    (lambda: nn.MaxPool2d(0), ValueError, r'MaxPool2d: kernel_size = \(0, 0\) must be 1 or more'),
    (lambda: nn.MaxPool1d(2, stride=0), ValueError, r'MaxPool1d: stride = \(0,\) must be 1 or more'),
    (lambda: nn.MaxPool3d(3, padding=-1), ValueError, r'MaxPool3d: padding = \(-1, -1, -1\) must be 0 or more'),
    (lambda: nn.MaxPool2d(3, dilation=0), ValueError, r'MaxPool2d: dilation = \(0, 0\) must be 1 or more'),
    (lambda: nn.AvgPool2d((2, -1)), ValueError, r'AvgPool2d: kernel_size = \(2, -1\) must be 1 or more'),
    (lambda: nn.AvgPool1d(2.0), ValueError, r'AvgPool1d: kernel_size = 2\.0; expected an int or 1 ints'),
    (lambda: nn.AdaptiveAvgPool2d(0), ValueError, r'AdaptiveAvgPool2d: output_size = \(0, 0\) must be 1 or more'),
    (lambda: nn.AdaptiveMaxPool1d(-3), ValueError, r'AdaptiveMaxPool1d: output_size = \(-3,\) must be 1 or more'),
    (lambda: nn.Softmax(True), TypeError, r'Softmax: dim must be an int, got True'),
]


@pytest.mark.parametrize('make,error,match', BAD_COUNTS)
def test_bad_counts_and_sizes_are_named(make, error, match):
    with pytest.raises(error, match=match):
        make()


def test_sum_into_of_another_shape():
    op = nn.Conv2d(2, 4, 3, padding=1)
    with pytest.raises(ValueError, match=r'sum_into has shape \(1, 4, 5, 5\), the output\'s is \(1, 4, 6, 6\)'):
        op(randn(1, 2, 6, 6), sum_into=torch.zeros(1, 4, 5, 5))


def test_sum_into_the_input_itself():
    op = nn.Conv2d(16, 16, 3, padding=1)
    x = randn(1, 16, 5, 5)
    xb = blockdnn.to_blocked(x)
    buf = randn(600)
    overlapping = (buf[:400].view(1, 16, 5, 5), buf[200:].view(1, 16, 5, 5))
    for a, r in ((xb, xb), (x, x), overlapping):
        with pytest.raises(ValueError, match=r'Conv2d\(16, 16.*sum_into shares memory with the input'):
            op(a, sum_into=r)


def test_adaptive_pool_with_uneven_windows():
    with pytest.raises(ValueError, match='input size 7 .* not a multiple of output size 2'):
        nn.AdaptiveAvgPool2d(2)(randn(1, 3, 7, 8))


def test_avg_pool_ceil_mode_past_the_padding():
    x = randn(1, 2, 6, 6)
    with pytest.raises(ValueError, match='count_include_pad=False'):
        nn.AvgPool2d(3, 2, 0, ceil_mode=True)(x)


def test_from_torch_refusals_name_the_type():
    with pytest.raises(TypeError, match='Upsample'):
        nn.from_torch(torch.nn.Upsample(scale_factor=2))
    with pytest.raises(TypeError, match='expected a torch.nn.Conv2d, got Conv1d'):
        nn.Conv2d.from_torch(torch.nn.Conv1d(2, 2, 1))
    with pytest.raises(TypeError, match='activation Softplus'):
        nn.Conv2d.from_torch(torch.nn.Conv2d(2, 2, 1), activation=torch.nn.Softplus())
    with pytest.raises(ValueError, match='track_running_stats=False'):
        nn.Conv2d.from_torch(torch.nn.Conv2d(2, 2, 1), torch.nn.BatchNorm2d(2, track_running_stats=False))
