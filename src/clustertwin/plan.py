"""Compose the stages into one plan.

Stages run in pipeline order; each is a pure function of the scenario and the results before
it. A user mistake (``UserError``) stops the plan: the user has to fix it. A stage that cannot
compute the scenario (overflow, a value out of a model's range: ``ArithmeticError``,
``ValueError``, ...) is that input's error too: one line naming the stage, exit status 2, never a
warning under exit 0 (issue 15). Only a stage that is not available (its package missing or not
implemented) is skipped: it is listed in ``Plan.skipped`` and ``skipped_stages``, named in
``warnings``, and ``plan`` exits with status 3. Any other exception is a bug and keeps its
traceback.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from clustertwin.catalog import Catalog
from clustertwin.errors import InfeasibleError, Problem, UserError
from clustertwin.scenario import Scenario

STAGES = ("training", "design", "reliability", "economics", "buildout", "decision")
#: deadline mode: full-reliability confirmations of the solved cluster before giving up
DEADLINE_ROUNDS = 3
#: each re-solve asks the analytic ETTR for this much headroom beyond the shortfall seen
DEADLINE_MARGIN = 0.995


@dataclass(frozen=True)
class Plan:
    scenario: Scenario
    training: Any = None
    design: Any = None
    reliability: Any = None
    economics: Any = None
    buildout: Any = None
    decision: Any = None
    warnings: tuple[str, ...] = field(default_factory=tuple)
    skipped: tuple[str, ...] = field(default_factory=tuple)  #: stages not available, not run
    sized: tuple[dict[str, Any], ...] = ()  #: decision.size_to_target: each route's solved cluster

    def blocks(self) -> list[tuple[str, Any]]:
        return [(name, getattr(self, name)) for name in STAGES if getattr(self, name) is not None]

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"scenario": self.scenario.model_dump(mode="json")}
        for name, res in self.blocks():
            out[name] = res.to_contract()
        if self.sized and "decision" in out:
            out["decision"]["sized"] = [dict(r) for r in self.sized]
        out["warnings"] = list(self.warnings)
        if self.skipped:
            out["skipped_stages"] = list(self.skipped)
        return out


#: Exceptions a stage raises when the numbers of an input are beyond what its model computes.
COMPUTE_ERRORS = (ArithmeticError, ValueError, MemoryError, RecursionError)


#: The scenario section (or sections) each stage reads: what a refusal names as the key, since
#: the user wrote those, not the stage's name.
STAGE_KEYS = {"training": "model/training", "design": "cluster", "reliability": "reliability",
              "economics": "economics", "buildout": "buildout", "decision": "decision"}


def cannot_compute(scenario: Scenario, stage: str, exc: BaseException) -> InfeasibleError:
    """A stage failing on the input's numbers, as the input's one-line error: the section the
    user wrote and what to check, never the internal exception's text (issue 31)."""
    why = ("needs more memory than this machine has" if isinstance(exc, MemoryError)
           else "overflows or leaves the range its model computes")
    return InfeasibleError([Problem(scenario.source, STAGE_KEYS.get(stage, stage),
                                    f"the {stage} stage cannot compute this scenario: it {why}; "
                                    "check the sizes, counts, rates and prices it uses (here and "
                                    "in any --catalog entries)")])


#: Plan figures that are +inf by meaning: no failures give an infinite mean time between
#: failures and no optimum checkpoint interval; a fabric tier without uplinks (one leaf) has an
#: infinite down:up ratio (any key ending in ``oversubscription``). Any other inf or NaN is
#: refused.
NEVER_KEYS = frozenset({"reliability.mtbf_h", "reliability.young_interval_min",
                        "reliability.daly_interval_min"})
#: Largest dollar figure a plan may show: ~10x world GDP (2024: ~$110 trillion). Past it the
#: inputs are typos (a 1e300 price once gave capex near 1e308 with exit status 0).
MONEY_MAX_USD = 1e15


def implausible_figures(doc: dict[str, Any]) -> list[tuple[str, float]]:
    """(dotted key, value) of each plan figure that is NaN, an infinity that does not mean
    "never" (:data:`NEVER_KEYS`), or a dollar figure (``*_usd``) past :data:`MONEY_MAX_USD`."""
    import math

    out: list[tuple[str, float]] = []

    def walk(o: Any, path: str) -> None:
        if isinstance(o, dict):
            for k, v in o.items():
                walk(v, f"{path}.{k}" if path else str(k))
        elif isinstance(o, list | tuple):
            for v in o:
                walk(v, path)
        elif isinstance(o, float | int) and not isinstance(o, bool):
            x = float(o)
            never = path in NEVER_KEYS or path.endswith("oversubscription")
            if math.isnan(x) or (math.isinf(x) and not (x > 0 and never)) \
                    or ("usd" in path.rsplit(".", 1)[-1] and abs(x) > MONEY_MAX_USD):
                out.append((path, x))

    walk(doc, "")
    return out


