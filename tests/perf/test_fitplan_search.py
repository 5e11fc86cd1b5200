"""The refit's coordinate search (perf.fitplan): the grid it tries per key and the memo of row
residuals it shares between folds; both leave the fitted values unchanged, only sooner."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from clustertwin.perf import fitplan


def test_trials_skip_the_current_value_and_repeats():
    assert fitplan._trials(0.5, 0.0, 1.0, 1.0) == pytest.approx([0.0, 0.25, 0.75, 1.0])
    # clipped at the upper bound: 1.125 and 1.25 both become 1.1, tried once
    assert fitplan._trials(1.0, 0.6, 1.1, 0.5) == pytest.approx([0.75, 0.875, 1.1])


def test_objective_memo_prices_each_row_once_per_point(monkeypatch):
    calls = []

    def fake_predict(catalog, p, values):
        calls.append((p.row.id, values["k"]))
        return SimpleNamespace(err=p.row.scale * values["k"])

    monkeypatch.setattr(fitplan, "predict", fake_predict)
    monkeypatch.setattr(fitplan, "time_log", lambda res: res.err)
    rows = [SimpleNamespace(row=SimpleNamespace(id=i, source="s", scale=s), stack="megatron",
                            generation="hopper") for i, s in ((1, 0.1), (2, -0.3))]
    memo: dict = {}
    a = fitplan._objective(None, rows, {"k": 1.0}, memo)
    b = fitplan._objective(None, rows, {"k": 1.0}, memo)
    assert a == b == fitplan._objective(None, rows, {"k": 1.0})
    assert a == pytest.approx((0.1 + 0.3) / 2 + 0.5 * abs((0.1 - 0.3) / 2))
    assert calls.count((1, 1.0)) == 2  # once through the memo, once without it
    # a key that does not apply to these rows (another generation's, another stack's) reuses
    # their residuals; one that applies prices them again
    n = len(calls)
    fitplan._objective(None, rows, {"k": 1.0, "blackwell:x": 2.0, "stack:fsdp:y": 1.0}, memo)
    assert len(calls) == n
    fitplan._objective(None, rows, {"k": 1.0, "stack:megatron@hopper:y": 1.0}, memo)
    assert len(calls) == n + 2
