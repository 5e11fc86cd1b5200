"""Choosing (requirements, objective, Pareto set) and the flat table's rules."""

from __future__ import annotations

import pyarrow as pa
import pytest

from clustertwin.errors import UsageError
from clustertwin.sweep.choose import choose, pareto_front, parse_requirement
from clustertwin.sweep.table import build_table, flatten


def test_pareto_front_by_hand():
    # (days, cost): A(10, 9) B(20, 5) C(30, 6) D(15, 9) E(40, 1); C is beaten by B, D by A
    days = [10.0, 20.0, 30.0, 15.0, 40.0]
    cost = [9.0, 5.0, 6.0, 9.0, 1.0]
    assert pareto_front(cost, days, list(range(5))) == [0, 1, 4]


def _table(**cols):
    return pa.table({**cols, "error": [None] * len(next(iter(cols.values())))})


def test_choose_ranks_feasible_rows():
    t = _table(**{"reliability.effective_days": [100.0, 130.0, 90.0, None],
                  "economics.run_cost_owned_usd": [5e6, 1e6, 8e6, 2e5],
                  "point": ["a", "b", "c", "d"]})
    ch = choose(t, "run_cost_owned_usd", [parse_requirement("reliability.effective_days<=120")])
    assert ch.feasible == (0, 2) and ch.ranked == (0, 2) and ch.best == 0
    assert ch.pareto == (2, 0)  # c is fastest, a is cheaper and slower
    by_days = choose(t, "effective_days")
    assert by_days.best == 2 and by_days.cost_column == "economics.run_cost_owned_usd"


@pytest.mark.parametrize("text", ["reliability.effective_days<<120", "days<=abc", "<=3", ""])
def test_bad_requirement(text):
    with pytest.raises(UsageError):
        parse_requirement(text)


def test_bad_objective():
    with pytest.raises(UsageError, match="expected one of"):
        choose(_table(x=[1]), "cheapest")


def test_flatten_rules():
    flat = flatten({"a": {"b": 1, "c": {"d": 2.5}}, "l": [3, 1], "t": [{"x": 1}], "n": float("nan")})
    assert flat == {"a.b": 1, "a.c.d": 2.5, "l": "[3, 1]", "n": None}


def test_table_types_and_collisions():
    rows = [{"training.gpus": 8, "x.v": 1, "error": None}, {"training.gpus": 16, "x.v": 2.5, "error": None},
            {"error": "boom"}]
    t = build_table(["training.gpus", "cluster.gpus"], [{"training.gpus": 8, "cluster.gpus": 8}] * 3, rows,
                    ["p0", "p1", "p2"])
    assert t.column_names == ["scenario.training.gpus", "cluster.gpus", "training.gpus", "x.v", "point", "error"]
    assert t.schema.field("x.v").type == pa.float64() and t.schema.field("training.gpus").type == pa.int64()
    assert t.column("error").to_pylist() == [None, None, "boom"]
