"""The stage runner: each stage of a plan called by name, on typed results, under one error
policy (:mod:`clustertwin.plan` composes the calls into a plan, and into ``validate``'s checks).

The policy. A user mistake (``UserError``) stops the plan: the user has to fix it. A stage that
cannot compute the scenario (overflow, a value out of a model's range: :data:`COMPUTE_ERRORS`)
is that input's error too: one line naming the stage, exit status 2, never a warning under exit
0 (issue 15). Only a stage that is not available (its package missing or not implemented) is
skipped: it is listed in ``skipped``, named in ``warnings``, and ``plan`` exits with status 3.
Any other exception is a bug and keeps its traceback. The training stage is the root the
others hang off: it always runs, and nothing stands in for it.

``validate`` runs the same calls with ``collect=True``: a user mistake or a compute failure is
recorded as :class:`~clustertwin.errors.Problem` objects and the stage answers None, so that
the stages that do not need its result still report theirs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from clustertwin.errors import InfeasibleError, Problem, UserError

if TYPE_CHECKING:
    from clustertwin.buildout.result import BuildoutPlan
    from clustertwin.catalog import Catalog
    from clustertwin.decision.result import DecisionResult
    from clustertwin.design.result import ClusterDesign
    from clustertwin.economics.model import EconomicsResult
    from clustertwin.perf.stage import TrainingEstimate
    from clustertwin.reliability.result import ReliabilityResult
    from clustertwin.scenario import Scenario

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


@dataclass(frozen=True)
class StageFunctions:
    """The five memoisable stage functions, in pipeline order, and the spares re-estimate (the
    perf estimate on the GPUs hot spares leave inside the units); a sweep's
    :class:`~clustertwin.sweep.memo.StageMemo` wraps them to reuse results between plans."""

    training: Callable[..., TrainingEstimate]
    design: Callable[..., ClusterDesign]
    reliability: Callable[..., ReliabilityResult]
    economics: Callable[..., EconomicsResult]
    buildout: Callable[..., BuildoutPlan]
    respare: Callable[..., TrainingEstimate]

    @classmethod
    def of_pipeline(cls, memo: Any = None) -> StageFunctions:
        """The stages' entry points (imported here: none at CLI import time), through
        ``memo.bind`` when a memo is given."""
        from clustertwin.buildout import plan_buildout
        from clustertwin.deadline import train
        from clustertwin.design import design
        from clustertwin.economics import economics
        from clustertwin.perf import estimate
        from clustertwin.reliability import analyze

        fns = (train, design, analyze, economics, plan_buildout, estimate)
        return cls(*(memo.bind(*fns) if memo is not None else fns))


@dataclass
class StageRunner:
    """One plan's stage calls: what it runs (``stages``), what it was told on the way."""

    scenario: Scenario
    catalog: Catalog
    fns: StageFunctions
    stages: tuple[str, ...]
    on_stage: Callable[[str], None] | None = None  #: called before each stage (progress bars)
    collect: bool = False  #: validate: problems recorded instead of raised
    warnings: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  #: stages not available, not run
    problems: list[Problem] = field(default_factory=list)  #: collect mode: the user's problems

    @property
    def failed(self) -> bool:
        """A stage stopped on the user's input (collect mode)."""
        return bool(self.problems)

    def call(self, name: str, fn: Callable[..., Any], *args: Any, **kw: Any) -> Any:
        """``fn(scenario, catalog, *args, **kw)`` under the error policy (module doc); None for
        a stage not asked for, not available or (collect mode) stopped on the input."""
        if name not in self.stages:
            return None
        if self.on_stage:
            self.on_stage(name)
        try:
            return fn(self.scenario, self.catalog, *args, **kw)
        except UserError as exc:
            if not self.collect:
                raise
            self._record(exc.problems)
        except (ImportError, NotImplementedError) as exc:  # the only optional case: not available
            if name not in self.skipped:
                self.skipped.append(name)
                self.warnings.append(f"{name}: stage skipped, not available ({exc}); later stages use defaults")
        except COMPUTE_ERRORS as exc:
            if not self.collect:
                raise cannot_compute(self.scenario, name, exc) from None
            self._record(cannot_compute(self.scenario, name, exc).problems)
        return None

    def _record(self, problems: list[Problem]) -> None:
        self.problems.extend(p for p in problems if p not in self.problems)

    def training(self, ettr_scale: float | None = None) -> TrainingEstimate | None:
        """The training estimate (solved for a deadline, its analytic ETTR scaled by
        ``ettr_scale`` in the deadline rounds); None for a design-only scenario."""
        if self.scenario.design_only:
            self.warnings.append("training: no model/training sections: a design-only plan (the cluster's "
                                 "design, cost, build-out and node-level reliability; no training run)")
            return None
        kw = {} if ettr_scale is None else {"ettr_scale": ettr_scale}
        if self.collect:
            return self.call("training", self.fns.training, **kw)
        if self.on_stage:
            self.on_stage("training")
        try:  # the root: no plan without it, and nothing skips it
            return self.fns.training(self.scenario, self.catalog, **kw)
        except COMPUTE_ERRORS as exc:
            raise cannot_compute(self.scenario, "training", exc) from None

    def design(self, training: TrainingEstimate | None, *, draft: bool = False) -> ClusterDesign | None:
        """The cluster design; a ``draft`` leaves the site unplaced (placing it is most of the
        stage's work, and only ever warns)."""
        kw = {"cabling": False} if draft else {}
        return self.call("design", self.fns.design, training, **kw)

    def reliability(self, training: TrainingEstimate | None,
                    design: ClusterDesign | None) -> ReliabilityResult | None:
        """Failures, checkpoints and the run's wall-clock time (the job's Monte Carlo)."""
        return self.call("reliability", self.fns.reliability, training, design)

    def economics(self, training: TrainingEstimate | None, design: ClusterDesign | None,
                  reliability: ReliabilityResult | None) -> EconomicsResult | None:
        """Capex, opex and the run's cost, owned and rented."""
        return self.call("economics", self.fns.economics, training, design, reliability)

    def buildout(self, design: ClusterDesign | None) -> BuildoutPlan | None:
        """The build-out schedule of the designed cluster and its go-live dates."""
        return self.call("buildout", self.fns.buildout, design)

    def decision(self, training: TrainingEstimate | None, design: ClusterDesign | None,
                 reliability: ReliabilityResult | None, economics: EconomicsResult | None,
                 buildout: BuildoutPlan | None, replan: Callable[[int], tuple[float, ...]] | None = None,
                 ) -> DecisionResult | None:
        """When the model is trained, by which route (build, colocate, lease, rent, the owned
        cluster), for how much; ``replan(gpus)`` plans the run at a route's own GPU count."""
        from clustertwin.decision import decide
        from clustertwin.decision.inputs import Upstream

        upstream = Upstream(training, design, reliability, economics, buildout)
        return self.call("decision", decide, upstream, replan=replan)
