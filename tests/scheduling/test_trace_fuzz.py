"""Property tests (issue 15): any bytes, and any rows of hostile cells, in every trace format
give a workload of finite, non-negative jobs with every row accounted for, or one-line errors."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clustertwin.errors import UserError
from clustertwin.scheduling.traces import load_trace

CELLS = st.one_of(st.sampled_from(["nan", "inf", "-inf", "-5", "0", "1e400", "99999999999", "1.5",
                                   "", "x", "1e-320", "Unknown", "None", "UNLIMITED", "1-99:99:99",
                                   "2025-02-30T00:00:00", "2025-03-03T08:00:00", "gres/gpu=8",
                                   "gres/gpu=nan", "LS", "7"]),
                  st.floats(allow_nan=True).map(repr), st.integers(-10**30, 10**30).map(str))
HEADERS = {
    ".csv": ["job_id", "submit_s", "gpus", "duration_s", "team", "qos", "requested_s"],
    ".sacct": ["JobID", "Submit", "Start", "End", "ElapsedRaw", "Timelimit", "AllocTRES", "State"],
    ".openb.csv": ["name", "num_gpu", "gpu_milli", "creation_time", "scheduled_time", "deletion_time", "qos"],
    ".sia.csv": ["name", "time", "application", "num_replicas"],
    ".trace": None,
}


def _check(w) -> None:  # noqa: ANN001
    assert np.isfinite(w.submit_s).all() and np.isfinite(w.duration_s).all()
    assert (w.duration_s > 0).all() and (w.gpus_milli > 0).all()
    rep = w.report
    assert rep.jobs == len(w)
    assert rep.jobs + rep.rows_rejected + sum(rep.skipped.values()) == rep.rows_read


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(fmt=st.sampled_from(sorted(HEADERS)), rows=st.lists(st.lists(CELLS, min_size=4, max_size=8),
                                                             min_size=1, max_size=6))
def test_hostile_rows(tmp_path_factory, fmt: str, rows: list[list[str]]) -> None:
    header = HEADERS[fmt]
    sep = {".sacct": "|", ".trace": "\t"}.get(fmt, ",")
    body = []
    for r in rows:
        width = len(header) if header else 7
        body.append(sep.join((r * 2)[:width]))
    text = "\n".join(([sep.join(header)] if header else []) + body) + "\n"
    p = tmp_path_factory.mktemp("tr") / ("t" + (".trace" if fmt == ".trace" else ".sacct" if fmt == ".sacct" else ".csv"))
    p.write_text(text)
    _load_and_check(p)


def _load_and_check(p) -> None:
    """Either a one-line-per-problem UserError, or a workload that passes _check."""
    try:
        w = load_trace(str(p))
    except UserError as exc:
        assert all("\n" not in line for line in exc.lines())
        return
    _check(w)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=st.binary(max_size=400), suffix=st.sampled_from([".csv", ".sacct", ".trace", ".txt"]))
def test_raw_bytes(tmp_path_factory, raw: bytes, suffix: str) -> None:
    p = tmp_path_factory.mktemp("tr") / f"t{suffix}"
    p.write_bytes(raw)
    _load_and_check(p)
