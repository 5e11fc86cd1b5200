"""What the build-out keeps between calls (scratch blocks, compiled graphs, step inputs) never
changes an answer: a plan made after others is bit for bit the one made first."""

import dataclasses

import numpy as np
import pytest

from clustertwin.buildout import load_profiles, load_steps, plan_buildout
from clustertwin.buildout.cpm import compile_network
from clustertwin.buildout.durations import effective_steps, step_inputs
from clustertwin.buildout.montecarlo import (
    TriangularRows,
    drop_spares,
    simulate,
    triangular,
    uniforms,
)
from clustertwin.buildout.quantities import derive_quantities
from clustertwin.errors import UsageError


def test_plan_after_other_plans_is_bit_for_bit_the_first(catalog, make_scenario):
    """A fresh process's plan (no spare blocks) against the same plan after plans of another
    seed, size and sample count have handed their blocks back: the same bytes."""
    drop_spares()
    first = plan_buildout(make_scenario(2048, seed=7), catalog, samples=3000).to_contract()
    plan_buildout(make_scenario(8192, seed=8), catalog, samples=3000, what_if="gpu_lead_time_days=+30")
    plan_buildout(make_scenario(2048, seed=9), catalog, samples=2000)
    again = plan_buildout(make_scenario(2048, seed=7), catalog, samples=3000).to_contract()
    assert repr(again) == repr(first)


def test_rows_after_release_are_drawn_again_bit_for_bit():
    """Rows read after the kept block went back (and was written by another run) are drawn
    again, equal to the shared-matrix rows."""
    o, m, p = np.array([1.0, 2.0, 0.5]), np.array([2.0, 2.0, 3.0]), np.array([4.0, 2.0, 9.0])
    numbers = [3, 1, 2]
    whole = triangular(o, m, p, uniforms(5, 3, 400)[np.asarray(numbers) - 1])
    rows = TriangularRows(o, m, p, numbers, 5, 400)
    assert rows[0].tobytes() == whole[0].tobytes()
    rows.release()
    net = compile_network({1: [], 2: [1], 3: [2]}, 3)
    simulate(net, TriangularRows(o, m, p, [1, 2, 3], 6, 400))  # takes and returns a block
    for i in (2, 0, 1):
        assert rows[i].tobytes() == whole[i].tobytes()


def test_step_inputs_remembered_per_arguments(catalog, make_scenario):
    """The remembered step inputs are a new dict each time, and each set of quantities and
    crews gets its own (a cluster 1 MW larger, or twice the crews, is not the last answer)."""
    book, profiles = load_steps(), load_profiles()
    q = derive_quantities(make_scenario(1024), catalog)
    a = effective_steps(book, profiles, "new-build", q)
    a.clear()
    assert effective_steps(book, profiles, "new-build", q) == step_inputs(book, profiles, "new-build", q)
    bigger = dataclasses.replace(q, it_mw=q.it_mw + 1.0)
    for args in ((bigger, 1.0), (q, 2.0), (bigger, 2.0), (q, 1.0)):
        got = effective_steps(book, profiles, "new-build", args[0], crew_multiplier=args[1])
        assert got == step_inputs(book, profiles, "new-build", args[0], crew_multiplier=args[1])
    moved = effective_steps(book, profiles, "new-build", bigger)
    assert any(s.quantity == "it_mw" and s.quantity_value == q.it_mw + 1.0 for s in moved.values())


def test_compiled_graph_remembered_and_errors_raised_each_time():
    """One graph compiled once (the same immutable Network); a cycle is refused on every call."""
    after = {1: [], 2: [1], 3: [1], 4: [2, 3]}
    assert compile_network(after, 4) is compile_network(dict(after), 4)
    for _ in range(2):
        with pytest.raises(UsageError, match="cycle"):
            compile_network({1: [3], 2: [1], 3: [2], 4: [3]}, 4)
