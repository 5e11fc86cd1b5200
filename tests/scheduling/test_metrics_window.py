"""Utilization while jobs arrive: the step-function integral over a sub-window."""

import numpy as np
import pytest

from clustertwin.scheduling.metrics import integral_between


@pytest.mark.parametrize("a, b, expected", [(0, 10, 2 * 5 + 4 * 5), (2, 7, 2 * 3 + 4 * 2), (5, 5, 0), (8, 20, 4 * 12)])
def test_integral_between(a, b, expected):
    t = np.array([0.0, 5.0])
    v = np.array([2.0, 4.0])
    assert integral_between(t, v, a, b) == pytest.approx(expected)
