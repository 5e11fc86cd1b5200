"""Back-test: replay a run's history with ``--as-of`` at shares of its tokens and set each
forecast against the actual finish (``scripts/track_backtest.py`` prints it)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from clustertwin.track.core import track_plan
from clustertwin.track.planview import PlanView

SHARES = (0.10, 0.25, 0.50, 0.75)


@dataclass(frozen=True)
class BacktestRow:
    share: float
    as_of: float
    p50: float
    p90: float
    finish: float
    start: float

    @property
    def p50_error(self) -> float:
        """(P50 - actual finish) / the run's duration: + = forecast too late."""
        return (self.p50 - self.finish) / (self.finish - self.start)

    @property
    def covered(self) -> bool:
        return self.p90 >= self.finish


def backtest(pv: PlanView, logs: list[Path] | list[tuple[str, str]], sacct: Path | str | None = None,
             sacct_text: str | None = None, finish: float | None = None,
             shares: tuple[float, ...] = SHARES) -> list[BacktestRow]:
    """Forecasts at each share of the tokens. The actual finish: ``finish`` if given, else when
    the log reaches the plan's tokens (interpolated between its points; the log must get there)."""
    full = track_plan(pv, logs, sacct, None, sacct_text=sacct_text)
    pts = full.history.points
    order = np.argsort(pts[:, 0])
    t, tok = pts[order, 0], np.maximum.accumulate(pts[order, 2])
    if finish is None:
        if tok[-1] < pv.tokens:
            raise ValueError(f"the log ends at {tok[-1]:.4g} tokens, short of the plan's {pv.tokens:.4g}: "
                             "give the actual finish")
        finish = float(np.interp(pv.tokens, tok, t))
    rows = []
    for share in shares:
        when = float(np.interp(share * pv.tokens, tok, t))
        f = track_plan(pv, logs, sacct, when, sacct_text=sacct_text).forecast
        rows.append(BacktestRow(share, when, f.trained_by[1], f.trained_by[2], finish, full.observed.start))
    return rows
