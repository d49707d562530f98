# Shared fixtures for the tests of the Python module. Run with the built module on the path:
#   PYTHONPATH=build/python /usr/bin/python3 -m pytest -q python/tests
# (ctest -L python does exactly this).
import numpy as np
import pytest

import ltt


@pytest.fixture
def pool():
    """A synthetic pool of 2000 trajectories: higher score, less likely over budget (the
    README demo's model), with returns that favour unsafe trajectories."""
    rng = np.random.default_rng(7)
    N = 2000
    score = rng.random(N)
    unsafe = rng.random(N) < 1.6 * (1.0 - score) ** 2
    episodic_return = 100.0 * rng.random(N) + 50.0 * unsafe
    return score, unsafe, episodic_return


def pytest_report_header(config):
    return f"ltt module: {ltt.__file__} (version {ltt.__version__})"
