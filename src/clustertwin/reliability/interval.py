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

Two-tier schedules (derived here, for :mod:`.tiers`): a local checkpoint every ``tau``, every
``k``-th one also to the file system; a share ``q`` of failures loses the local tier and
restores from the file system. :func:`two_tier_loss` is the exact expected lost compute per
failure (no stalls or restarts, Poisson failures); :func:`two_tier_young` and
:func:`ettr_two_tier` extend Young and Kokolis with the mean stall ``((k-1) delta_f + delta_s)/k``
and the mean loss, to first order ``(1 - q) tau/2 + q k tau/2``.
"""

from __future__ import annotations

import math

import numpy as np


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


def mean_mod_loss(interval: float, mtbf: float) -> float:
    """E[X mod L] for X ~ Exp(mean M): the expected compute lost since the last checkpoint
    when checkpoints come every ``L`` and nothing else interrupts (``L/2`` for ``L << M``)."""
    if interval <= 0:
        return 0.0
    return mtbf - interval / math.expm1(interval / mtbf)


def two_tier_loss(tau: float, every: int, q: float, mtbf: float) -> float:
    """Expected lost compute per failure for a local checkpoint every ``tau`` and a file-system
    one every ``every`` local ones, when a share ``q`` of failures loses the local tier.

    Exact for Poisson failures without stalls or restarts: the state is the number ``j`` of
    local checkpoints since the last file-system one at a resume; a failure after ``X`` of
    compute moves ``j`` on by ``floor(X/tau)`` (local restore, loss ``X mod tau``) or back to
    0 (file-system restore, loss ``(j tau + X) mod (k tau)``). Averaged over the stationary
    distribution of ``j``."""
    k = max(1, int(every))
    m_loc = mean_mod_loss(tau, mtbf)
    if q <= 0.0:
        return m_loc
    big = k * tau
    m_big = mean_mod_loss(big, mtbf)
    c = np.arange(k) * tau
    b = big - c
    e_b = np.exp(-b / mtbf)
    pfs = c * (1.0 - e_b) + mtbf - (b + mtbf) * e_b + e_b * m_big
    if k == 1 or q >= 1.0:
        pi = np.zeros(k)
        pi[0] = 1.0
    else:
        a = math.exp(-tau / mtbf)
        d = (np.arange(k)[None, :] - np.arange(k)[:, None]) % k
        trans = (1.0 - q) * (1.0 - a) * a ** d / (1.0 - a ** k)
        trans[:, 0] += q
        w, v = np.linalg.eig(trans.T)
        pi = np.real(v[:, np.argmin(np.abs(w - 1.0))])
        pi = pi / pi.sum()
    return float((1.0 - q) * m_loc + q * float(pi @ pfs))


def two_tier_young(delta_f: float, delta_s: float, every: int, mtbf: float, q: float) -> float:
    """First-order optimal local interval for a fixed ``every``:
    ``sqrt(2 dbar M / ((1 - q) + q k))`` with ``dbar = ((k-1) delta_f + delta_s)/k``; Young's
    formula when ``k = 1`` and ``q = 1``."""
    k = max(1, int(every))
    dbar = ((k - 1) * delta_f + delta_s) / k
    return math.sqrt(2.0 * dbar * mtbf / ((1.0 - q) + q * k))


def ettr_two_tier(tau: float, every: int, stalls: tuple[float, float], mtbf: float, q: float,
                  restarts: tuple[float, float] = (0.0, 0.0)) -> float:
    """First-order expected ETTR of a two-tier schedule (Kokolis's form with the two-tier mean
    stall, mean restart and :func:`two_tier_loss`). ``stalls``: (local, file-system) stall of
    one checkpoint; ``restarts``: (from the local copy, from the file system)."""
    delta_f, delta_s = stalls
    restart_local, restart_pfs = restarts
    k = max(1, int(every))
    dbar = ((k - 1) * delta_f + delta_s) / k
    rbar = (1.0 - q) * restart_local + q * restart_pfs
    loss = two_tier_loss(tau, k, q, mtbf)
    return (1.0 - (rbar + loss) / mtbf) / (1.0 + dbar / tau)


def refine_log_peak(x: np.ndarray, y: np.ndarray) -> float:
    """Vertex of the parabola through the best grid point and its neighbours (log axis);
    the grid point itself when the best sits at an edge or the parabola opens upward."""
    i = int(np.argmax(y))
    if i == 0 or i == len(x) - 1:
        return float(x[i])
    lx = np.log(x[i - 1:i + 2])
    a, b, _ = np.polyfit(lx, y[i - 1:i + 2], 2)
    if a >= 0:
        return float(x[i])
    return float(np.exp(np.clip(-b / (2 * a), lx[0], lx[2])))
