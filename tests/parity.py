"""Helpers the PyTorch parity tests share."""

import pytest

import minigrad as mg


def errors_of_both(mistake, torch):
    """Run ``mistake(lib)`` with PyTorch and with minigrad; both must raise. Returns
    ``(ours, theirs)``, the two exceptions, for the test to compare."""
    with pytest.raises(Exception) as theirs:
        mistake(torch)
    with pytest.raises(Exception) as ours:
        mistake(mg)
    return ours.value, theirs.value
