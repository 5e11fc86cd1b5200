"""Compose the stages into one plan: the run loop of the twin.

:func:`make_plan` reads as the pipeline runs: the training estimate (none for a design-only
scenario) -> design -> reliability -> economics -> build-out -> decision, each stage called by
name on the typed results before it (:class:`~clustertwin.pipeline.StageRunner`, which also
holds the error policy: a user mistake or a stage that cannot compute the input stops the plan,
a stage that is not available is skipped and ``plan`` exits with status 3). Around that
sequence, three named loop-backs:

- :func:`designed`: hot spares inside the scalable units take installed nodes' slots, so the
  job is estimated again on the GPUs they leave (:func:`spares_inside`);
- :func:`deadline_rounds`: a deadline solved on a wall-clock basis is confirmed with the full
  reliability stage and solved again while the run still misses it;
- :func:`size_to_target`: with ``decision.size_to_target`` each route's own cluster is solved
  for the target date (the whole plan again, in deadline mode, per route).

:func:`feasibility_problems` (``validate``) runs the same sequence up to the checks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import cached_property, partial
from typing import TYPE_CHECKING, Any

from clustertwin.catalog import Catalog
from clustertwin.children import MISSING, Ahead
from clustertwin.errors import InfeasibleError, Problem, UserError
from clustertwin.pipeline import COMPUTE_ERRORS, STAGE_KEYS, StageFunctions, StageRunner
from clustertwin.scenario import Scenario

if TYPE_CHECKING:
    from clustertwin.buildout.result import BuildoutPlan
    from clustertwin.decision.result import DecisionOption, DecisionResult
    from clustertwin.design.result import ClusterDesign
    from clustertwin.economics.model import EconomicsResult
    from clustertwin.perf.stage import TrainingEstimate
    from clustertwin.reliability.result import ReliabilityResult

STAGES = ("training", "design", "reliability", "economics", "buildout", "decision")
#: deadline mode: full-reliability confirmations of the solved cluster before giving up
DEADLINE_ROUNDS = 3
#: each re-solve asks the analytic ETTR for this much headroom beyond the shortfall seen
DEADLINE_MARGIN = 0.995
#: the deadline solver's range (``cluster.deadline_days``) when a route is sized for its target
MIN_DEADLINE_DAYS, MAX_DEADLINE_DAYS = 1.0, 1000.0
#: a route sized for its target: at most this many plans, halvings to start in time, and the
#: days before the target within which it is converged (issue 38)
ROUNDS, SHRINKS, TOLERANCE_DAYS = 4, 4, 7.0


@dataclass(frozen=True)
class Plan:
    """Every stage's result for one scenario (None for a stage not run), with the plan's warnings."""

    scenario: Scenario
    training: TrainingEstimate | None = None
    design: ClusterDesign | None = None
    reliability: ReliabilityResult | None = None
    economics: EconomicsResult | None = None
    buildout: BuildoutPlan | None = None
    decision: DecisionResult | None = None
    warnings: tuple[str, ...] = field(default_factory=tuple)
    skipped: tuple[str, ...] = field(default_factory=tuple)  #: stages not available, not run
    sized: tuple[dict[str, Any], ...] = ()  #: decision.size_to_target: each route's solved cluster

    def blocks(self) -> list[tuple[str, Any]]:
        """(stage name, result) of the stages that ran, in pipeline order."""
        results = (self.training, self.design, self.reliability, self.economics, self.buildout,
                   self.decision)
        return [(name, res) for name, res in zip(STAGES, results, strict=True) if res is not None]

    def to_dict(self) -> dict[str, Any]:
        """The plan as its JSON document (contract section 2). Made once per plan and shared by
        every reader (the plausibility check, ``--json``, a sweep's row, the web app): read it,
        do not change it."""
        return self._document

    def __getstate__(self) -> dict[str, Any]:
        # a plan sent to another process (a web-app worker's answer) leaves its document
        # behind: the receiver makes its own if it needs one
        return {k: v for k, v in self.__dict__.items() if k != "_document"}

    @cached_property
    def _document(self) -> dict[str, Any]:
        out: dict[str, Any] = {"scenario": self.scenario.model_dump(mode="json")}
        for name, res in self.blocks():
            out[name] = res.to_contract()
        if self.design is not None and "training" in out:
            # one value for "installed" across the JSON: every GPU the design installs, spares
            # included (design.gpus); the estimate's own count is the job's share where hot
            # spares take installed slots (spares_inside)
            out["training"]["installed_gpus"] = self.design.gpus
        if self.sized and "decision" in out:
            out["decision"]["sized"] = [dict(r) for r in self.sized]
        out["warnings"] = list(self.warnings)
        if self.skipped:
            out["skipped_stages"] = list(self.skipped)
        return out


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
    from itertools import repeat

    out: list[tuple[str, float]] = []

    def flag(x: float, keys: tuple[Any, ...]) -> None:
        path = ".".join(map(str, keys))
        never = path in NEVER_KEYS or path.endswith("oversubscription")
        if math.isnan(x) or (math.isinf(x) and not (x > 0 and never)) \
                or ("usd" in path.rsplit(".", 1)[-1] and abs(x) > MONEY_MAX_USD):
            out.append((path, x))

    def walk(o: dict | list | tuple, keys: tuple[Any, ...]) -> None:
        # the dotted path is only spelled out for a figure that is NaN, infinite or past the
        # money bound, and plain floats and ints are read in the loop (a plan has thousands)
        is_dict = isinstance(o, dict)
        for k, v in (o.items() if is_dict else zip(repeat(None), o)):
            t = type(v)
            if t is float or t is int or (t is not bool and isinstance(v, float | int)):
                x = float(v)
                if not -MONEY_MAX_USD <= x <= MONEY_MAX_USD:     # NaN compares false
                    flag(x, (*keys, k) if is_dict else keys)
            elif isinstance(v, dict | list | tuple):
                walk(v, (*keys, k) if is_dict else keys)

    walk(doc, ())
    return out


def check_plausible(plan: Plan) -> Plan:
    """The plan, unless a figure in it is one no real cluster has (:func:`implausible_figures`):
    then the input's error, naming the section the figure comes from."""
    bad = implausible_figures({k: v for k, v in plan.to_dict().items() if k != "scenario"})
    if not bad:
        return plan
    shown = ", ".join(f"{k} = {v:.3g}" for k, v in bad[:3]) + (f" (+{len(bad) - 3} more)" if len(bad) > 3 else "")
    section = STAGE_KEYS.get(bad[0][0].split(".", 1)[0], "")
    raise InfeasibleError([Problem(plan.scenario.source, section, "the plan comes out with figures "
                                   f"no real cluster has ({shown}); check the sizes, rates and "
                                   "prices it uses (here and in any --catalog entries)")])


def make_plan(scenario: Scenario, catalog: Catalog,
              on_stage: Callable[[str], None] | None = None,
              stages: tuple[str, ...] = STAGES, memo: Any = None, ahead: Ahead | None = None) -> Plan:
    """Run the stages in order (those in ``stages``; training always). ``on_stage(name)`` is
    called before each (for progress bars). ``memo`` (a
    :class:`clustertwin.sweep.memo.StageMemo`) reuses the results of stage calls with the same
    inputs from earlier plans; ``ahead`` (from :func:`plan_ahead`) the cloud route's re-plan
    and the spares re-estimate computed meanwhile; the plan is the same with or without
    either."""
    fns = StageFunctions.of_pipeline(memo)
    if ahead is not None:
        fns = replace(fns, respare=respare_from(ahead, fns.respare))
    run = StageRunner(scenario, catalog, fns, stages, on_stage)
    training = run.training()
    training, design = designed(run, training)
    reliability = run.reliability(training, design)
    training, design, reliability = deadline_rounds(run, training, design, reliability)
    economics = run.economics(training, design, reliability)
    buildout = run.buildout(design)
    # the result's training block with the ETTR charged in its goodput (after the memoised
    # stages, which take the stage's own result)
    training = charged_ettr(training, reliability)
    decision = run.decision(training, design, reliability, economics, buildout,
                            replan=replanner(scenario, catalog, memo, ahead))
    plan = Plan(scenario=scenario, training=training, design=design, reliability=reliability,
                economics=economics, buildout=buildout, decision=decision, skipped=tuple(run.skipped))
    plan = replace(plan, warnings=(*run.warnings, *stage_caveats(plan)))
    return check_plausible(size_to_target(plan, catalog))


def plan_through(scenario: Scenario, catalog: Catalog, last: str = "design") -> Plan:
    """``make_plan`` up to ``last`` ("design" or "reliability"): the results before it exactly
    as ``plan`` computes them, for the commands that show one stage (``design``,
    ``reliability``, ``buildout``, ``schedule``, ``export``): one source of the installed GPUs,
    racks and power. A deadline solved on a wall-clock basis needs the reliability stage to
    confirm its count (the deadline rounds), so it runs too."""
    stages: tuple[str, ...] = ("design", "reliability")
    if last == "design" and scenario.cluster.deadline_days is None:
        stages = ("design",)
    return make_plan(scenario, catalog, stages=stages)


def designed(run: StageRunner, training: TrainingEstimate | None,
             ) -> tuple[TrainingEstimate | None, ClusterDesign | None]:
    """The design stage, with the job re-estimated when hot spares take installed nodes'
    slots (:func:`spares_inside`). The first pass is a draft (the site unplaced); the design
    kept is always a full one."""
    draft = run.design(training, draft=True)
    training, design = spares_inside(run, training, draft)
    if design is draft and draft is not None:
        design = run.design(training)
    return training, design


def spares_inside(run: StageRunner, training: TrainingEstimate | None, design: ClusterDesign | None,
                  *, draft: bool = False) -> tuple[TrainingEstimate | None, ClusterDesign | None]:
    """Hot spares that took installed nodes' slots (``cluster.spare_placement: inside`` with
    full units) leave the job ``design.job_gpus_limit`` GPUs: the training job is estimated
    again on them and the design redone around it (once; the units then have the room; a
    ``draft`` design for ``validate``). A job that cannot run on them (a pinned parallelism
    plan) keeps its GPUs and a warning says so."""
    limit = design.job_gpus_limit if design is not None else None
    if training is None or not limit or training.gpus <= limit:
        return training, design
    try:
        shrunk = run.fns.respare(run.scenario, run.catalog, installed=limit,
                                 notes=[respare_note(training.installed_gpus, limit)])
    except UserError as exc:
        first = exc.problems[0].message if exc.problems else str(exc)
        run.warnings.append(f"design: the job cannot run on the {limit:,} GPUs the hot spares leave "
                            f"inside the units ({first}), so it keeps all {training.gpus:,} and the "
                            "spare nodes serve only while the job runs elsewhere; set "
                            "cluster.spare_placement: outside (spares on switches of their own) or "
                            "unpin the parallelism")
        return training, design
    return shrunk, run.design(shrunk, draft=draft)


def respare_note(installed: int, limit: int) -> str:
    """The note that leads the estimate on the ``limit`` GPUs hot spares leave of ``installed``."""
    return (f"the hot spares take {installed - limit:,} of the installed GPUs' slots inside "
            "the scalable units (cluster.spare_placement: inside): the job is estimated on the "
            f"other {limit:,}")


def deadline_rounds(run: StageRunner, training: TrainingEstimate | None, design: ClusterDesign | None,
                    reliability: ReliabilityResult | None,
                    ) -> tuple[TrainingEstimate | None, ClusterDesign | None, ReliabilityResult | None]:
    """Deadline mode on a wall-clock basis: while the full reliability stage finds the solved
    cluster late (``reliability.effective_days`` past the deadline), solve again with the
    analytic ETTR scaled by the shortfall seen, at most :data:`DEADLINE_ROUNDS` times; a run
    still late is a warning."""
    deadline = run.scenario.cluster.deadline_days
    scale = 1.0
    for _ in range(DEADLINE_ROUNDS):
        late = deadline_excess(run.scenario, reliability)
        if late <= 0:
            break
        scale *= deadline / (deadline + late) * DEADLINE_MARGIN
        training, design = designed(run, run.training(ettr_scale=scale))
        reliability = run.reliability(training, design)
    late = deadline_excess(run.scenario, reliability)
    if late > 0:
        run.warnings.append(f"training: the solved cluster misses the {deadline:g}-day deadline "
                            f"by {late:.1f} wall-clock days (reliability.effective_days)")
    return training, design, reliability


def deadline_excess(scenario: Scenario, reliability: ReliabilityResult | None) -> float:
    """Wall-clock days past a deadline solved on a wall-clock basis (0 otherwise)."""
    c = scenario.cluster
    if c.deadline_days is None or c.deadline_basis != "wall-clock" or reliability is None:
        return 0.0
    return max(0.0, float(reliability.effective_days) - c.deadline_days)


def charged_ettr(training: TrainingEstimate | None,
                 reliability: ReliabilityResult | None) -> TrainingEstimate | None:
    """training.goodput with the reliability stage's ETTR charged (reliability.goodput)."""
    if training is None or reliability is None:
        return training
    from clustertwin.reliability.goodput import with_ettr

    return with_ettr(training, reliability)


def stage_caveats(plan: Plan) -> list[str]:
    """Each stage's own caveats, labelled with the stage: its warnings and the notes it made
    for the user (the build-out's and the decision's notes are informational, left out)."""
    out: list[str] = []
    if plan.training is not None:
        out += [f"training: {m}" for m in plan.training.notes]
    if plan.design is not None:
        out += [f"design: {m}" for m in (*plan.design.warnings, *plan.design.notes)]
    if plan.reliability is not None:
        out += [f"reliability: {m}" for m in plan.reliability.notes]
    if plan.economics is not None:
        out += [f"economics: {m}" for m in plan.economics.notes]
    if plan.decision is not None:
        out += [f"decision: {m}" for m in plan.decision.warnings]
    return out


def size_to_target(plan: Plan, catalog: Catalog) -> Plan:
    """With ``decision.size_to_target`` (issue 21): each route's cluster solved so that it
    trains by ``decision.target_date`` (:func:`size_route`); the headline answers with them."""
    d = plan.scenario.decision
    if plan.decision is None or not d.size_to_target or d.target_date is None:
        return plan
    sized = tuple(size_route(plan, catalog, o) for o in plan.decision.options)
    return replace(plan, sized=sized, decision=plan.decision.model_copy(update={"sized_rows": sized}))


def size_route(plan: Plan, catalog: Catalog, route: DecisionOption) -> dict[str, Any]:
    """``{mode, gpus, deadline_days, start_date, trained_by_p50, trained_by_p90, cost_usd,
    meets_target, rounds, error}`` of one route: the wall-clock days left between the route's
    start date (P50 or P90 per ``decision.confidence``) and the target become
    ``cluster.deadline_days`` and the whole plan is made again in deadline mode for this route
    alone (:func:`solve_route`: to convergence, issue 38)."""
    row: dict[str, Any] = {"mode": route.mode, "gpus": None, "deadline_days": None, "error": None}
    try:
        sized = solve_route(plan, catalog, route, row)
    except UserError as exc:  # the deadline cannot be met at any size, or the input breaks
        row["error"] = "; ".join(exc.lines())[:300]
        return row
    if sized is not None:
        row.update(gpus=sized.gpus, start_date=sized.start_date.isoformat(),
                   trained_by_p50=sized.trained_by_p50.isoformat(),
                   trained_by_p90=sized.trained_by_p90.isoformat(), cost_usd=sized.cost_usd,
                   meets_target=sized.meets_target)
    return row


def _days_left(scenario: Scenario, o: DecisionOption) -> float:
    """Days from the route's start (at the decision's confidence) to the target."""
    start = o.start_date_p90 if scenario.decision.confidence == "p90" else o.start_date
    return float((scenario.decision.target_date - start).days)


def _route_plan(s: Scenario, mode: str, catalog: Catalog, **cluster: Any) -> DecisionOption:
    from clustertwin.scenario import with_updates

    s2 = with_updates(s, cluster=cluster, decision={"options": [mode], "size_to_target": False})
    return make_plan(s2, catalog).decision.option(mode)


def start_in_time(plan: Plan, catalog: Catalog, route: DecisionOption) -> tuple[float, DecisionOption]:
    """Days left after the route's start, at the plan's size or the first smaller one (halving,
    at most :data:`SHRINKS` times: a smaller block of space or order arrives sooner) that
    starts before the target."""
    s, o = plan.scenario, route
    days, gpus = _days_left(s, o), o.gpus
    for _ in range(SHRINKS):
        if days >= MIN_DEADLINE_DAYS or gpus <= 16:
            break
        gpus //= 2
        try:
            o = _route_plan(s, route.mode, catalog, gpus=gpus, deadline_days=None)
        except UserError:
            break
        days = _days_left(s, o)
    return days, o


def solve_route(plan: Plan, catalog: Catalog, route: DecisionOption, row: dict[str, Any]) -> DecisionOption | None:
    """The route's cluster solved for the target: the deadline solver meets wall-clock days of
    failures; the route adds its start date and the other goodput losses, so each round takes
    the miss (or the slack) off the next deadline until the route trains within
    :data:`TOLERANCE_DAYS` before the target (at most :data:`ROUNDS` plans; the cheapest that
    meets is kept)."""
    s = plan.scenario
    days, sized = start_in_time(plan, catalog, route)
    if days < MIN_DEADLINE_DAYS:
        row["error"] = f"starts {route.mode} after the target ({-days:.0f} days late before training)"
        return None
    target, conf = s.decision.target_date, s.decision.confidence
    best, late = None, MAX_DEADLINE_DAYS + 1.0   # best sized cluster meeting; least deadline that missed
    for k in range(ROUNDS):
        days = min(days, MAX_DEADLINE_DAYS)
        row["deadline_days"], row["rounds"] = days, k + 1
        sized = _route_plan(s, route.mode, catalog, gpus=None, deadline_days=days)
        miss = float((sized.trained_by(conf) - target).days)
        if miss <= 0:
            best = sized if best is None or sized.cost_usd < best.cost_usd else best
        else:
            late = min(late, days)
        nxt = days - miss - (1.0 if miss > 0 else 0.0)
        if -TOLERANCE_DAYS <= miss <= 0 or nxt < MIN_DEADLINE_DAYS or nxt >= late:
            break
        days = nxt
    return best or sized


#: reliability trials of a route's own plan at another GPU count (its mean wall-clock days, not
#: its tail, is what the route reads; 200 trials hold the mean within ~1% at a fifth of the time)
REPLAN_TRIALS = 200


def replanner(scenario: Scenario, catalog: Catalog, memo: Any,
              ahead: Ahead | None = None) -> Callable[[int], tuple[float, ...]]:
    """``replan(gpus) -> (wall_p50, wall_p90, mfu, gpus_used)``: the run planned again at another
    GPU count (training, design, reliability; a route that runs on fewer GPUs than the plan's,
    issue 38). ``ahead`` (:func:`plan_ahead`) may hold it, computed in a child meanwhile."""
    def replan(gpus: int) -> tuple[float, ...]:
        if ahead is not None:
            value = ahead.get(gpus)
            if value is not MISSING:
                return value
        return replan_at(scenario, catalog, memo, gpus)

    return replan


def replan_at(scenario: Scenario, catalog: Catalog, memo: Any, gpus: int) -> tuple[float, ...]:
    """:func:`replanner`'s answer for ``gpus``."""
    from clustertwin.decision.inputs import wall_days
    from clustertwin.scenario import with_updates

    s2 = with_updates(scenario, cluster={"gpus": gpus, "deadline_days": None},
                      reliability={"trials": REPLAN_TRIALS},
                      decision={"options": ["cloud"], "size_to_target": False})
    sub = make_plan(s2, catalog, stages=("training", "design", "reliability"), memo=memo)
    w50, w90 = wall_days(sub.training, sub.reliability, None)
    return w50, w90, float(sub.training.mfu), float(sub.training.gpus)


def replan_expected(scenario: Scenario, catalog: Catalog) -> int | None:
    """The GPU count the decision stage will re-plan the run at, where the scenario says so
    before the plan runs (the cloud route is asked for and the cluster's fixed GPU count is past
    what one cloud account gets); None otherwise (or where the catalog cannot say: the stages
    then report it in their own words)."""
    from clustertwin.decision.options import cloud_cap_gpus

    gpus = scenario.cluster.gpus
    if gpus is None or "cloud" not in scenario.decision.options:
        return None
    try:
        cap = cloud_cap_gpus(catalog, scenario.decision, int(catalog.node(scenario.cluster.node).gpus))
    except (UserError, *COMPUTE_ERRORS):
        return None
    return cap if cap < gpus else None


#: :class:`Ahead`'s key of :func:`respare_ahead`'s value
RESPARE = "respare"


def respare_ahead(scenario: Scenario, catalog: Catalog, respare: Callable[..., TrainingEstimate],
                  ) -> tuple[tuple[int, tuple[str, ...]], TrainingEstimate] | None:
    """The spares re-estimate (:func:`spares_inside`) of a plan on the scenario's fixed GPU
    count, before the plan has its training estimate: ``((installed, notes), estimate)``, the
    arguments it was computed for first; None where the hot spares leave the job every GPU. The
    plan takes the value only for the very arguments it asks (:func:`respare_from`)."""
    from clustertwin.design.core import job_gpus_room

    gpus = scenario.cluster.gpus
    if gpus is None:
        return None
    limit = job_gpus_room(scenario, catalog, gpus)
    if limit >= gpus:
        return None
    notes = (respare_note(gpus, limit),)
    return (limit, notes), respare(scenario, catalog, installed=limit, notes=list(notes))


def respare_from(ahead: Ahead, respare: Callable[..., TrainingEstimate]) -> Callable[..., TrainingEstimate]:
    """``respare`` that answers with :func:`respare_ahead`'s value where it was computed for
    the same arguments (the same scenario and catalog: the child's), and computes otherwise."""
    def respare_or_ahead(scenario: Scenario, catalog: Catalog, *, installed: int,
                         notes: list[str]) -> TrainingEstimate:
        got = ahead.get(RESPARE)
        if got is not MISSING and got is not None and got[0] == (installed, tuple(notes)):
            return got[1]
        return respare(scenario, catalog, installed=installed, notes=notes)

    return respare_or_ahead


@contextmanager
def plan_ahead(scenario: Scenario, catalog: Catalog) -> Iterator[Ahead | None]:
    """For :func:`make_plan`'s ``ahead``: the cloud route's re-plan (:func:`replan_expected`),
    and first the spares re-estimate (:func:`respare_ahead`) where hot spares sit inside the
    units, computed in a forked child while the plan's own stages run, on a machine with a core to
    spare (the plan is the same either way: a value the child does not deliver is computed in
    place). The child is stopped and reaped on the way out."""
    gpus = replan_expected(scenario, catalog)
    ahead = None
    if gpus is not None:
        fns = StageFunctions.of_pipeline()  # the stages' modules, imported once for both processes
        first_calls()
        jobs: list[tuple[Any, Callable[[], Any]]] = [(gpus, partial(replan_at, scenario, catalog, None, gpus))]
        if scenario.cluster.spare_placement == "inside":
            jobs.insert(0, (RESPARE, partial(respare_ahead, scenario, catalog, fns.respare)))
        ahead = Ahead.start(jobs)
    try:
        yield ahead
    finally:
        if ahead is not None:
            ahead.close()


def first_calls() -> None:
    """What a full plan's stages do once per process on their first call: import what they
    import inside their functions (the site model behind the cable counts, numpy's random
    generators and its masked arrays, which ``np.quantile`` reaches; the decision's ranges and
    words) and read the packaged data (design rules, cable media, the build-out's step book and
    profiles). Done before :func:`plan_ahead` forks, the child inherits it all instead of doing
    it again (the parent would do it either way). A failure is left for the stage that meets
    it, in its own words."""
    try:
        import numpy.ma  # noqa: F401
        import numpy.random  # noqa: F401

        from clustertwin import fmt  # noqa: F401
        from clustertwin.buildout.steps import load_profiles, load_steps
        from clustertwin.catalog import pricing  # noqa: F401
        from clustertwin.decision import uncertainty, words  # noqa: F401
        from clustertwin.design import geometry  # noqa: F401
        from clustertwin.design.media import load_media
        from clustertwin.design.rules import load_rules
        from clustertwin.design.site import (  # noqa: F401
            class_racks,
            class_reach,
            classes,
            inventory,
            link_groups,
            naming,
            placement,
            summary,
        )
        from clustertwin.perf import autostack, goodput  # noqa: F401
        from clustertwin.reliability import goodput as reliability_goodput  # noqa: F401

        load_rules(), load_media(), load_steps(), load_profiles()
    except Exception:  # noqa: BLE001, S110
        pass


def feasibility_problems(scenario: Scenario, catalog: Catalog) -> list[Problem]:
    """The user mistakes ``plan`` would stop on, all in one pass (``validate``): the plan's
    sequence up to the checks. Training, design (a draft: placing the site only ever warns)
    and economics run as in :func:`make_plan`; reliability and build-out check their inputs
    without their Monte Carlos. A stage that cannot run because an earlier one failed on the
    user's input is skipped, the others still report theirs. Bugs are not user problems: they
    keep their traceback."""
    from clustertwin.buildout.inputs import check_buildout

    run = StageRunner(scenario, catalog, StageFunctions.of_pipeline(), STAGES, collect=True)
    training = run.training()
    design = run.design(training, draft=True)
    if not run.failed:
        # the Monte Carlos are left to plan: their inputs are checked, not simulated
        reliability = None
        if training is None:  # node-level reliability of a design-only plan: no search
            reliability = run.reliability(training, design)
        else:
            training, design = reliability_checked(run, training, design)
        run.economics(training, design, reliability)
    run.call("buildout", check_buildout, design)
    return run.problems


def reliability_checked(run: StageRunner, training: TrainingEstimate, design: ClusterDesign | None,
                        ) -> tuple[TrainingEstimate | None, ClusterDesign | None]:
    """``validate``'s reliability check. A job that passes on all the installed GPUs passes on
    the fewer that hot spares inside the units leave it (fewer nodes fail less often), so the
    re-estimate plan makes (:func:`spares_inside`) is only made when the check fails, and the
    problem is then reported for the job plan would run, in plan's words."""
    from clustertwin.reliability.check import check_inputs

    try:
        check_inputs(run.scenario, run.catalog, training, design)
        return training, design
    except (UserError, *COMPUTE_ERRORS):  # reported below, on the job plan runs
        pass
    shrunk, design = spares_inside(run, training, design, draft=True)
    run.call("reliability", check_inputs, shrunk, design)
    return shrunk, design
