"""Capacity waves: when each scalable unit's share of the GPUs passes acceptance.

The build-out schedule installs servers and network lot by lot once power and cooling are
ready. A cluster that starts training on its first halls (the largest clusters of 2024-26 did)
sees capacity in waves: the installation window (power and cooling ready -> go-live, from the
deterministic schedule) is split evenly over the waves and the last wave lands on the Monte
Carlo go-live. Assumption: installation and acceptance time scales with the GPUs installed;
fixed steps inside the window (software, readiness) are spread with them.
"""

from __future__ import annotations

import datetime as _dt
import math
from typing import Any

#: facility phases of the step book (Power, Cooling) whose finish opens the installation window
FACILITY_PHASES = (3, 4)
#: most waves reported; scalable units beyond this are grouped
MAX_WAVES = 8


def wave_count(units: int | None) -> int:
    """Waves for a cluster of ``units`` scalable units (1 to :data:`MAX_WAVES`)."""
    return max(1, min(int(units or 1), MAX_WAVES))


def install_window_days(steps: Any, deterministic_days: float) -> float:
    """Days from power and cooling ready to go-live on the deterministic schedule (0 if none)."""
    ready = [s.earliest_finish_days for s in steps if s.phase in FACILITY_PHASES and s.applicable]
    if not ready:
        return 0.0
    return max(0.0, float(deterministic_days) - max(ready))


def waves(start: _dt.date, go_live_days: float, window_days: float, gpus: int, n: int) -> tuple[dict[str, Any], ...]:
    """``n`` waves ``{date, gpus, days, cumulative_gpus}``; the last on ``go_live_days``.
    GPUs split as evenly as whole counts allow (earlier waves take the remainder)."""
    n = max(1, min(n, max(gpus, 1)))
    window = min(max(window_days, 0.0), go_live_days)
    base, extra = divmod(gpus, n)
    out, total = [], 0
    for k in range(1, n + 1):
        days = go_live_days - window * (n - k) / n
        g = base + (1 if k <= extra else 0)
        total += g
        date = start + _dt.timedelta(days=math.ceil(days - 1e-9))
        out.append({"date": date.isoformat(), "gpus": g, "days": days, "cumulative_gpus": total})
    return tuple(out)
