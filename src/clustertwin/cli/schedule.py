"""``clustertwin schedule``: replay a trace on a cluster under one or more policies."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    """Add the ``schedule`` command to the main app."""

    # a command: one parameter per command-line option (typer reads this signature)
    @app.command("schedule")
    def schedule_cmd(
        cluster: str = typer.Option(..., "--cluster", help="scenario file, node-list CSV, "
                                    "pool:GPUS or uniform:NODESxGPUS"),
        trace: str = typer.Option(..., "--trace", help="openb[:VARIANT], gavel[:VC], "
                                  "sia-philly[:N], sia-saturn[:N], pollux[:N], "
                                  "synthetic:PROFILE[:JOBS] or a trace file"),
        policy: list[str] = typer.Option(["fifo"], "--policy", help="ORDER[+backfill|+greedy]"
                                         "[+preempt]; orders: fifo, priority, multifactor, sjf, "
                                         "sjf-gpu, sjf-oracle; repeat to compare"),
        placement: str = typer.Option("best-fit", "--placement",
                                      help="first-fit, best-fit or topology"),
        out: Path | None = typer.Option(None, "--out", help="folder for schedule.html, "
                                        "jobs.parquet and summary.json"),
        force: bool = typer.Option(False, "--force", help="overwrite files in --out"),
        strict: bool = typer.Option(False, "--strict", help="rejected trace rows are errors"),
        as_json: bool = typer.Option(False, "--json", help="print the summary as JSON"),
        seed: int = typer.Option(0, "--seed", help="random seed (time limits, failures, "
                                 "synthetic jobs)"),
        catalog: list[Path] = typer.Option([], "--catalog", help="extra catalog folder"),
        jobs: int | None = typer.Option(None, "--jobs", help="replay only the first N jobs"),
        load: float | None = typer.Option(None, "--load", help="offered load: synthetic traces "
                                          "are generated at it (default 0.9); real traces get their "
                                          "submit gaps compressed to it (default: as recorded)"),
        scale: float | None = typer.Option(None, "--scale", help="every job asks K times its "
                                           "GPUs (whole K), for a trace from a smaller cluster"),
        failure_rate: float | None = typer.Option(None, "--failure-rate",
                                                  help="node failures per 1000 node-days"),
        failure_profile: str | None = typer.Option(None, "--failure-profile",
                                                   help="failure-profile catalog id"),
        repair_hours: float = typer.Option(4.0, "--repair-hours",
                                           help="mean node repair time, hours (assumption)"),
        checkpoint_min: float | None = typer.Option(60.0, "--checkpoint-min",
                                                    help="checkpoint interval of every job, "
                                                    "minutes (0 = jobs cannot checkpoint)"),
        time_limit_factor: float = typer.Option(3.0, "--time-limit-factor",
                                                help="requested limit = duration x U(1, F)"),
        reserve: list[str] = typer.Option([], "--reserve", help="GPUS@START_H+HOURS: hold a "
                                          "block for a training run of that length"),
        team_limit: list[str] = typer.Option([], "--team-limit", help="TEAM=GPUS"),
        share: list[str] = typer.Option([], "--share", help="TEAM=WEIGHT fair share"),
    ) -> None:
        """Replay jobs on a cluster under each policy and compare them side by side."""
        from clustertwin.errors import UserError

        try:
            _check_numbers(load=load, failure_rate=failure_rate, repair_hours=repair_hours,
                           checkpoint_min=checkpoint_min, time_limit_factor=time_limit_factor,
                           seed=seed)
            _run(ScheduleOptions(cluster, trace, policy, placement, out, force, strict, as_json, seed,
                                 catalog, jobs, load, failure_rate, failure_profile, repair_hours,
                                 checkpoint_min, time_limit_factor, reserve, team_limit, share, scale))
        except UserError as exc:
            for line in exc.lines():
                typer.echo(f"error: {line}", err=True)
            raise typer.Exit(exc.exit_code) from None


#: (lowest, highest, lowest excluded) of each numeric option: beyond them the simulation means
#: nothing or never ends (``--load nan``, ``--failure-rate inf``: issue 15); beyond a load of ~10
#: every job of a real trace arrives at once
_BOUNDS = {"load": (0.0, 10.0, True), "failure_rate": (0.0, 100_000.0, False),
           "repair_hours": (0.0, 8760.0, True), "checkpoint_min": (0.0, 525_600.0, False),
           "time_limit_factor": (1.0, 100.0, False), "seed": (0.0, 2.0**63, False)}


@dataclass(frozen=True)
class ScheduleOptions:
    """The ``schedule`` command's options, as given on the command line (see its help)."""

    cluster: str
    trace: str
    policy: list[str]
    placement: str
    out: Path | None
    force: bool
    strict: bool
    as_json: bool
    seed: int
    catalog: list[Path]
    jobs: int | None
    load: float | None
    failure_rate: float | None
    failure_profile: str | None
    repair_hours: float
    checkpoint_min: float | None
    time_limit_factor: float
    reserve: list[str]
    team_limit: list[str]
    share: list[str]
    scale: float | None = None


