"""A forecast that learns: trained-by P10/P50/P90 for the tokens still to train.

Remaining wall-clock time = remaining tokens / productive rate + the cost of the interruptions
still to come. Monte Carlo (seeded) over:

- the interruption rate, per wall-clock hour: the conjugate update of a prior centred on the
  plan's rate ``lambda0`` (its expected interruptions over its wall-clock days). The prior is a
  mixture of two Gammas: with weight :data:`PRIOR_TRUST` (one half) one worth :data:`PRIOR_HOURS` hours
  of exposure (``Gamma(lambda0 x H, H)``), else a vague one worth one interruption
  (``Gamma(1, 1 / lambda0)``). Each updates to ``Gamma(alpha + n, beta + hours observed)`` and
  the weights by how likely each made the ``n`` interruptions seen (negative binomial). While
  the run agrees with the plan a few days of data move the rate a little and weeks move it a
  lot (after ``H`` hours the data carry half the weight); a run far off the plan's failure rate
  hands the forecast to the vague part instead of staying anchored to a plan it contradicts;
- the interruptions to come, Poisson with that rate over the remaining wall-clock time;
- the cost of each: drawn from the plan's (restart + work redone, uniform up to twice the
  plan's mean loss) with probability ``k / (k + n)``, else one of the ``n`` costs observed
  (``k = lambda0 x PRIOR_HOURS``, the prior's own count: a Dirichlet-process mixture, so long
  outages seen in the run carry into the forecast);
- the productive rate: lognormal around the recent productive rate with the day-to-day spread
  of the step time over the square root of the days seen, plus the change between the whole
  run's productive rate and the recent one (a run that is drifting is less certain).

The checkpoint interval the reliability model would now recommend is Daly's higher-order
optimum (``clustertwin.reliability.interval.daly``) for the plan's checkpoint stall and the
learnt MTBF (the plan's MTBF scaled by ``lambda0 / lambda``), floored at the plan's minimum.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from clustertwin.reliability.interval import daly
from clustertwin.track.observe import Observed
from clustertwin.track.planview import PlanView
from clustertwin.track.stream import RunHistory, hist_quantile

PRIOR_HOURS = 336.0
#: prior weight of the plan's failure model (the rest: a vague prior at the same mean): even odds,
#: since published interruption rates of like clusters differ by several times (Llama 3
#: 405B: 419 unexpected in 54 days on 16,384 H100s, arXiv 2407.21783 Table 5; OPT-175B: at least
#: 35 manual restarts and over 100 hosts cycled in two months, arXiv 2205.01068)
PRIOR_TRUST = 0.5
TRIALS = 4000
FAN_POINTS = 12


@dataclass(frozen=True)
class Forecast:
    as_of: float
    remaining_tokens: float
    remaining_days: tuple[float, float, float]     #: P10, P50, P90
    trained_by: tuple[float, float, float]         #: epoch seconds
    rate_prior_per_h: float
    rate_post_per_h: float
    rate_post_p5: float
    rate_post_p95: float
    alpha: float                                   #: the plan-centred part of the posterior
    beta: float
    plan_weight: float                             #: its posterior weight
    mtbf_post_h: float
    interval_min: float                            #: recommended now (Daly, learnt MTBF)
    interval_plan_min: float
    productive_tokens_per_s: float
    rate_sigma: float
    fan: tuple[tuple[float, float, float, float], ...]   #: (tokens, t_p10, t_p50, t_p90)
    seed: int


def _day_spread(history: RunHistory) -> float:
    """Relative day-to-day spread of the median step time, over sqrt(days)."""
    meds = [m for h in history.days.values() if (m := hist_quantile(h, 0.5))]
    if len(meds) < 2:
        return 0.05
    return float(np.std(np.log(meds)) / math.sqrt(len(meds)))


def rate_posterior(lam0: float, n: int, hours: float) -> list[tuple[float, float, float]]:
    """``[(weight, alpha, beta)]`` of the two-part Gamma posterior of the interruption rate."""
    parts = [(PRIOR_TRUST, lam0 * PRIOR_HOURS, PRIOR_HOURS), (1.0 - PRIOR_TRUST, 1.0, 1.0 / max(lam0, 1e-12))]
    logs = []
    for w, a, b in parts:  # log of w x negative-binomial P(n | a, b, hours), n! dropped (common)
        logs.append(math.log(w) + math.lgamma(a + n) - math.lgamma(a) + a * math.log(b / (b + hours))
                    + (n * math.log(hours / (b + hours)) if n else 0.0))
    top = max(logs)
    ws = [math.exp(x - top) for x in logs]
    return [(w / sum(ws), a + n, b + hours) for w, (_, a, b) in zip(ws, parts, strict=True)]


def draw_rate(post: list[tuple[float, float, float]], rng: np.random.Generator, size: int) -> np.ndarray:
    """Draws of the rate from the mixture posterior."""
    pick = rng.random(size) < post[0][0]
    return np.where(pick, rng.gamma(post[0][1], 1.0 / post[0][2], size), rng.gamma(post[1][1], 1.0 / post[1][2], size))


def remaining_draws(plan: PlanView, obs: Observed, history: RunHistory, remaining: np.ndarray,
                    rng: np.random.Generator, trials: int = TRIALS) -> tuple[np.ndarray, dict[str, float]]:
    """Wall-clock hours to train each of ``remaining`` tokens: (len(remaining), trials)."""
    lam0 = plan.interruptions_per_h
    n = len(obs.interruptions)
    post = rate_posterior(lam0, n, obs.elapsed_h)
    sigma = math.hypot(_day_spread(history), math.log(obs.productive_tokens_per_s / obs.productive_all_tokens_per_s))
    rate = obs.productive_tokens_per_s * np.exp(rng.normal(0.0, sigma, trials) - sigma * sigma / 2)
    lam = draw_rate(post, rng, trials)
    costs = np.array([x.lost_h for x in obs.interruptions], dtype=float)
    k = lam0 * PRIOR_HOURS
    c_plan = plan.cost_per_interruption_h
    mean_cost = (k * c_plan + costs.sum()) / (k + n) if k + n > 0 else c_plan
    out = np.empty((len(remaining), trials))
    for j, rem in enumerate(remaining):
        work_h = rem / rate / 3600.0
        wall = work_h / np.maximum(0.05, 1.0 - lam * mean_cost)
        events = rng.poisson(lam * wall)
        total = int(events.sum())
        owner = np.repeat(np.arange(trials), events)
        from_plan = rng.random(total) < (k / (k + n) if k + n > 0 else 1.0)
        c = np.where(from_plan,
                     plan.restart_min / 60.0 + rng.random(total) * 2.0 * plan.lost_per_interruption_min / 60.0,
                     costs[rng.integers(0, max(n, 1), total)] if n else 0.0)
        out[j] = work_h + np.bincount(owner, weights=c, minlength=trials)
    info = {"post": post, "sigma": sigma}
    return out, info


def forecast(plan: PlanView, obs: Observed, history: RunHistory, seed: int = 0,
             trials: int = TRIALS) -> Forecast:
    rng = np.random.default_rng(seed)
    remaining = max(0.0, plan.tokens - obs.tokens_done)
    fracs = np.linspace(0.0, 1.0, FAN_POINTS + 1)[1:]
    hours, info = remaining_draws(plan, obs, history, fracs * remaining, rng, trials)
    q = np.percentile(hours, [10, 50, 90], axis=1)  # (3, points)
    end_q = q[:, -1]
    post = info["post"]
    alpha, beta = post[0][1], post[0][2]   # the plan-centred component
    lam0 = plan.interruptions_per_h
    lam_post = sum(w * a / b for w, a, b in post)
    mtbf_post = plan.mtbf_h * (lam0 / lam_post) if lam_post > 0 else math.inf
    delta_min = plan.checkpoint_blocking_s / 60.0
    interval = max(daly(delta_min, mtbf_post * 60.0), plan.min_interval_min) if math.isfinite(mtbf_post) \
        else plan.checkpoint_interval_min
    g = draw_rate(post, np.random.default_rng(seed + 1), 20000)
    fan = tuple((float(obs.tokens_done + f * remaining), *(float(obs.as_of + h * 3600.0) for h in q[:, i]))
                for i, f in enumerate(fracs))
    return Forecast(
        as_of=obs.as_of, remaining_tokens=remaining,
        remaining_days=tuple(float(h / 24.0) for h in end_q),
        trained_by=tuple(float(obs.as_of + h * 3600.0) for h in end_q),
        rate_prior_per_h=lam0, rate_post_per_h=lam_post,
        rate_post_p5=float(np.percentile(g, 5)), rate_post_p95=float(np.percentile(g, 95)),
        alpha=alpha, beta=beta, plan_weight=post[0][0], mtbf_post_h=mtbf_post, interval_min=interval,
        interval_plan_min=plan.checkpoint_interval_min, productive_tokens_per_s=obs.productive_tokens_per_s,
        rate_sigma=info["sigma"], fan=fan, seed=seed)
