"""Published whole-run figures (GPU-hours including downtime, evaluation and ramp-up) against the
wall-clock prediction: steady-state time divided by training.goodput's parts
(reliability.goodput.row_goodput). Steady-state rows are judged against steady state elsewhere
(test_perf_published, tests/perf/test_crossval). Rows: Llama 2 70B (model card: 1,720,320 A100
GPU-hours for 2T tokens), DeepSeek-V3 (report: 180K H800 GPU-hours per trillion tokens), BLOOM-176B
(Luccioni et al. 2022: 1,082,990 A100 GPU-hours, 118 days on 384 GPUs)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from clustertwin.perf import crossval as cv
from clustertwin.perf.calreport import published_rows
from clustertwin.reliability.goodput import row_goodput

#: whole-run figures are loose anchors (perf.calibration: +-35%); what goodput leaves is the
#: steady-state model's own error on these runs and downtime beyond the failure profile
WHOLE_RUN_TOLERANCE = 0.25


@pytest.fixture(scope="module")
def whole(catalog):
    res = cv.cross_validate(catalog, published_rows(), goodput=lambda r: row_goodput(catalog, r))
    return [r for r in res if not cv.steady_state(r.result.row)]


def test_at_least_three_whole_run_rows(whole):
    assert len(whole) >= 3 and len({r.source for r in whole}) >= 3


def test_whole_run_rows_within_tolerance_of_wall_clock(whole):
    for r in whole:
        err = float(np.expm1(r.wall_residual))
        assert abs(err) <= WHOLE_RUN_TOLERANCE, (r.result.row.id, err, r.goodput)


def test_goodput_brings_whole_run_rows_closer(whole):
    """Each part is <= 1, so the wall-clock prediction is slower than steady state; on these
    rows (published slower than steady state on average) the mean error shrinks."""
    s = cv.whole_run_summary(whole)
    assert s["rows"] == len(whole)
    assert all(0 < v <= 1 for r in whole for v in r.goodput.values())
    assert abs(s["goodput_mean_signed_err"]) < abs(s["steady_mean_signed_err"])
    assert s["goodput_median_abs_err"] < s["steady_median_abs_err"]


def test_calibration_cv_json_reports_both(monkeypatch):
    from clustertwin.cli import app

    res = CliRunner().invoke(app, ["calibration", "--cv", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    w = out["whole_run"]
    assert w["rows"] >= 3
    for key in ("steady_median_abs_err", "goodput_median_abs_err", "steady_mean_signed_err",
                "goodput_mean_signed_err"):
        assert key in w
    rows = [r for r in out["rows"] if r["whole_run"]]
    assert rows and all(r["wall_clock_error"] is not None and r["goodput_parts"] for r in rows)
    assert all(r["wall_clock_error"] is None for r in out["rows"] if not r["whole_run"])
    assert out["summary"]["rows"] == len(out["rows"]) - len(rows)  # the summary stays steady-state