def _check_plausible(plan: Plan) -> Plan:
    bad = implausible_figures({k: v for k, v in plan.to_dict().items() if k != "scenario"})
    if not bad:
        return plan
    shown = ", ".join(f"{k} = {v:.3g}" for k, v in bad[:3]) + (f" (+{len(bad) - 3} more)" if len(bad) > 3 else "")
    section = STAGE_KEYS.get(bad[0][0].split(".", 1)[0], "")
    raise InfeasibleError([Problem(plan.scenario.source, section, "the plan comes out with figures "
                                   f"no real cluster has ({shown}); check the sizes, rates and "
                                   "prices it uses (here and in any --catalog entries)")])


def _stage_functions() -> tuple[Callable[..., Any], ...]:
    """The five stage functions in pipeline order (imported here: none at CLI import time)."""
    from clustertwin.buildout import plan_buildout
    from clustertwin.deadline import train as estimate
    from clustertwin.design import design
    from clustertwin.economics import economics
    from clustertwin.reliability import analyze

    return estimate, design, analyze, economics, plan_buildout


def make_plan(scenario: Scenario, catalog: Catalog,
              on_stage: Callable[[str], None] | None = None,
              stages: tuple[str, ...] = STAGES, memo: Any = None) -> Plan:
    """Run the stages in order. ``on_stage(name)`` is called before each (for progress bars).
    ``memo`` (a :class:`clustertwin.sweep.memo.StageMemo`) reuses the results of stage calls
    with the same inputs from earlier plans; the plan is the same with or without it.

    The data flow, in one place: training estimate (none for a design-only scenario) ->
    design -> reliability -> economics -> build-out. In deadline mode on a wall-clock basis
    the solved cluster is confirmed with the full reliability stage and solved again (at most
    :data:`DEADLINE_ROUNDS` times) while ``reliability.effective_days`` exceeds the deadline."""
    training_stage, design_stage, reliability_stage, economics_stage, plan_buildout = _stage_functions()
    from clustertwin.perf import estimate as respare  # the spares re-estimate (_spares_inside)

    if memo is not None:  # a sweep worker's cache: each stage keyed on what it reads
        training_stage, design_stage, reliability_stage, economics_stage, plan_buildout, respare = memo.bind(
            training_stage, design_stage, reliability_stage, economics_stage, plan_buildout, respare)
    warnings: list[str] = []
    skipped: list[str] = []

    def run(name: str, fn: Callable[..., Any], *args: Any, **kw: Any) -> Any:
        if name not in stages:
            return None
        if on_stage:
            on_stage(name)
        try:
            return fn(*args, **kw)
        except UserError:
            raise
        except (ImportError, NotImplementedError) as exc:  # the only optional case: not available
            if name not in skipped:
                skipped.append(name)
                warnings.append(f"{name}: stage skipped, not available ({exc}); later stages use defaults")
        except COMPUTE_ERRORS as exc:
            raise cannot_compute(scenario, name, exc) from None
        return None

    training = None
    if scenario.design_only:
        warnings.append("training: no model/training sections: a design-only plan (the cluster's design, "
                        "cost, build-out and node-level reliability; no training run)")
    else:  # training time is the root the other stages hang off; its failure stops the plan
        if on_stage:
            on_stage("training")
        training = _root(scenario, lambda: training_stage(scenario, catalog))
    training, design = _designed(scenario, catalog, training, run, design_stage, warnings, respare)
    reliability = run("reliability", reliability_stage, scenario, catalog, training, design)
    scale = 1.0
    for _ in range(DEADLINE_ROUNDS):
        late = _deadline_excess(scenario, reliability)
        if late <= 0:
            break
        scale *= scenario.cluster.deadline_days / (scenario.cluster.deadline_days + late) * DEADLINE_MARGIN
        training = _root(scenario, lambda: training_stage(scenario, catalog, ettr_scale=scale))  # noqa: B023
        training, design = _designed(scenario, catalog, training, run, design_stage, warnings, respare)
        reliability = run("reliability", reliability_stage, scenario, catalog, training, design)
    late = _deadline_excess(scenario, reliability)
    if late > 0:
        warnings.append(f"training: the solved cluster misses the {scenario.cluster.deadline_days:g}-day "
                        f"deadline by {late:.1f} wall-clock days (reliability.effective_days)")
    economics = run("economics", economics_stage, scenario, catalog, training, design, reliability)
    buildout = run("buildout", plan_buildout, scenario, catalog, design)
    # the result's training block with the ETTR charged in its goodput (after the memoised
    # stages, which take the stage's own result)
    training = _with_ettr(training, reliability)
    decision = run("decision", _decide(), scenario, catalog, training, design, reliability, economics, buildout,
                   replan=_replanner(scenario, catalog, memo))
    res = {"training": training, "design": design, "reliability": reliability,
           "economics": economics, "buildout": buildout, "decision": decision}
    for name, result in res.items():  # each stage's own caveats, labelled with the stage
        attrs = ("warnings",) if name in ("buildout", "decision") else ("warnings", "notes")  # their notes are informational
        for attr in attrs:
            for msg in getattr(result, attr, None) or ():
                warnings.append(f"{name}: {msg}")
    return _check_plausible(_sized(Plan(scenario=scenario, warnings=tuple(warnings),
                                        skipped=tuple(skipped), **res), catalog))


