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