def _check_numbers(**values: float | None) -> None:
    import math

    from clustertwin.errors import Problem, UsageError

    problems = []
    for name, v in values.items():
        if v is None:
            continue
        lo, hi, open_lo = _BOUNDS[name]
        opt = "--" + name.replace("_", "-")
        if not math.isfinite(v) or v < lo or (open_lo and v == lo) or v > hi:
            problems.append(Problem("command line", opt, f"expected a number {'above' if open_lo else 'from'} "
                                    f"{lo:g} {'and at most' if open_lo else 'to'} {hi:g}, got {v!r}"))
    if problems:
        raise UsageError(problems)


def _pairs(items: list[str], opt: str, known: tuple[str, ...] | None = None) -> dict[str, float]:
    """NAME=NUMBER options; numbers finite and >= 0; names among ``known`` teams when given."""
    import math

    from clustertwin.errors import Problem, UsageError

    out = {}
    for it in items:
        k, sep, v = it.partition("=")
        try:
            if not sep:
                raise ValueError
            out[k.strip()] = float(v)
            if not math.isfinite(out[k.strip()]) or out[k.strip()] < 0:
                raise ValueError
        except ValueError:
            raise UsageError([Problem("command line", opt, f"{it!r}: expected NAME=NUMBER with a "
                                      "finite number >= 0")]) from None
        if known is not None and k.strip() not in known:
            shown = ", ".join(known[:12]) + (" ..." if len(known) > 12 else "")
            raise UsageError([Problem("command line", opt, f"unknown team {k.strip()!r}; the trace's "
                                      f"teams: {shown}")])
    return out


def _reservations(items: list[str]):  # noqa: ANN202
    from clustertwin.errors import Problem, UsageError
    from clustertwin.scheduling.engine import Reservation

    out = []
    for i, it in enumerate(items):
        try:
            g, _, rest = it.partition("@")
            start, _, hours = rest.partition("+")
            r = Reservation(f"resv{i}", float(start) * 3600, (float(start) + float(hours)) * 3600,
                            int(g))
            if r.gpus <= 0 or r.end_s <= r.start_s or not (0 <= r.start_s and r.end_s <= 1e10):
                raise ValueError
        except ValueError:
            raise UsageError([Problem("command line", "--reserve",
                                      f"{it!r}: expected GPUS@START_H+HOURS, e.g. 1024@24+72")]) from None
        out.append(r)
    return tuple(out)


def _failure_rate(rate: float | None, profile: str | None, catalog_dirs: list[Path]) -> float:
    """Failures per node per day from --failure-rate or a catalog failure profile."""
    if rate is not None:
        return rate / 1000.0
    if not profile:
        return 0.0
    from clustertwin.catalog import load_catalog

    entry = load_catalog(catalog_dirs).get("failure_profile", profile, source="command line",
                                           path="--failure-profile")
    return float(entry.total_per_1000_node_days) / 1000.0


