"""The Python examples (examples/python/*.py) run and agree with PyTorch: each script checks its
own result and exits non-zero on a mismatch. They run as a user runs them, in a fresh
/usr/bin/python3 that finds blockdnn on the PYTHONPATH this test has."""
import os
import pathlib
import subprocess

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / 'examples' / 'python'
SCRIPTS = sorted(p.name for p in EXAMPLES.glob('*.py'))


def test_the_seeds_examples_are_there():
    for name in ('blocked_round_trip.py', 'conv2d_on_stream.py', 'conv3d_blocked.py', 'copy_on_stream.py',
                 'resnet18.py', 'rnn_on_stream.py', 'two_streams.py'):
        assert name in SCRIPTS


@pytest.mark.parametrize('script', SCRIPTS)
def test_example_runs_and_matches_pytorch(script):
    env = dict(os.environ)
    env['PYTHONDONTWRITEBYTECODE'] = '1'
    # The limit only ends a hung run; the examples take seconds.
    r = subprocess.run(['/usr/bin/python3', str(EXAMPLES / script)], env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, f'{script} exited {r.returncode}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr}'


def test_the_readme_python_block_runs():
    """The README's "From Python" code block, as a user pastes it (with a smaller first tensor)."""
    readme = (EXAMPLES.parents[1] / 'README.md').read_text()
    block = readme.split('## From Python', 1)[1].split('```python\n', 1)[1].split('```', 1)[0]
    assert 'torch.randn(32, 64, 56, 56)' in block
    env = {}
    exec(block.replace('torch.randn(32, 64, 56, 56)', 'torch.randn(2, 64, 20, 20)'), env)
    assert env['logits'].shape == (1, 1000) and env['out'].shape == (7, 3, 20)
