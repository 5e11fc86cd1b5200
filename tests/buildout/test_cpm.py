"""CPM and the vectorized Monte Carlo against networkx and hand-made graphs."""

import networkx as nx
import numpy as np
import pytest

from clustertwin.buildout import load_profiles, load_steps
from clustertwin.buildout.cpm import compile_network, cpm, critical_path
from clustertwin.buildout.durations import effective_steps
from clustertwin.buildout.montecarlo import pert, simulate, triangular, uniforms
from clustertwin.buildout.quantities import derive_quantities
from clustertwin.errors import UsageError


def longest_path_nx(after, dur):
    g = nx.DiGraph()
    for n, ps in after.items():
        g.add_edge("s", n, weight=0.0)
        for p in ps:
            g.add_edge(p, n, weight=0.0)
    # node weights -> weight on the edge into a copy of each node
    h = nx.DiGraph()
    for u, v in g.edges:
        h.add_edge(u if u == "s" else ("out", u), ("in", v), weight=0.0)
    for n in after:
        h.add_edge(("in", n), ("out", n), weight=dur[n])
    return nx.dag_longest_path_length(h)


@pytest.mark.parametrize("profile", ["new-build", "existing-facility", "fast-track"])
@pytest.mark.parametrize("gpus", [1024, 100000])
def test_cpm_length_equals_longest_path(catalog, make_scenario, profile, gpus):
    q = derive_quantities(make_scenario(gpus, profile), catalog)
    steps = effective_steps(load_steps(), load_profiles(), profile, q)
    after = {n: s.after for n, s in steps.items()}
    net = compile_network(after, 195)
    m = np.array([steps[n].m for n in net.numbers])
    res = cpm(net, m)
    assert res.length == pytest.approx(longest_path_nx(after, {n: s.m for n, s in steps.items()}))
    assert (res.slack >= -1e-9).all()
    cp = critical_path(net, res)
    idx = net.index()
    assert cp[-1] == 195 and not after[cp[0]]
    assert all(a in after[b] for a, b in zip(cp, cp[1:], strict=False))
    assert all(abs(res.slack[idx[n]]) < 1e-6 for n in cp)
    assert sum(m[idx[n]] for n in cp) == pytest.approx(res.length)


def random_dag(rng, n=60):
    after = {
        i: sorted(set(rng.choice(i, size=min(i, 3), replace=False).tolist())) if i else []
        for i in range(n - 1)
    }
    after[n - 1] = list(range(n - 1))  # explicit sink, so no implicit go-live edges
    return after


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_vectorized_forward_matches_networkx_per_sample(seed):
    rng = np.random.default_rng(seed)
    after = random_dag(rng)
    sink = max(after)
    net = compile_network(after, sink)
    d = rng.uniform(1, 10, size=(net.size, 5))
    mc = simulate(net, d)
    for s in range(5):
        dur = {n: d[i, s] for i, n in enumerate(net.numbers)}
        assert mc.finish[s] == pytest.approx(longest_path_nx(after, dur))


def test_criticality_on_a_diamond():
    # 1 -> {2, 3} -> 4; 2 is longer than 3 in 3 samples out of 4
    net = compile_network({1: [], 2: [1], 3: [1], 4: [2, 3]}, 4)
    idx = net.index()
    d = np.zeros((4, 4))
    d[idx[1]] = 1
    d[idx[2]] = [5, 5, 5, 1]
    d[idx[3]] = [2, 2, 2, 4]
    d[idx[4]] = 1
    mc = simulate(net, d)
    crit = {n: mc.criticality[idx[n]] for n in net.numbers}
    assert crit == {1: 1.0, 2: 0.75, 3: 0.25, 4: 1.0}
    assert list(mc.finish) == [7, 7, 7, 6]


def test_cycle_and_unknown_predecessor_are_usage_errors():
    with pytest.raises(UsageError, match="cycle: "):
        compile_network({1: [3], 2: [1], 3: [2], 4: [3]}, 4)
    with pytest.raises(UsageError, match="unknown step 9"):
        compile_network({1: [9], 2: [1]}, 2)


def test_loose_ends_feed_go_live():
    net = compile_network({1: [], 2: [], 3: [1]}, 3)
    assert net.numbers[-1] == 3
    res = cpm(net, np.array([1.0, 5.0, 1.0])[[net.index()[n] - 0 for n in (1, 2, 3)]])
    assert res.length >= 5.0


def test_samplers_match_their_means():
    o, m, p = np.array([2.0, 5.0, 3.0]), np.array([4.0, 5.0, 6.0]), np.array([9.0, 5.0, 12.0])
    t = triangular(o, m, p, uniforms(0, 3, 200_000))
    assert (t.min(axis=1) >= o - 1e-12).all()
    assert (t.max(axis=1) <= p + 1e-12).all()
    assert t.mean(axis=1) == pytest.approx((o + m + p) / 3, rel=5e-3)
    b = pert(o, m, p, 0, 200_000)
    assert b.mean(axis=1) == pytest.approx((o + 4 * m + p) / 6, rel=5e-3)


def test_rows_drawn_on_demand_are_the_matrix_rows():
    """Issue 25: the build-out Monte Carlo draws each step's durations when a pass reads them
    (no N x S uniform matrix): bit for bit the rows of the shared-matrix computation, in any
    step order, and the same Monte Carlo result."""
    from clustertwin.buildout.montecarlo import TriangularRows

    rng = np.random.default_rng(4)
    numbers = [5, 2, 7, 1, 3]
    o = rng.uniform(1, 5, 5)
    m = o + rng.uniform(0, 5, 5)
    p = m + rng.uniform(0, 5, 5)
    p[2] = m[2] = o[2]  # a fixed duration
    whole = triangular(o, m, p, uniforms(11, 8, 300)[np.asarray(numbers) - 1])
    rows = TriangularRows(o, m, p, numbers, 11, 300)
    for i in (3, 0, 4, 1, 2, 0):
        assert rows[i].tobytes() == whole[i].tobytes()
    net = compile_network({5: [], 2: [5], 7: [5], 1: [2, 7], 3: [1]}, 3)
    order = [numbers.index(n) for n in net.numbers]
    a, b = simulate(net, whole[order]), simulate(net, TriangularRows(o[order], m[order], p[order],
                                                                      list(net.numbers), 11, 300))
    assert a.finish.tobytes() == b.finish.tobytes()
    assert a.criticality.tobytes() == b.criticality.tobytes()


@pytest.mark.parametrize("omp", [(2.0, 2.0, 7.0), (2.0, 7.0, 7.0), (0.0, 0.0, 0.0), (0.0, 1.5, 4.0),
                                 (3.0, 3.0, 3.0), (0.25, 0.5, 1e6)],
                         ids=["mode at low end", "mode at high end", "all zero", "from zero",
                              "fixed", "long tail"])
def test_rows_take_one_branch_each_bit_for_bit(omp):
    """The on-demand rows pick the inverse-CDF branch arithmetically (one square root per
    sample); edge shapes where one branch is empty or both are zero stay bit for bit."""
    from clustertwin.buildout.montecarlo import TriangularRows

    o, m, p = (np.array([v, 1.0]) for v in omp)
    m[1], p[1] = 2.0, 4.0
    whole = triangular(o, m, p, uniforms(3, 2, 5000))
    rows = TriangularRows(o, m, p, [1, 2], 3, 5000)
    for i in (0, 1):
        assert rows[i].tobytes() == whole[i].tobytes()