def _run(o: ScheduleOptions) -> None:
    failure_profile = o.failure_profile
    from dataclasses import replace

    import numpy as np

    from clustertwin.cli.common import OutputDir, emit_json, to_json
    from clustertwin.errors import Problem, UsageError
    from clustertwin.scheduling import schedule
    from clustertwin.scheduling.cluster import load_cluster
    from clustertwin.scheduling.engine import SimConfig
    from clustertwin.scheduling.jobs import with_checkpoints, with_time_limits
    from clustertwin.scheduling.placement import PLACEMENTS
    from clustertwin.scheduling.policies import parse_policy
    from clustertwin.scheduling.traces import load_trace

    PLACEMENTS.get(o.placement, path="--placement")
    folder = None if o.out is None else OutputDir(
        o.out, ["schedule.html", "jobs.parquet", "jobs.csv", "summary.json"], o.force)
    specs = [parse_policy(p) for p in o.policy]
    if len({s.label for s in specs}) != len(specs):
        raise UsageError([Problem("command line", "--policy", "a policy is given twice")])
    seq = np.random.SeedSequence(o.seed)
    rng_trace, rng_limits = (np.random.default_rng(s) for s in seq.spawn(2))
    spec = load_cluster(o.cluster, list(o.catalog))
    w = load_trace(o.trace, strict=o.strict, cluster_gpus=spec.gpus, max_node_gpus=spec.max_node_gpus,
                   rng=rng_trace, load=0.9 if o.load is None else o.load)
    _require_jobs(w, o.trace)
    if o.jobs is not None:
        if o.jobs <= 0:
            raise UsageError([Problem("command line", "--jobs", "must be positive")])
        w = w.subset(np.arange(min(o.jobs, len(w))))
    w, fit_notes = _fit_trace(w, spec, o.trace, o.load, o.scale, o.strict)
    rsv = _reservations(o.reserve)
    w = _with_reserved_runs(w, rsv)
    w = with_time_limits(w, rng_limits, max_factor=o.time_limit_factor)
    ck = None if not o.checkpoint_min else o.checkpoint_min * 60.0
    w = with_checkpoints(w, ck)
    profile_note = None
    if o.failure_rate is None and not failure_profile and str(o.cluster).lower().endswith(
            (".yaml", ".yml", ".toml")):
        # a designed cluster fails as its scenario says; --failure-rate 0 turns failures off
        from clustertwin.cli.common import load_inputs

        failure_profile = load_inputs(o.cluster, list(o.catalog))[0].reliability.failure_profile
        profile_note = (f"node failures follow the scenario's failure profile {failure_profile!r}"
                        " (--failure-rate 0 turns them off)")
    cfg = SimConfig(placement=o.placement,
                    failure_rate_per_node_day=_failure_rate(o.failure_rate, failure_profile,
                                                            list(o.catalog)),
                    repair_s=o.repair_hours * 3600.0, shares=_pairs(o.share, "--share", w.teams),
                    team_limits_gpus=_pairs(o.team_limit, "--team-limit", w.teams), reservations=rsv)
    warnings = ([profile_note] if profile_note else []) + fit_notes
    rep = w.report
    if rep and rep.rows_rejected:
        for reason, n in rep.rejected.items():
            ex = "; ".join(rep.examples.get(reason, []))
            warnings.append(f"{n} trace rows rejected: {reason} (e.g. {ex})")
    if any(s.order == "sjf-oracle" for s in specs):
        warnings.append("sjf-oracle orders by actual duration, which no real scheduler knows")
    settings = {"placement": o.placement, "seed": o.seed, "failure_rate_per_node_day":
                cfg.failure_rate_per_node_day, "repair_hours": o.repair_hours,
                "checkpoint_min": o.checkpoint_min, "time_limit_factor": o.time_limit_factor,
                "reservations": [r.__dict__ for r in rsv], "team_limits": cfg.team_limits_gpus,
                "shares": cfg.shares}
    res = schedule(w, spec, specs, cfg, seed=o.seed, settings=settings, warnings=tuple(warnings))
    res = replace(res, warnings=res.warnings + tuple(_preempt_notes(res, specs)))
    if folder is not None:
        jobs_name, warn = res.write_jobs(folder)
        if warn:
            typer.echo(f"warning: {warn}", err=True)
            res = replace(res, warnings=res.warnings + (warn,))
        folder.write("schedule.html", res.html())
        folder.write("summary.json", to_json(res.to_contract()) + "\n")
        folder.commit()
    if o.as_json:
        emit_json(res.to_contract())
        return
    _print_table(res)


def _require_jobs(w, trace: str) -> None:  # noqa: ANN001
    """A trace with no job left to replay is the input's error (one line per reason)."""
    if len(w):
        return
    from clustertwin.errors import Problem, UsageError

    rep = w.report
    if rep is None or not rep.rows_rejected:
        raise UsageError([Problem(str(trace), "rows", "no jobs to replay: the trace has no rows")])
    raise UsageError([Problem(str(trace), "rows", f"no jobs to replay: all {rep.rows_rejected} "
                              f"rows rejected; {n} because {reason} (e.g. "
                              f"{'; '.join(rep.examples.get(reason, []))})")
                      for reason, n in rep.rejected.items()])