def _sized(plan: Plan, catalog: Catalog) -> Plan:
    """With ``decision.size_to_target``: each route's cluster solved for the target date."""
    d = plan.scenario.decision
    if plan.decision is None or not d.size_to_target or d.target_date is None:
        return plan
    from clustertwin.sizing import size_routes  # the deadline solver per route (issue 21)

    sized = size_routes(plan, catalog, make_plan)
    # the headline answers with the sized routes (issue 38): decision.sized_rows feeds its words
    return replace(plan, sized=sized, decision=plan.decision.model_copy(update={"sized_rows": sized}))


def _with_ettr(training: Any, reliability: Any) -> Any:
    """training.goodput with the reliability stage's ETTR charged (reliability.goodput)."""
    if training is None or reliability is None:
        return training
    from clustertwin.reliability.goodput import with_ettr

    return with_ettr(training, reliability)


#: reliability trials of a route's own plan at another GPU count (its mean wall-clock days, not
#: its tail, is what the route reads; 200 trials hold the mean within ~1% at a fifth of the time)
REPLAN_TRIALS = 200


def _replanner(scenario: Scenario, catalog: Catalog, memo: Any) -> Callable[[int], tuple[float, ...]]:
    """``replan(gpus) -> (wall_p50, wall_p90, mfu, gpus_used)``: the run planned again at another GPU count
    (training, design, reliability; a route that runs on fewer GPUs than the plan's, issue 38)."""
    def replan(gpus: int) -> tuple[float, ...]:
        from clustertwin.decision.inputs import wall_days
        from clustertwin.scenario import with_updates

        s2 = with_updates(scenario, cluster={"gpus": gpus, "deadline_days": None}, reliability={"trials": REPLAN_TRIALS},
                          decision={"options": ["cloud"], "size_to_target": False})
        sub = make_plan(s2, catalog, stages=("training", "design", "reliability"), memo=memo)
        w50, w90 = wall_days(sub.training, sub.reliability, None)
        return w50, w90, float(sub.training.mfu), float(sub.training.gpus)

    return replan


def _decide() -> Callable[..., Any]:
    from clustertwin.decision import decide

    return decide


def _designed(scenario: Scenario, catalog: Catalog, training: Any, run: Callable[..., Any],
              design_stage: Callable[..., Any], warnings: list[str],
              respare: Callable[..., Any] | None = None) -> tuple[Any, Any]:
    """The design stage, with the job re-estimated when hot spares take installed nodes'
    slots (:func:`_spares_inside`). The first pass leaves the site unplaced (``cabling=False``:
    placing it is most of the stage's work); the design kept is always a full one."""
    draft = run("design", design_stage, scenario, catalog, training, cabling=False)
    training, design = _spares_inside(scenario, catalog, training, draft,
                                      lambda sc, t: run("design", design_stage, sc, catalog, t),
                                      warnings, respare)
    if design is draft and draft is not None:
        design = run("design", design_stage, scenario, catalog, training)
    return training, design


def _reliability_checked(scenario: Scenario, catalog: Catalog, training: Any, design: Any,
                         run: Callable[..., Any], design_stage: Callable[..., Any],
                         check: Callable[..., Any]) -> tuple[Any, Any]:
    """``validate``'s reliability check. A job that passes on all the installed GPUs passes on
    the fewer that hot spares inside the units leave it (fewer nodes fail less often), so the
    re-estimate plan makes (:func:`_spares_inside`) is only made when the check fails, and the
    problem is then reported for the job plan would run, in plan's words."""
    try:
        check(scenario, catalog, training, design)
        return training, design
    except (UserError, *COMPUTE_ERRORS):  # reported below, on the job plan runs
        pass
    training, design = _spares_inside(
        scenario, catalog, training, design,
        lambda sc, t: run("design", design_stage, sc, catalog, t, cabling=False), [])
    run("reliability", check, scenario, catalog, training, design)
    return training, design


