"""A synthetic cluster with planted faults is diagnosed exactly, with no false alarms."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clustertwin.acceptance.grade import Imported, health
from clustertwin.acceptance.importers import burnin, dcgm, ibnet, nccl
from clustertwin.acceptance.importers.ibnet import link_key
from clustertwin.acceptance.synthetic import Plants, synthesize
from clustertwin.acceptance.wiring import compare


def _diagnose(plan, model, nodes, designed, plants, seed):
    meas = synthesize(model, plan, nodes, designed, plants, seed)
    b, _ = burnin.parse(meas.burnin_csv, "burnin.csv")
    runs = [dcgm.parse(d, f"dcgm-{n}.json")[0] for n, d in meas.dcgm.items()]
    logs = [nccl.parse_text(t, f"nccl-{n}.txt")[0] for n, t in meas.nccl.items()]
    seen, _ = ibnet.parse(meas.ibnet, "ib.out")
    wiring = compare(designed, seen)
    return health(plan, model, Imported(b, runs, logs, wiring, []), nodes), wiring


def _key(link):
    a, ap, b, bp, _ = link
    return link_key(f"{a}:{ap}", f"{b}:{bp}")


@st.composite
def plants(draw, nodes, designed):
    gpn = 8
    node_links = [i for i, lk in enumerate(designed) if not str(lk[1]).isdigit()]
    slots = draw(st.lists(st.integers(0, len(nodes) * gpn - 1), min_size=5, max_size=5, unique=True))
    slow = tuple((nodes[s // gpn], s % gpn) for s in slots)
    picked = draw(st.lists(st.sampled_from(node_links), min_size=4, max_size=4, unique=True))
    bad, crossed = tuple(picked[:2]), ((picked[2], picked[3]),)
    missing = tuple(i for i in bad if draw(st.booleans()))
    return Plants(slow, bad, missing, crossed)


def test_five_slow_two_bad_one_crossed_exactly(plan, model, nodes, designed):
    p = Plants(slow_gpus=(("gpu0003", 2), ("gpu0010", 7), ("gpu0011", 0), ("gpu0040", 5), ("gpu0064", 1)),
               bad_links=(5, 40), missing=(40,), crossed=((8, 300),))
    rep, wiring = _diagnose(plan, model, nodes, designed, p, seed=3)
    _check(rep, wiring, p, designed, nodes)
    acts = rep.actions()
    assert any(a.startswith("re-seat or replace these 2 cable(s)") for a in acts)
    assert any(a.startswith("swap the ends of these 1 crossed cable pair(s)") for a in acts)


def _check(rep, wiring, p, designed, nodes):
    flagged = {(s["node"], s["gpu"]) for s in rep.stragglers(limit=1000)}
    assert flagged == set(p.slow_gpus)
    degraded = {k for k, *_ in wiring.degraded}
    assert degraded == {_key(designed[i]) for i in p.bad_links if i not in p.missing}
    assert set(wiring.missing) == {_key(designed[i]) for i in p.missing}
    assert set(wiring.crossed) == {tuple(sorted((_key(designed[i]), _key(designed[j])))) for i, j in p.crossed}
    assert wiring.extra == ()
    # no false alarms: every node without a planted slow GPU or bad link passes
    suspects = {n for n, _ in p.slow_gpus} | {designed[i][0] for i in p.bad_links}
    for n in nodes:
        grade = rep.nodes[n][0]
        assert (grade == "pass") == (n not in suspects), (n, rep.nodes[n])
    assert set(rep.drain()) <= {n for n, _ in p.slow_gpus}


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), seed=st.integers(0, 2**16))
def test_random_plants_diagnosed_exactly(plan, model, nodes, designed, data, seed):
    p = data.draw(plants(nodes, designed))
    rep, wiring = _diagnose(plan, model, nodes, designed, p, seed)
    _check(rep, wiring, p, designed, nodes)
