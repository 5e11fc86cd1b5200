"""``plan_buildout``: the build-out stage (pure; returns a frozen :class:`BuildoutPlan`)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from clustertwin.buildout.cpm import CPMResult, Network, compile_network, cpm, critical_path
from clustertwin.buildout.durations import StepInput, effective_steps
from clustertwin.buildout.inputs import base_steps, scenario_inputs, scenario_site
from clustertwin.buildout.montecarlo import (
    Distribution,
    MCResult,
    TriangularRows,
    pert,
    simulate,
)
from clustertwin.buildout.quantities import (
    DEFAULT_RADIX,
    Quantities,
    fabric_counts,
)
from clustertwin.buildout.result import BuildoutPlan, StepSchedule, WhatIfShift
from clustertwin.buildout.steps import GO_LIVE, load_profiles, load_steps, site_of
from clustertwin.buildout.waves import install_window_days, wave_count, waves
from clustertwin.buildout.whatif import (
    WhatIf,
    apply_step_changes,
    parse_what_ifs,
    with_base,
)
from clustertwin.design.spares import READS as SPARES_READS
from clustertwin.errors import Problem, UsageError

DEFAULT_SAMPLES = 10_000
#: scenario keys :func:`plan_buildout` reads (a section name covers the whole section): its own
#: section, the cluster, the spares keys and ``reliability.seed`` (its Monte Carlo draws)
READS = ("source", "model", "training", "cluster", "buildout", "reliability.seed", "decision.site",
         *SPARES_READS)
QUANTILES = tuple(round(q, 2) for q in np.arange(0.01, 1.0, 0.01))
#: where P10, P50, P80 and P90 stand in :data:`QUANTILES` (the same q, so the same numbers
#: ``np.percentile`` gives for 10, 50, 80, 90)
_PCT_AT = [QUANTILES.index(q) for q in (0.1, 0.5, 0.8, 0.9)]


@dataclass(frozen=True)
class _Run:
    """One simulated build-out: its steps, network, deterministic CPM and Monte Carlo."""

    steps: dict[int, StepInput]
    net: Network
    det: CPMResult
    mc: MCResult
    quantiles: dict[str, float]
    table: tuple[tuple[float, float], ...]  #: (q, go-live day) at every QUANTILES q


def _rescale(q: Quantities, gpus: int) -> Quantities:
    """Quantities for another GPU count, keeping the per-GPU ratios of ``q``."""
    f = gpus / q.gpus
    servers = max(1, round(q.servers * f))
    nics = round(q.nics * f)
    radix = DEFAULT_RADIX  # rescaled what-ifs use the default switch radix
    leaf, spine, core, uplinks = fabric_counts(nics, radix)
    return dataclasses.replace(
        q,
        gpus=gpus,
        servers=servers,
        racks=max(1, round(q.racks * f)),
        nics=nics,
        node_links=nics,
        uplinks=uplinks,
        leaf=leaf,
        spine=spine,
        core=core,
        it_mw=q.it_mw * f,
        storage_racks=max(1, round(q.storage_racks * f)),
        source=q.source + " (rescaled)",
    )


def _simulate(
    steps: dict[int, StepInput],
    u: int | None,
    samples: int,
    seed: int,
    distribution: Distribution,
    label: str = "",
) -> _Run:
    """One run, with every :data:`QUANTILES` go-live day (one sort, which P10 ...
    P90 are read from too)."""
    net = compile_network(
        {n: s.after for n, s in steps.items()}, GO_LIVE, source="--what-if", key=label
    )
    order = [steps[n] for n in net.numbers]
    o = np.array([s.o for s in order])
    m = np.array([s.m for s in order])
    p = np.array([s.p for s in order])
    det = cpm(net, m)
    if distribution == "pert":
        d = pert(o, m, p, seed, samples)
    else:
        assert u is not None
        # uniform rows follow step numbers so every run (any topological order) pairs the
        # same draws; they are drawn on demand, never as a uniform matrix (see TriangularRows)
        d = TriangularRows(o, m, p, list(net.numbers), seed, samples)
    mc = simulate(net, d)
    values = np.quantile(np.sort(mc.finish), QUANTILES)  # one pass, not 99 sorts
    pct = values[_PCT_AT]
    quantiles = {
        "mean": float(mc.finish.mean()),
        "p10": float(pct[0]),
        "p50": float(pct[1]),
        "p80": float(pct[2]),
        "p90": float(pct[3]),
    }
    quant = tuple((float(qq), float(v)) for qq, v in zip(QUANTILES, values, strict=True))
    return _Run(steps, net, det, mc, quantiles, quant)


def plan_buildout(
    scenario: Any,
    catalog: Any,
    design: Any = None,
    what_if: Any = None,
    *,
    samples: int = DEFAULT_SAMPLES,
    distribution: Distribution = "triangular",
) -> BuildoutPlan:
    """Schedule the 195 build-out steps for this scenario.

    ``design``: the design stage's result (``plan`` passes it; the build-out never re-derives
    it); None: quantities from the coarse rules of :mod:`clustertwin.buildout.quantities`.

    ``what_if``: None, one ``"KEY=VALUE ..."`` string, a list of them (each one what-if, compared
    with the baseline), or a mapping KEY -> VALUE (one what-if per entry); see
    :mod:`clustertwin.buildout.whatif` for the keys. Raises UsageError for a bad what-if."""
    if samples < 2:
        raise UsageError([Problem("buildout", "samples", "need at least 2 Monte Carlo samples")])
    if distribution not in ("triangular", "pert"):
        raise UsageError([Problem("buildout", "distribution", "expected triangular or pert")])
    book, profiles = load_steps(), load_profiles()
    what_ifs = parse_what_ifs(what_if, {s.number for s in book.steps})
    profile, start, seed, q, own = scenario_inputs(scenario, catalog, design, profiles)
    wanted = scenario_site(scenario)
    site = site_of(profiles, profile, wanted)
    u = len(book.steps) if distribution == "triangular" else None  # rows of the shared draws
    base = _simulate(base_steps(book, profiles, profile, q, own, site), u, samples, seed, distribution)
    shifts = [
        _what_if(with_base(w, own), book, profiles, (profile, wanted), q,
                 Sampling(u, samples, seed, distribution), base)
        for w in what_ifs
    ]

    cp = critical_path(base.net, base.det)
    rows = _step_rows(book, base)
    notes = [
        f"quantities from {q.source}; durations in calendar days",
        f"{samples} {distribution} samples, seed {seed}; what-ifs use the same draws",
    ]
    if own is not None and (own.changes or own.crews != 1.0):
        notes.append(_own_note(own))
    if q.cooling == "air":
        notes.append("air-cooled nodes: liquid-cooling steps 108-113 take 0 days")
    notes.append(_site_note(book, base.steps, site, wanted, profile))
    return BuildoutPlan(
        profile=profile,
        site=site,
        start_date=start,
        seed=seed,
        samples=samples,
        distribution=distribution,
        quantities=q.as_dict(),
        phases=dict(book.phases),
        deterministic_days=base.det.length,
        go_live_days_mean=base.quantiles["mean"],
        go_live_days_p10=base.quantiles["p10"],
        go_live_days_p50=base.quantiles["p50"],
        go_live_days_p80=base.quantiles["p80"],
        go_live_days_p90=base.quantiles["p90"],
        go_live_quantiles=base.table,
        waves=waves(start, base.quantiles["p50"], install_window_days(rows, base.det.length), q.gpus,
                    wave_count(design.scalable_units if design is not None else None)),
        critical_path=tuple(cp),
        steps=tuple(rows),
        what_ifs=tuple(shifts),
        notes=tuple(notes),
    )


def _site_note(book: Any, steps: dict[int, StepInput], site: str, wanted: str, profile: str) -> str:
    """Which site steps the build-out has, and why."""
    kept = [s.number for s in book.steps if s.sites is not None and s.number in steps]
    gone = [s.number for s in book.steps if s.sites is not None and s.number not in steps]
    why = f"decision.site {site}" if site == wanted else f"profile {profile} stands in an {site}"
    have = f"site steps {', '.join(map(str, kept))} scheduled" if kept else "no site steps scheduled"
    return f"{why}: {have}" + (f"; {', '.join(map(str, gone))} left out (the site has them)" if gone else "")


def _own_note(own: WhatIf) -> str:
    crews = f", crews x{own.crews:g}" if own.crews != 1.0 else ""
    return "scenario build-out changes: " + ", ".join(f"{c.key}={c.value}" for c in own.changes) + crews


def _step_rows(book: Any, base: Any) -> list[StepSchedule]:
    """Each step's inputs, deterministic schedule (earliest/latest, slack) and Monte Carlo
    criticality, in the book's order."""
    idx = base.net.index()
    det = base.det
    # Python floats read once per array (the same doubles float() gives item by item)
    es, ef, ls, lf = det.es.tolist(), det.ef.tolist(), det.ls.tolist(), det.lf.tolist()
    slack, crit = det.slack.tolist(), base.mc.criticality.tolist()
    rows = []
    for step in book.steps:
        if step.number not in base.steps:  # a site step this site does not need
            continue
        i = idx[step.number]
        si = base.steps[step.number]
        rows.append(
            StepSchedule(
                number=step.number,
                phase=step.phase,
                phase_name=book.phases[step.phase],
                title=step.title,
                crew=step.crew,
                after=tuple(si.after),
                optimistic_days=si.o,
                likely_days=si.m,
                pessimistic_days=si.p,
                quantity=si.quantity,
                quantity_value=si.quantity_value,
                crews=si.crews,
                applicable=si.applicable,
                earliest_start_days=es[i],
                earliest_finish_days=ef[i],
                latest_start_days=ls[i],
                latest_finish_days=lf[i],
                slack_days=max(0.0, slack[i]),
                critical=abs(slack[i]) <= 1e-6,
                criticality=crit[i],
            )
        )
    return rows


