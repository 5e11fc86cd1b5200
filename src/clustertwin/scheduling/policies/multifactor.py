"""Slurm-style multifactor priority (slurm.schedmd.com/priority_multifactor.html).

priority = w_age * age + w_fairshare * F + w_size * size + w_qos * qos, each factor in [0, 1]:

* age = min(wait / max_age_s, 1);
* F = 2 ** (-U / S), the classic fair-share factor, with U the team's share of decayed GPU
  usage (half-life ``half_life_s``) and S its normalized configured share;
* size = job GPUs / cluster GPUs (Slurm's default favours large jobs);
* qos = QoS level / highest level.

Defaults follow Slurm where Slurm has one: PriorityMaxAge 7 days, PriorityDecayHalfLife
7 days, PriorityCalcPeriod 5 minutes. Slurm's default weights are all 0 (which is FIFO);
ours are an assumption that makes fair share dominate and are settable, e.g.
``multifactor:fairshare=5000,age=100``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from clustertwin.scheduling.policies.base import ORDERS, Order

DAY_S = 86400.0


@ORDERS.register("multifactor")
class Multifactor(Order):
    name = "multifactor"
    dynamic = True
    calc_period_s = 300.0
    age = 1000.0
    fairshare = 10000.0
    size = 1000.0
    qos = 1000.0
    max_age_s = 7 * DAY_S
    half_life_s = 7 * DAY_S
    #: settable parameters and their bounds. Slurm keeps each weight and their sum in 32 bits
    #: (4.29e9), so four weights of at most 1e8 stay inside; durations from a minute to a year.
    PARAMS = {"age": (0.0, 1e8), "fairshare": (0.0, 1e8), "size": (0.0, 1e8),
              "qos": (0.0, 1e8), "max_age_s": (60.0, 365 * DAY_S),
              "half_life_s": (60.0, 365 * DAY_S), "calc_period_s": (1.0, DAY_S)}

    def fair_share_factor(self, ctx: Any) -> np.ndarray:
        usage = ctx.team_usage
        tot = usage.sum()
        u = usage / tot if tot > 0 else np.zeros_like(usage)
        return np.power(2.0, -u / ctx.shares)

    def team_factor(self, ctx: Any, shares: list[float], team: int) -> float:
        """One team's :meth:`fair_share_factor`, bit for bit, from the engine's usage list
        (``ctx.usage``): below 8 teams the sum and the divisions in Python, which give NumPy's
        doubles (its pairwise sum adds fewer than 8 numbers one by one from 0.0), and the power
        by NumPy's own ``power`` loop on the one number (the loop computes each element alone,
        and its vector form differs from Python's ``**`` in the last bit on some machines);
        with 8 teams or more NumPy does it all."""
        usage = ctx.usage
        if len(usage) >= 8:
            return float(self.fair_share_factor(ctx)[team])
        tot = 0.0
        for x in usage:
            tot += x
        x = -(usage[team] / tot) / shares[team] if tot > 0 else -0.0 / shares[team]
        return float(np.power(2.0, x))

    def key_one(self, ctx: Any, job: int, now: float) -> float:
        """:meth:`keys` of one job in Python floats, bit for bit the same number: the same
        operations in the same order on the same doubles. A team's fair-share factor is
        computed once per usage state (``ctx.usage`` is replaced whenever usage changes) and
        the per-job columns once per run."""
        cache = ctx.__dict__.get("_multifactor")
        if cache is None or cache[0] is not self:
            w = ctx.w
            qmax = max(int(w.qos.max()), 1) if len(w) else 1
            cache = (self, w.submit_s.tolist(), w.team.tolist(), w.gpus_milli.tolist(),
                     w.qos.tolist(), qmax, max(ctx.capacity_milli, 1), [None, {}],
                     np.asarray(ctx.shares, dtype=np.float64).tolist())
            ctx._multifactor = cache
        _, sub, team, milli, qos, qmax, cap, fs_memo, shares = cache
        if fs_memo[0] is not ctx.usage:
            fs_memo[0] = ctx.usage
            fs_memo[1] = {} if len(ctx.usage) < 8 else \
                dict(enumerate(self.fair_share_factor(ctx).tolist()))
        t = team[job]
        fs = fs_memo[1].get(t)
        if fs is None:
            fs = fs_memo[1][t] = self.team_factor(ctx, shares, t)
        age = min(max((now - sub[job]) / self.max_age_s, 0.0), 1.0)
        size = min(milli[job] / cap, 1.0)
        prio = (self.age * age + self.fairshare * fs + self.size * size
                + self.qos * (qos[job] / qmax))
        return -prio

    def key_fn(self, ctx: Any) -> Callable[[int, float], float]:
        """:meth:`key_one` for one run, bit for bit, with less work per call: the size and QoS
        terms of every job are computed once (the same products of the same doubles: NumPy
        divides and multiplies as Python does), and a team's fair-share factor once per usage
        state, by NumPy's ``power`` loop on one-element arrays (the loop
        :meth:`fair_share_factor` runs; each element is computed alone). With 8 teams or more,
        :meth:`key_one` itself."""
        w = ctx.w
        nteams = len(ctx.usage)
        if nteams >= 8 or not len(w):
            return super().key_fn(ctx)
        sub, team = ctx.submit, ctx.team
        fixed, fixed_qos = (a.tolist() for a in self.fixed_terms(ctx))
        shares = np.asarray(ctx.shares, dtype=np.float64).tolist()
        w_age, w_fs, max_age = self.age, self.fairshare, self.max_age_s
        two, x, out = np.full(1, 2.0), np.zeros(1), np.zeros(1)
        power = np.power
        seen: list[float] = []  # the usage list the factors are for (replaced when it changes)
        factors: list[float | None] = []

        def key(job: int, now: float) -> float:
            nonlocal seen, factors
            usage = ctx.usage
            if usage is not seen:
                seen, factors = usage, [None] * nteams
            t = team[job]
            fs = factors[t]
            if fs is None:
                tot = 0.0
                for u in usage:
                    tot += u
                x[0] = -(usage[t] / tot) / shares[t] if tot > 0 else -0.0 / shares[t]
                power(two, x, out)
                fs = factors[t] = out.item()
            age = (now - sub[job]) / max_age  # min(max(age, 0.0), 1.0), the same double
            age = 0.0 if age < 0.0 else 1.0 if age > 1.0 else age
            return -(w_age * age + w_fs * fs + fixed[job] + fixed_qos[job])

        return key

    def keys(self, ctx: Any, jobs: np.ndarray, now: float) -> np.ndarray:
        w = ctx.w
        age = np.clip((now - w.submit_s[jobs]) / self.max_age_s, 0.0, 1.0)
        fs = self.fair_share_factor(ctx)[w.team[jobs]]
        size, qos = self.fixed_terms(ctx)
        prio = self.age * age + self.fairshare * fs + size[jobs] + qos[jobs]
        return -prio

    def fixed_terms(self, ctx: Any) -> tuple[np.ndarray, np.ndarray]:
        """The weighted size and QoS terms of every job of the run, which do not change with
        time: ``size * min(gpus / cluster GPUs, 1)`` and ``qos * level / highest level``,
        computed once per run (kept on ``ctx``)."""
        cached = ctx.__dict__.get("_multifactor_fixed")
        if cached is None or cached[0] is not self:
            w = ctx.w
            qmax = max(int(w.qos.max()), 1) if len(w) else 1
            size = self.size * np.minimum(w.gpus_milli / max(ctx.capacity_milli, 1), 1.0)
            cached = ctx._multifactor_fixed = (self, size, self.qos * (w.qos / qmax))
        return cached[1], cached[2]
