"""Checkpoint-interval theory in closed form (any consistent time unit, minutes in the tests).

Symbols: ``delta`` blocking checkpoint cost, ``mtbf`` job mean time between failures,
``restart`` time lost per failure before training resumes, ``tau`` compute between
checkpoints. Every formula assumes Poisson (exponential) failures.

- Young, CACM 17(9) 1974: ``tau = sqrt(2 delta M)``.
- Daly, FGCS 22(3) 2006: first order ``sqrt(2 delta (M + R))``; higher order (Eq. 37)
  ``sqrt(2 delta M) [1 + sqrt(delta/2M)/3 + (delta/2M)/9] - delta`` for ``delta < 2M``, else ``M``;
  complete model of the expected wall time, whose ratio to the useful time is ``ettr_daly``.
- Saxena et al. (NVIDIA), arXiv 2410.18124: availability optimum
  ``delta + sqrt(2 (M + R) delta + delta^2)``.
- Kokolis et al., arXiv 2410.21680: first-order E[ETTR]
  ``(1 - (R + tau/2)/M) / (1 + delta/tau)``.
"""

from __future__ import annotations

import math


def young(delta: float, mtbf: float) -> float:
    return math.sqrt(2.0 * delta * mtbf)


def daly_first_order(delta: float, mtbf: float, restart: float = 0.0) -> float:
    return math.sqrt(2.0 * delta * (mtbf + restart))


def daly(delta: float, mtbf: float) -> float:
    """Daly's higher-order optimum (Eq. 37); ``mtbf`` when the dump takes at least 2M."""
    if delta >= 2.0 * mtbf:
        return mtbf
    x = delta / (2.0 * mtbf)
    return math.sqrt(2.0 * delta * mtbf) * (1.0 + math.sqrt(x) / 3.0 + x / 9.0) - delta


def nvidia_availability(delta: float, mtbf: float, restart: float = 0.0) -> float:
    return delta + math.sqrt(2.0 * (mtbf + restart) * delta + delta * delta)


def ettr_daly(tau: float, delta: float, mtbf: float, restart: float = 0.0) -> float:
    """Useful time / expected wall time in Daly's complete model (failures may also strike
    during checkpoints and restarts)."""
    if tau <= 0:
        return 0.0
    return math.exp(-restart / mtbf) * (tau / mtbf) / math.expm1((tau + delta) / mtbf)


def ettr_kokolis(tau: float, delta: float, mtbf: float, restart: float = 0.0) -> float:
    """First-order expected ETTR (small-loss approximation; ignores failures during restart)."""
    return (1.0 - (restart + tau / 2.0) / mtbf) / (1.0 + delta / tau)


def numerical_optimum(delta: float, mtbf: float, restart: float = 0.0,
                      lo: float | None = None, hi: float | None = None, tol: float = 1e-6) -> float:
    """The ``tau`` maximising :func:`ettr_daly` by golden-section search (the function is
    unimodal in ``tau``). Default bracket: ``[1e-6 M, 5 M]``."""
    a = lo if lo is not None else 1e-6 * mtbf
    b = hi if hi is not None else 5.0 * mtbf
    g = (math.sqrt(5.0) - 1.0) / 2.0
    c, d = b - g * (b - a), a + g * (b - a)
    fc, fd = ettr_daly(c, delta, mtbf, restart), ettr_daly(d, delta, mtbf, restart)
    while b - a > tol * max(1.0, abs(a)):
        if fc >= fd:
            b, d, fd = d, c, fc
            c = b - g * (b - a)
            fc = ettr_daly(c, delta, mtbf, restart)
        else:
            a, c, fc = c, d, fd
            d = a + g * (b - a)
            fd = ettr_daly(d, delta, mtbf, restart)
    return 0.5 * (a + b)
