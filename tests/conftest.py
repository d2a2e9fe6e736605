"""Shared fixtures: PyTorch (skipped with a reason where it is not installed) and seeds."""

import numpy as np
import pytest

import minigrad as mg


@pytest.fixture(scope="session")
def torch():
    """PyTorch, the reference minigrad is compared with."""
    torch = pytest.importorskip(
        "torch", reason="PyTorch is not installed: parity checks need `pip install torch==2.13.0`")
    torch.set_num_threads(1)
    return torch


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.fixture(autouse=True)
def _grad_mode_is_restored():
    yield
    assert mg.is_grad_enabled(), "a test left grad mode off"
