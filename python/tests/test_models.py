"""blockdnn.from_torch against the torch models it converts: torchvision's ResNets, Sequential
nets of every convertible layer (1-D, 2-D, 3-D), and the errors for what it cannot convert."""
import threading

import pytest
import torch
import torchvision

import blockdnn

torch.manual_seed(0)


def randomise_batchnorm(model, x):
    """Batch-norm parameters drawn at random and running statistics gathered in training mode
    from x, so each channel has its own mean and variance and folding them is exercised; then
    eval mode."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.5, 0.5)
                m.reset_running_stats()
                m.momentum = None  # the average over the passes
        model.train()
        model(x)
    return model.eval()


def check(model, x, rtol=1e-4):
    """The converted model's result against the torch model's, in eval mode: elementwise within
    rtol of the largest magnitude (sums of thousands of f32 products round differently)."""
    with torch.no_grad():
        ref = model(x)
    got = blockdnn.from_torch(model)(x)
    assert got.shape == ref.shape
    assert got.dtype == torch.float32
    torch.testing.assert_close(got, ref, rtol=rtol, atol=rtol * ref.abs().max().item())
    return got


@pytest.mark.parametrize('name,shape', [
    ('resnet18', (2, 3, 64, 64)),
    ('resnet50', (2, 3, 64, 64)),
    ('resnext50_32x4d', (1, 3, 64, 64)),
    ('resnet18', (1, 3, 224, 224)),
    ('resnet50', (1, 3, 224, 224)),
])
def test_torchvision_resnet(name, shape):
    torch.manual_seed(1)
    model = getattr(torchvision.models, name)()
    randomise_batchnorm(model, torch.randn(2, 3, 64, 64))
    check(model, torch.randn(*shape), rtol=1e-3)


def test_residual_block_leaves_its_input_alone():
    # A BasicBlock without downsample adds onto its input: the model works on its own copy.
    block = torchvision.models.resnet.BasicBlock(16, 16)
    model = randomise_batchnorm(torch.nn.Sequential(block, torchvision.models.resnet.BasicBlock(16, 16)),
                                torch.randn(2, 16, 9, 9))
    x = torch.randn(2, 16, 9, 9)
    x0 = x.clone()
    check(model, x)
    assert torch.equal(x, x0)


def test_bottleneck_with_downsample():
    down = torch.nn.Sequential(torch.nn.Conv2d(24, 32, 1, stride=2, bias=False), torch.nn.BatchNorm2d(32))
    model = torch.nn.Sequential(torchvision.models.resnet.Bottleneck(24, 8, stride=2, downsample=down))
    randomise_batchnorm(model, torch.randn(3, 24, 11, 13))
    check(model, torch.randn(3, 24, 11, 13))


def test_sequential_2d():
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 20, 3, padding=1),
        torch.nn.BatchNorm2d(20),
        torch.nn.ReLU(),
        torch.nn.MaxPool2d(3, stride=2, padding=1),
        torch.nn.Conv2d(20, 24, 3, stride=2, dilation=2, padding=2, bias=False),
        torch.nn.ReLU(inplace=True),
        torch.nn.BatchNorm2d(24),  # after a ReLU: its own op
        torch.nn.Conv2d(24, 32, 1, groups=8),
        torch.nn.BatchNorm2d(32),  # folded, no ReLU after it
        torch.nn.LeakyReLU(0.1),
        torch.nn.AvgPool2d(2, count_include_pad=False),
        torch.nn.Sequential(torch.nn.Conv2d(32, 32, 3, padding=1, groups=32), torch.nn.Tanh()),
        torch.nn.AdaptiveAvgPool2d((1, 1)),
        torch.nn.Flatten(),
        torch.nn.Dropout(0.5),
        torch.nn.Linear(32, 17),
        torch.nn.Sigmoid(),
        torch.nn.Linear(17, 5),
        torch.nn.Softmax(dim=1),
    )
    randomise_batchnorm(model, torch.randn(4, 3, 23, 19))
    check(model, torch.randn(2, 3, 23, 19))
    check(model, torch.randn(1, 3, 16, 16))  # another shape: ops made for it


def test_sequential_1d():
    model = torch.nn.Sequential(
        torch.nn.Conv1d(5, 18, 5, padding=2),
        torch.nn.BatchNorm1d(18),
        torch.nn.ReLU(),
        torch.nn.MaxPool1d(2),
        torch.nn.Conv1d(18, 16, 3, stride=2),
        torch.nn.ELU(),
        torch.nn.AvgPool1d(3, stride=1, padding=1),
        torch.nn.BatchNorm1d(16),
        torch.nn.Identity(),
        torch.nn.Flatten(),
        torch.nn.Linear(16 * 7, 10),
        torch.nn.ReLU(),
    )
    randomise_batchnorm(model, torch.randn(4, 5, 31))
    check(model, torch.randn(3, 5, 31))


def test_sequential_3d():
    model = torch.nn.Sequential(
        torch.nn.Conv3d(2, 16, 3, padding=1, bias=False),
        torch.nn.BatchNorm3d(16),
        torch.nn.ReLU(),
        torch.nn.MaxPool3d(2),
        torch.nn.Conv3d(16, 17, (1, 3, 3), padding=(0, 1, 1)),
        torch.nn.ReLU(),
        torch.nn.AvgPool3d(2),
        torch.nn.BatchNorm3d(17),
        torch.nn.Dropout3d(),
        torch.nn.Flatten(),
        torch.nn.Linear(17 * 2 * 2 * 2, 6),
    )
    randomise_batchnorm(model, torch.randn(3, 2, 9, 8, 8))
    check(model, torch.randn(2, 2, 9, 8, 8))


@pytest.mark.parametrize('dim', [1, -1])
def test_softmax_and_global_pools_on_blocked_activations(dim):
    check(torch.nn.Sequential(torch.nn.Conv2d(3, 20, 3), torch.nn.Softmax(dim=dim)).eval(), torch.randn(2, 3, 9, 7))
    check(torch.nn.Sequential(torch.nn.Conv1d(3, 20, 3), torch.nn.AdaptiveAvgPool1d(1), torch.nn.Flatten(),
                              torch.nn.Linear(20, 4), torch.nn.GELU()).eval(), torch.randn(2, 3, 9))
    check(torch.nn.Sequential(torch.nn.Conv3d(3, 20, 3), torch.nn.AdaptiveMaxPool3d(1), torch.nn.Flatten(),
                              torch.nn.Linear(20, 4), torch.nn.Softmax(dim=dim)).eval(), torch.randn(2, 3, 5, 6, 7))


def test_a_single_layer_is_a_model():
    check(torch.nn.Conv2d(4, 8, 3).eval(), torch.randn(1, 4, 6, 6))
    check(torch.nn.Linear(7, 3).eval(), torch.randn(5, 7))


@pytest.mark.parametrize('last', [torch.nn.Conv2d(8, 5, 3),
                                  torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(8 * 6 * 6, 5))])
def test_results_of_earlier_calls_stay(last):
    # Each call's result is its own memory, whatever the ops reuse between calls.
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.ReLU(), last).eval()
    converted = blockdnn.from_torch(model)
    xs = [torch.randn(2, 3, 8, 8) for _ in range(3)]
    ys = [converted(x) for x in xs]
    with torch.no_grad():
        for x, y in zip(xs, ys):
            torch.testing.assert_close(y, model(x), rtol=1e-4, atol=1e-5)


def test_input_that_requires_grad():
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU()).eval()
    x = torch.randn(1, 3, 5, 5, requires_grad=True)
    y = blockdnn.from_torch(model)(x)
    assert not y.requires_grad
    with torch.no_grad():
        torch.testing.assert_close(y, model(x), rtol=1e-4, atol=1e-5)


def test_error_names_type_and_path():
    model = torch.nn.Sequential()
    model.add_module('stem', torch.nn.Conv2d(3, 8, 3))
    model.add_module('features', torch.nn.Sequential(torch.nn.ReLU(), torch.nn.Identity(), torch.nn.Conv2d(8, 8, 1),
                                                     torch.nn.ConvTranspose2d(8, 8, 3)))
    with pytest.raises(TypeError, match=r'^features\.3: cannot convert torch\.nn\.modules\.conv\.ConvTranspose2d$'):
        blockdnn.from_torch(model.eval())


def test_error_for_unknown_and_subclassed_modules():
    class Custom(torch.nn.Module):
        def forward(self, x):
            return x * 2

    class MyConv(torch.nn.Conv2d):
        def forward(self, x):
            return super().forward(x) + 1

    with pytest.raises(TypeError, match=r"^\(the model\): cannot convert test_models\..*Custom"):
        blockdnn.from_torch(Custom().eval())
    with pytest.raises(TypeError, match=r'^1: cannot convert test_models\..*MyConv$'):
        blockdnn.from_torch(torch.nn.Sequential(torch.nn.ReLU(), MyConv(3, 3, 1)).eval())


def test_batchnorm_without_running_stats_uses_the_batch():
    # Not folded: in eval mode too, torch normalises by the batch's own statistics.
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.BatchNorm2d(8, track_running_stats=False),
                                torch.nn.ReLU()).eval()
    check(model, torch.randn(4, 3, 7, 7))


def test_error_in_a_residual_block():
    block = torchvision.models.resnet.BasicBlock(8, 8)
    block.bn2 = torch.nn.BatchNorm2d(8, track_running_stats=False)
    model = torch.nn.Sequential(torch.nn.Sequential(block)).eval()
    with pytest.raises(TypeError, match=r'^0\.0\.bn2: cannot convert .*BatchNorm2d: .*running statistics'):
        blockdnn.from_torch(model)
    resnet = torchvision.models.resnet18()
    resnet.layer2[1].relu = torch.nn.ReLU6()
    with pytest.raises(TypeError, match=r'^layer2\.1\.relu: cannot convert torch\.nn\.modules\.activation\.ReLU6'):
        blockdnn.from_torch(resnet.eval())


def test_lstm_after_a_linear():
    # A Sequential passes the Linear's output to the LSTM, whose result is PyTorch's tuple.
    model = torch.nn.Sequential(torch.nn.Linear(7, 5), torch.nn.Tanh(),
                                torch.nn.LSTM(5, 10, num_layers=2, bidirectional=True)).eval()
    x = torch.randn(6, 3, 7)
    with torch.no_grad():
        out, (h, c) = model(x)
    got, (got_h, got_c) = blockdnn.from_torch(model)(x)
    for a, b in ((got, out), (got_h, h), (got_c, c)):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize('cls', [torch.nn.RNN, torch.nn.GRU])
def test_recurrent_layer_as_the_model(cls):
    model = cls(4, 6, batch_first=True).eval()
    x = torch.randn(2, 5, 4)
    with torch.no_grad():
        out, h = model(x)
    got, got_h = blockdnn.from_torch(model)(x)
    torch.testing.assert_close(got, out, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(got_h, h, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize('cls', [torch.nn.RNN, torch.nn.LSTM, torch.nn.GRU])
def test_recurrent_model_takes_the_initial_state(cls):
    model = cls(4, 6, num_layers=2, bidirectional=True).eval()
    x = torch.randn(5, 3, 4)
    h0 = torch.randn(4, 3, 6)
    hx = (h0, torch.randn(4, 3, 6)) if cls is torch.nn.LSTM else h0
    with torch.no_grad():
        out, state = model(x, hx)
    got, got_state = blockdnn.from_torch(model)(x, hx)
    torch.testing.assert_close(got, out, rtol=1e-4, atol=1e-5)
    for a, b in zip(got_state if cls is torch.nn.LSTM else [got_state], state if cls is torch.nn.LSTM else [state]):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)


def test_only_a_lone_recurrent_layer_takes_hx():
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.GRU(4, 6)).eval()
    with pytest.raises(TypeError, match='^Sequential: hx is taken only by a model converted from an RNN'):
        blockdnn.from_torch(model)(torch.randn(5, 3, 4), torch.zeros(1, 3, 6))


def test_error_for_forward_hooks():
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU()).eval()
    hook = model[0].register_forward_hook(lambda mod, i, o: o * 2)
    with pytest.raises(TypeError, match=r'^0: cannot convert torch.nn.modules.conv.Conv2d: it has forward hooks'):
        blockdnn.from_torch(model)
    hook.remove()
    hook = model.register_forward_pre_hook(lambda mod, i: i)
    with pytest.raises(TypeError, match=r'^\(the model\): cannot convert .*Sequential: it has forward hooks'):
        blockdnn.from_torch(model)
    hook.remove()
    blockdnn.from_torch(model)


def test_error_for_a_tuple_in_the_middle():
    model = torch.nn.Sequential(torch.nn.GRU(4, 6), torch.nn.ReLU()).eval()
    with pytest.raises(TypeError, match=r'^0: its output is a tuple'):
        blockdnn.from_torch(model)


def test_on_a_stream_from_another_thread():
    # Converted (and its ops made) on this thread, then queued on a stream by another.
    torch.manual_seed(2)
    model = torchvision.models.resnet18()
    randomise_batchnorm(model, torch.randn(2, 3, 32, 32))
    converted = blockdnn.from_torch(model)
    x = torch.randn(2, 3, 48, 48)
    want = converted(x)
    got = {}

    def run():
        s = blockdnn.Stream()
        with blockdnn.stream(s):
            y = converted(x)
        s.synchronize()
        got['y'] = y

    t = threading.Thread(target=run)
    t.start()
    t.join()
    torch.testing.assert_close(got['y'], want, rtol=1e-5, atol=1e-5 * want.abs().max().item())
    with torch.no_grad():
        ref = model(x)
    torch.testing.assert_close(want, ref, rtol=1e-3, atol=1e-3 * ref.abs().max().item())


def test_threads_sharing_one_model():
    torch.manual_seed(3)
    model = torchvision.models.resnet18()
    randomise_batchnorm(model, torch.randn(2, 3, 32, 32))
    converted = blockdnn.from_torch(model)
    xs = [torch.randn(1 + k % 2, 3, 32, 32) for k in range(4)]
    with torch.no_grad():
        refs = [model(x) for x in xs]
    bad = []

    def run(k):
        for _ in range(5):
            y = converted(xs[k])
            if not torch.allclose(y, refs[k], rtol=1e-3, atol=1e-3 * refs[k].abs().max().item()):
                bad.append(k)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(len(xs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not bad


def test_error_for_training_mode():
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.BatchNorm2d(8))
    with pytest.raises(ValueError, match=r'training mode .*call module\.eval\(\) first'):
        blockdnn.from_torch(model)
    model.eval()
    model[1].train()
    with pytest.raises(ValueError, match=r'^from_torch: 1 is in training mode'):
        blockdnn.from_torch(model)


def test_error_for_non_module_and_bad_input():
    with pytest.raises(TypeError, match='must be a torch.nn.Module, got int'):
        blockdnn.from_torch(3)
    m = blockdnn.from_torch(torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3)).eval())
    with pytest.raises(TypeError, match='^Sequential: x must be a torch tensor, got list'):
        m([1, 2, 3])
    with pytest.raises(TypeError, match=r'^Sequential: x must be a torch tensor, got a blockdnn.Tensor \(nChw'):
        m(blockdnn.to_blocked(torch.randn(1, 3, 5, 5)))
    with pytest.raises(ValueError, match=r'^Sequential: 0: .*expected 3 input channels .*\(1, 4, 5, 5\)'):
        m(torch.randn(1, 4, 5, 5))
    with pytest.raises(ValueError, match=r'^Sequential: x: .*float32'):
        m(torch.randn(1, 3, 5, 5, dtype=torch.float64))
