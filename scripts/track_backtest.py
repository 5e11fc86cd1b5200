"""Back-test ``clustertwin track``: replay a run with ``--as-of`` at 10/25/50/75% of its tokens and
print each forecast against the actual finish.

    python scripts/track_backtest.py SCENARIO --log FILE... [--sacct FILE] [--finish DATETIME]
    python scripts/track_backtest.py SCENARIO --synthetic N [--step-factor F] [--rate-factor F]

With ``--synthetic N`` the runs are generated from the scenario's own plan (step time x F,
interruption rate x F; clustertwin.track.synthetic) with seeds 0..N-1 and their true finish.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def _print(rows, label: str) -> None:
    from clustertwin.track.records import iso

    for r in rows:
        print(f"{label:>10} {r.share:5.0%}  as of {iso(r.as_of)[:16]}  P50 {iso(r.p50)[:16]}  "
              f"P90 {iso(r.p90)[:16]}  actual {iso(r.finish)[:16]}  P50 error {r.p50_error:+6.2%}  "
              f"P90 {'covers' if r.covered else 'MISSES'}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scenario")
    ap.add_argument("--log", action="append", type=Path, default=[])
    ap.add_argument("--sacct", type=Path)
    ap.add_argument("--finish", help="the run's actual finish (ISO 8601) when the log stops short")
    ap.add_argument("--synthetic", type=int, default=0)
    ap.add_argument("--step-factor", type=float, default=1.0)
    ap.add_argument("--rate-factor", type=float, default=1.0)
    a = ap.parse_args(argv)
    from clustertwin.plan import make_plan
    from clustertwin.scenario.load import load_inputs
    from clustertwin.track.backtest import SHARES, backtest
    from clustertwin.track.planview import plan_view
    from clustertwin.track.records import parse_time
    from clustertwin.track.synthetic import generate

    scen, cat = load_inputs(a.scenario)
    pv = plan_view(make_plan(scen, cat), scen.source)
    if a.log:
        _print(backtest(pv, a.log, a.sacct, finish=parse_time(a.finish) if a.finish else None), "log")
        return 0
    stats = {s: [] for s in SHARES}
    for seed in range(a.synthetic):
        run = generate(pv, seed, step_factor=a.step_factor, rate_factor=a.rate_factor)
        rows = backtest(pv, [("run.log", run.log)], "job.sacct", sacct_text=run.sacct, finish=run.finish)
        _print(rows, f"seed {seed}")
        for r in rows:
            stats[r.share].append(r)
    for share, rows in stats.items():
        if rows:
            err = [abs(r.p50_error) for r in rows]
            print(f"at {share:4.0%}: median |P50 error| {sorted(err)[len(err) // 2]:.2%}, worst {max(err):.2%}, "
                  f"P90 covers {sum(r.covered for r in rows)}/{len(rows)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
