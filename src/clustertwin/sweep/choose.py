"""Choose from a sweep: requirements filter the rows, an objective ranks them, and the Pareto
set shows the trade-off between the cost of the run and its wall-clock days.

A requirement is ``COLUMN OP NUMBER`` (``reliability.effective_days<=120``), OP one of
``<= >= < > == !=``; a row without the column (a failed plan) does not meet it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from clustertwin.errors import Problem, UsageError

OBJECTIVES = {
    "run_cost_owned_usd": "economics.run_cost_owned_usd",
    "run_cost_cloud_usd": "economics.run_cost_cloud_usd",
    "effective_days": "reliability.effective_days",
    "capex_usd": "economics.capex_usd",
    # the buyer's question (issue 21): the date the chosen route trains the model by, and its cost
    "trained_by": "decision.trained_by",
    "cost_to_model": "decision.cost_usd",
}
#: the columns that say which job a row trains; rows of different jobs are ranked separately
JOB_COLUMNS = ("scenario.model.name", "scenario.training.tokens")
DAYS = "reliability.effective_days"
_OPS = {"<=": float.__le__, ">=": float.__ge__, "<": float.__lt__, ">": float.__gt__,
        "==": float.__eq__, "!=": float.__ne__}
_REQ = re.compile(r"^\s*([A-Za-z_][\w.\-]*)\s*(<=|>=|==|!=|<|>)\s*([-+0-9.eE_]+)\s*$")


@dataclass(frozen=True)
class Requirement:
    column: str
    op: str
    value: float
    text: str

    def holds(self, x: Any) -> bool:
        if x is None or isinstance(x, bool) or not isinstance(x, int | float) or math.isnan(x):
            return False
        return _OPS[self.op](float(x), self.value)


def parse_requirement(text: str) -> Requirement:
    m = _REQ.match(text)
    if not m:
        raise UsageError([Problem("--require", text, "expected COLUMN OP NUMBER with OP one of "
                                  "<= >= < > == != (e.g. 'reliability.effective_days<=120')")])
    try:
        value = float(m.group(3).replace("_", ""))
    except ValueError:
        raise UsageError([Problem("--require", text, f"{m.group(3)!r} is not a number")]) from None
    return Requirement(m.group(1), m.group(2), value, text.strip())


#: where a requirement's column can come from (checked before any work; exact names after)
COLUMN_ROOTS = ("training.", "design.", "reliability.", "economics.", "buildout.", "decision.", "scenario.")


def check_columns(requirements: list[Requirement], swept: list[str]) -> None:
    """A requirement must name a plan column (``block.key``) or a swept key."""
    bad = [r for r in requirements if r.column not in swept and not r.column.startswith(COLUMN_ROOTS)]
    if bad:
        raise UsageError([Problem("--require", r.text, f"{r.column!r} is not a column of the sweep; use a plan key "
                                  "such as reliability.effective_days or economics.run_cost_owned_usd")
                          for r in bad])


def objective_column(objective: str) -> str:
    if objective not in OBJECTIVES:
        raise UsageError([Problem("--objective", objective, f"expected one of {', '.join(OBJECTIVES)}")])
    return OBJECTIVES[objective]


def cost_column(objective: str) -> str:
    """The cost axis of the Pareto front: the objective when it is a cost, else owned run cost."""
    col = OBJECTIVES[objective]
    return col if col != DAYS else OBJECTIVES["run_cost_owned_usd"]


@dataclass(frozen=True)
class Choice:
    """The ranking of a sweep. Indexes are row positions in the table."""

    objective: str
    column: str
    requirements: tuple[Requirement, ...]
    feasible: tuple[int, ...]          # rows that planned and meet every requirement
    ranked: tuple[int, ...]            # feasible rows, best objective first
    pareto: tuple[int, ...]            # feasible rows no other beats on both cost and days
    cost_column: str
    missing: tuple[str, ...]           # requirement columns no row has
    jobs: tuple[str, ...] = ()         # the jobs (model, tokens) of the feasible rows, in ranking order
    best_by_job: tuple[int, ...] = ()  # the best row of each job

    @property
    def best(self) -> int | None:
        """The best row; None when the rows train different jobs (see :attr:`best_by_job`)."""
        if len(self.jobs) > 1:
            return None
        return self.ranked[0] if self.ranked else None


def number_or_none(v: Any) -> float | None:
    """A rankable number: numbers as they are, ISO dates (``decision.trained_by``) as day ordinals."""
    if isinstance(v, str):
        import datetime as _dt

        try:
            return float(_dt.date.fromisoformat(v).toordinal())
        except ValueError:
            return None
    if v is None or isinstance(v, bool) or not isinstance(v, int | float) or math.isnan(v):
        return None
    return float(v)


def pareto_front(cost: list[float | None], days: list[float | None], rows: list[int]) -> list[int]:
    """Rows not dominated in (cost, days), both minimized; sorted by days."""
    pts = sorted((days[i], cost[i], i) for i in rows if cost[i] is not None and days[i] is not None)
    front: list[int] = []
    best_cost = math.inf
    for _days, c, i in pts:  # by days ascending: a point joins if it is cheaper than all faster ones
        if c < best_cost:  # type: ignore[operator]
            front.append(i)
            best_cost = c  # type: ignore[assignment]
    return front


def choose(table: Any, objective: str = "run_cost_owned_usd",
           requirements: list[Requirement] | tuple[Requirement, ...] = ()) -> Choice:
    """Rank the rows of a sweep table by ``objective`` among those meeting ``requirements``."""
    col = objective_column(objective)
    names = set(table.column_names)
    cols = {c: table.column(c).to_pylist() for c in {col, DAYS, cost_column(objective)} if c in names}
    n = table.num_rows
    errors = table.column("error").to_pylist() if "error" in names else [None] * n
    ok = [i for i in range(n) if errors[i] is None]
    missing = tuple(r.text for r in requirements if r.column not in names)
    for r in requirements:
        values = table.column(r.column).to_pylist() if r.column in names else [None] * n
        ok = [i for i in ok if r.holds(values[i])]
    obj = [number_or_none(v) for v in cols.get(col, [None] * n)]
    feasible = [i for i in ok if obj[i] is not None]
    job = _jobs(table, n)
    order = list(dict.fromkeys(job[i] for i in sorted(feasible, key=lambda i: (obj[i], i))))
    ranked = sorted(feasible, key=lambda i: (order.index(job[i]), obj[i], i))  # within each job
    best_by_job = tuple(next(i for i in ranked if job[i] == j) for j in order)
    cost = [number_or_none(v) for v in cols.get(cost_column(objective), [None] * n)]
    days = [number_or_none(v) for v in cols.get(DAYS, [None] * n)]
    front = pareto_front(cost, days, feasible)
    return Choice(objective, col, tuple(requirements), tuple(feasible), tuple(ranked), tuple(front),
                  cost_column(objective), missing, tuple(order), best_by_job)


def _jobs(table: Any, n: int) -> list[str]:
    """Each row's job: the model it trains and on how many tokens ("" without those columns)."""
    names = set(table.column_names)
    cols = [table.column(c).to_pylist() if c in names else [None] * n for c in JOB_COLUMNS]
    out = []
    for model, tokens in zip(*cols, strict=True):
        out.append("" if model is None else f"{model} on {float(tokens or 0) / 1e12:.3g}T tokens")
    return out
