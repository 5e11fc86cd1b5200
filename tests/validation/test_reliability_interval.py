"""Checkpoint-interval theory: test vectors of anchors section 3.4 (Young 1974, Daly 2006,
Saxena et al. 2024) and the numerical optimum of Daly's complete model."""

from __future__ import annotations

import pytest

from clustertwin.reliability import interval as iv

# delta, M, R (minutes) -> Young, Daly HO, ETTR_Daly at Daly HO, NVIDIA availability optimum
VECTORS = [
    (6, 300, 0, 60.00, 56.07, 0.8131, 66.30),
    (5, 185.585, 10, 43.08, 39.81, 0.7443, 49.51),
    (10 / 60, 185.585, 10, 7.865, 7.754, 0.9080, 8.243),
    (1, 110.77, 5, 14.88, 14.23, 0.8331, 16.25),
]


@pytest.mark.parametrize("d,m,r,young,daly,ettr,nv", VECTORS,
                         ids=[f"YD-{i + 1} delta={v[0]:.3g} M={v[1]} R={v[2]} (to the printed digits)"
                              for i, v in enumerate(VECTORS)])
def test_vectors(d, m, r, young, daly, ettr, nv):
    assert iv.young(d, m) == pytest.approx(young, abs=0.01)
    assert iv.daly(d, m) == pytest.approx(daly, abs=0.01)
    assert iv.ettr_daly(iv.daly(d, m), d, m, r) == pytest.approx(ettr, abs=1e-4)
    assert iv.nvidia_availability(d, m, r) == pytest.approx(nv, abs=0.01)


def test_daly_first_order():
    """Daly first order sqrt(2 delta (M + R)): 44.22 min for delta 5, M 185.585, R 10."""
    assert iv.daly_first_order(5, 185.585, 10) == pytest.approx(44.22, abs=0.01)


def test_yd5_dump_longer_than_2m():
    """YD-5: delta = 300 >= 2M = 200: Daly HO = M = 100; Young 244.9; ETTR 0.0177."""
    assert iv.daly(300, 100) == 100
    assert iv.young(300, 100) == pytest.approx(244.9, abs=0.05)
    assert iv.ettr_daly(100, 300, 100, 5) == pytest.approx(0.0177, abs=1e-4)


@pytest.mark.parametrize("d,m,r,young,daly,ettr,nv", VECTORS,
                         ids=[f"YD-ARGMAX-{i + 1} argmax ETTR_Daly == Daly HO +-0.05 min"
                              for i in range(len(VECTORS))])
def test_numerical_optimum_equals_daly(d, m, r, young, daly, ettr, nv):
    assert iv.numerical_optimum(d, m, r) == pytest.approx(iv.daly(d, m), abs=0.05)


def test_textbook_example():
    """delta = 0.1 h, M = 5 h: Young 1.0 h, Daly HO 0.934 h."""
    assert iv.young(0.1, 5) == pytest.approx(1.0)
    assert iv.daly(0.1, 5) == pytest.approx(0.934, abs=5e-4)