def _spares_inside(scenario: Scenario, catalog: Catalog, training: Any, design: Any,
                   redesign: Callable[[Scenario, Any], Any],
                   warnings: list[str], respare: Callable[..., Any] | None = None) -> tuple[Any, Any]:
    """Hot spares that took installed nodes' slots (``cluster.spare_placement: inside`` with
    full units) leave the job ``design.job_gpus_limit`` GPUs: the training job is estimated
    again on them and the design redone around it (once; the units then have the room). A job
    that cannot run on them (a pinned parallelism plan) keeps its GPUs and a warning says so."""
    limit = getattr(design, "job_gpus_limit", None)
    if training is None or not limit or training.gpus <= limit:
        return training, design
    if respare is None:
        from clustertwin.perf import estimate as respare

    why = (f"the hot spares take {training.installed_gpus - limit:,} of the installed GPUs' "
           "slots inside the scalable units (cluster.spare_placement: inside): the job is "
           f"estimated on the other {limit:,}")
    try:
        shrunk = respare(scenario, catalog, installed=limit, notes=[why])
    except UserError as exc:
        first = exc.problems[0].message if getattr(exc, "problems", None) else str(exc)
        warnings.append(f"design: the job cannot run on the {limit:,} GPUs the hot spares leave "
                        f"inside the units ({first}), so it keeps all {training.gpus:,} and the "
                        "spare nodes serve only while the job runs elsewhere; set "
                        "cluster.spare_placement: outside (spares on switches of their own) or "
                        "unpin the parallelism")
        return training, design
    return shrunk, redesign(scenario, shrunk)


def _root(scenario: Scenario, call: Callable[[], Any]) -> Any:
    """Run the training stage (the root; no plan without it), its compute failures as input errors."""
    try:
        return call()
    except COMPUTE_ERRORS as exc:
        raise cannot_compute(scenario, "training", exc) from None


def _deadline_excess(scenario: Scenario, reliability: Any) -> float:
    """Wall-clock days past a deadline solved on a wall-clock basis (0 otherwise)."""
    c = scenario.cluster
    if c.deadline_days is None or c.deadline_basis != "wall-clock" or reliability is None:
        return 0.0
    return max(0.0, float(reliability.effective_days) - c.deadline_days)


def feasibility_problems(scenario: Scenario, catalog: Catalog) -> list[str]:
    """The user mistakes ``plan`` would stop on, all in one pass (``validate``): training,
    design (its site unplaced: placing it only ever warns) and economics run as in
    :func:`make_plan`; reliability and build-out check their inputs without their Monte
    Carlos. A stage that cannot run because an earlier one failed on the user's input is
    skipped, the others still report theirs. Bugs are not user problems and are left to
    ``plan``, which shows their traceback."""
    from clustertwin.buildout.inputs import check_buildout
    from clustertwin.deadline import train as training_stage
    from clustertwin.design import design as design_stage
    from clustertwin.economics import economics as economics_stage
    from clustertwin.reliability.check import check_inputs

    lines: list[str] = []
    failed = False

    def run(name: str, fn: Callable[..., Any], *args: Any, **kw: Any) -> Any:
        nonlocal failed
        try:
            return fn(*args, **kw)
        except UserError as exc:
            lines.extend(line for line in exc.lines() if line not in lines)
            failed = True
        except COMPUTE_ERRORS as exc:  # the input's error, as in make_plan
            lines.extend(cannot_compute(scenario, name, exc).lines())  # named as plan names it
            failed = True
        except Exception:  # noqa: BLE001 - a bug, not the user's to fix: plan shows it
            pass
        return None

    training = None if scenario.design_only else run("training", training_stage, scenario, catalog)
    # on the installed GPUs if no estimate; the site's placement only ever warns: left out
    design = run("design", design_stage, scenario, catalog, training, cabling=False)
    if not failed:
        # the Monte Carlos are left to plan: their inputs are checked, not simulated
        reliability = None
        if training is None:  # node-level reliability of a design-only plan: no search
            from clustertwin.reliability import analyze

            reliability = run("reliability", analyze, scenario, catalog, training, design)
        else:
            training, design = _reliability_checked(scenario, catalog, training, design, run,
                                                    design_stage, check_inputs)
        run("economics", economics_stage, scenario, catalog, training, design, reliability)
    run("buildout", check_buildout, scenario, catalog, design)
    return lines