@dataclass(frozen=True)
class Sampling:
    """How a schedule is sampled: ``samples`` draws of ``distribution`` from ``seed``; ``u``
    the rows of the shared triangular draws (None for PERT)."""

    u: int | None
    samples: int
    seed: int
    distribution: Distribution


def _what_if(
    w: WhatIf,
    book: Any,
    profiles: Any,
    at: tuple[str, str],
    q: Quantities,
    sampling: Sampling,
    base: _Run,
) -> WhatIfShift:
    """One what-if against the base run; ``at`` is the scenario's profile and the site it asks for."""
    profile, wanted = at
    u, samples, seed, distribution = sampling.u, sampling.samples, sampling.seed, sampling.distribution
    qq = _rescale(q, w.gpus) if w.gpus is not None else q
    prof = w.profile or profile
    steps = effective_steps(book, profiles, prof, qq, crew_multiplier=w.crews,
                            site=site_of(profiles, prof, wanted))
    steps = apply_step_changes(steps, w.step_changes)
    run = _simulate(steps, u, samples, seed, distribution, w.label)
    bq, rq = base.quantiles, run.quantiles
    return WhatIfShift(
        label=w.label,
        changes=tuple(f"{c.key}={c.value}" for c in w.changes),
        deterministic_days=run.det.length,
        go_live_days_p50=rq["p50"],
        go_live_days_p80=rq["p80"],
        go_live_days_p90=rq["p90"],
        shift_p50_days=rq["p50"] - bq["p50"],
        shift_p80_days=rq["p80"] - bq["p80"],
        shift_p90_days=rq["p90"] - bq["p90"],
        critical_path=tuple(critical_path(run.net, run.det)),
    )