def _with_reserved_runs(w, rsv):  # noqa: ANN001, ANN202
    """Each reservation comes with its training run, occupying the whole window."""
    if not rsv:
        return w
    from clustertwin.scheduling.jobs import make_workload

    extra = make_workload([f"reserved-run-{i}" for i in range(len(rsv))],
                          [r.start_s for r in rsv], [r.gpus * 1000 for r in rsv],
                          [r.end_s - r.start_s for r in rsv],
                          requested_s=[r.end_s - r.start_s for r in rsv],
                          teams=["reserved"] * len(rsv), qos=[3] * len(rsv),
                          reservation=list(range(len(rsv))))
    return _concat(w, extra)


def _fit_trace(w, spec, trace, load, scale, strict):  # noqa: ANN001, ANN202
    """Fit a loaded trace to the cluster: ``--scale`` job sizes, drop jobs that cannot fit, and
    (real traces) compress submit gaps to ``--load`` or say the recorded load; (workload, notes)."""
    from clustertwin.scheduling.traces.common import drop_too_large
    from clustertwin.scheduling.traces.timescale import compress_to_load, offered_load, scale_sizes

    notes = []
    if scale is not None:
        w, note = scale_sizes(w, scale)
        notes.append(note)
    w = drop_too_large(w, spec.gpus, spec.max_node_gpus, strict, trace, spec.pooled)
    if not trace.startswith("synthetic"):
        if load is not None:
            w, note = compress_to_load(w, spec.gpus, load, trace)
            notes.append(note)
        else:
            native = offered_load(w, spec.gpus)
            notes.append(f"offered load as recorded: {native:.3g} on {spec.gpus:,} GPUs"
                         + (" (little queueing; --load 0.9 compresses the trace in time)"
                            if native < 0.5 else "") if native == native else
                         "the trace's jobs arrive at one instant (offered load undefined)")
    return w, notes


def _preempt_notes(res, specs) -> list[str]:  # noqa: ANN001
    """Say why a +preempt policy preempted nothing, so an equal result is not read as a finding."""
    import numpy as np

    w, out = res.workload, []
    for spec, run in zip(specs, res.runs, strict=True):
        if not spec.preempt or run.metrics.get("preemptions", 0):
            continue
        waited = np.nan_to_num(run.output.first_start_s - w.submit_s, nan=0.0)
        if len(np.unique(w.qos)) <= 1 and spec.order in ("fifo", "priority"):
            why = "every job has the same QoS level, so none outranks a running job"
        elif not (waited > 0).any():
            why = "no job ever waited for GPUs"
        else:
            why = "no waiting job outranked running jobs holding the GPUs it needed"
        out.append(f"{spec.label}: preemption had no opportunity ({why}); its result equals the "
                   "policy without +preempt")
    return out


def _concat(a, b):  # noqa: ANN001, ANN202
    import numpy as np

    from clustertwin.scheduling.jobs import make_workload

    teams = [a.teams[i] for i in a.team.tolist()] + [b.teams[i] for i in b.team.tolist()]
    n = len(a)
    deps = dict(a.deps)
    deps.update({k + n: tuple((kind, d + n) for kind, d in v) for k, v in b.deps.items()})
    cat = np.concatenate
    return make_workload(a.names + b.names, cat([a.submit_s, b.submit_s]),
                         cat([a.gpus_milli, b.gpus_milli]), cat([a.duration_s, b.duration_s]),
                         requested_s=cat([a.requested_s, b.requested_s]), teams=teams,
                         qos=cat([a.qos, b.qos]), priority=cat([a.priority, b.priority]),
                         checkpoint_s=cat([a.checkpoint_s, b.checkpoint_s]),
                         reservation=cat([a.reservation, b.reservation]), deps=deps,
                         report=a.report)


def _print_table(res) -> None:  # noqa: ANN001
    from rich.console import Console
    from rich.table import Table

    header, rows = res.table()
    c = res.cluster
    from clustertwin.quoting import terminal_text

    t = Table(title=terminal_text(f"{c['name']}: {c['gpus']:,} GPUs on {c['nodes']:,} nodes; "
                                  f"{res.trace.get('jobs', 0):,} jobs from {res.trace.get('source')}"))
    for i, h in enumerate(header):
        t.add_column(h, justify="left" if i == 0 else "right")
    for r in rows:
        t.add_row(*r)
    con = Console()
    con.print(t)
    for wline in res.warnings:
        con.print(f"[yellow]warning:[/] {wline}")
