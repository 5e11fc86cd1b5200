"""The plan.html figures show what they claim: parts stack to the whole, memory to the GPU's
capacity, the power flow conserves power, interruptions are counted per week by cause."""

from __future__ import annotations

import pytest

from clustertwin.report import figures, figures_flow
from clustertwin.report.labels import looks_like_code_name


def _names(fig):
    return [t.name for t in fig.data if t.name]


def test_step_time_stacks_the_parts_without_the_total(default_plan):
    t = default_plan.training
    fig = figures.step_time_figure(t)
    assert fig.layout.barmode == "stack"
    parts = {k: v for k, v in t.time_breakdown_s.items() if k != "step_s" and v > 0}
    assert len(fig.data) == len(parts)
    assert sum(tr.x[0] for tr in fig.data) == pytest.approx(sum(parts.values()))
    assert "Whole step" not in _names(fig)
    assert f"{t.step_time_s:.2f} s" in fig.layout.title.text
    assert not [n for n in _names(fig) if looks_like_code_name(n)]


def test_memory_stacks_to_the_gpu_capacity(default_plan, catalog):
    t = default_plan.training
    cap = catalog.gpu(default_plan.scenario.cluster.gpu).hbm_gib
    parts = figures.memory_parts(t, cap)
    assert sum(v for _, v in parts) == pytest.approx(max(cap, t.memory_gib_per_gpu))
    assert parts[-1][0] == "Free"
    used = sum(v for _, v in parts[:-1])
    assert used == pytest.approx(t.memory_gib_per_gpu)  # the breakdown plus what it leaves out
    fig = figures.memory_figure(t, cap, "H100")
    assert f"{cap:.0f} GiB" in fig.layout.title.text
    assert not [n for n in _names(fig) if looks_like_code_name(n)]


def test_memory_over_capacity_leaves_nothing_free():
    class T:
        memory_breakdown_gib = {"weights_grads_optimizer": 60.0, "activations": 30.0}
        memory_gib_per_gpu = 90.0

    parts = dict(figures.memory_parts(T, 80.0))
    assert parts["Free"] == 0.0
    assert parts["Weights, gradients and optimizer state"] == 60.0


def test_weekly_counts_name_the_top_causes_and_group_the_rest():
    causes = ["a"] * 6 + ["b"] * 5 + ["c"] * 4 + ["d"] * 3 + ["e"] * 2 + ["f"] + ["g"]
    timeline = [(10.0 + 30.0 * i, c, 0, 0, 0) for i, c in enumerate(causes)] + [(700.0, "end", 0, 0, 0)]
    weeks, counts = figures.weekly_counts(timeline, top=5)
    assert weeks == [1, 2, 3, 4, 5]  # 700 h is in the fifth week
    assert list(counts)[:5] == ["a", "b", "c", "d", "e"]
    assert sum(counts["other causes"]) == 2
    assert sum(sum(v) for v in counts.values()) == len(causes)
    assert counts["a"][0] == 6  # hours 10..160: all in the first week


def test_interruptions_figure_of_the_default_plan(default_plan):
    r = default_plan.reliability
    fig = figures.interruptions_figure(r)
    events = sum(1 for e in r.timeline if e[1] != "end")
    assert sum(sum(tr.y) for tr in fig.data) == events
    assert len(fig.data) <= figures.TOP_CAUSES + 1
    assert not [n for n in _names(fig) if looks_like_code_name(n)]


def test_ettr_marks_are_legend_entries_not_annotations(default_plan):
    fig = figures.ettr_figure(default_plan.reliability)
    assert not fig.layout.annotations  # nothing printed in the plot area that could collide
    names = _names(fig)
    assert any(n.startswith("Young:") for n in names) and any(n.startswith("Daly:") for n in names)


def test_power_flow_conserves_power(default_plan):
    p = default_plan.design.power
    nodes, links = figures_flow.power_links(p)
    into = {i: sum(kw for _, t, kw in links if t == i) for i in range(len(nodes))}
    out = {i: sum(kw for s, _, kw in links if s == i) for i in range(len(nodes))}
    for i, name in enumerate(nodes):
        if into[i] and out[i]:  # every stage in between passes on what it receives
            assert out[i] == pytest.approx(into[i]), name
    loads = [kw for s, _, kw in links if nodes[s] == "Rack PDUs"]
    assert sum(loads) == pytest.approx(p.it_kw, rel=1e-6)
    assert into[nodes.index("Cooling and facility overhead")] == pytest.approx(p.facility_kw - p.it_kw)
    fig = figures_flow.power_flow_figure(default_plan.design)
    assert fig.data[0].type == "sankey"


def test_economics_categories_in_words(default_plan):
    for _, fig in figures_flow.economics_figures(default_plan.economics):
        for tr in fig.data:
            assert not [x for x in tr.x if looks_like_code_name(str(x))]


def test_fabric_figure_counts_in_words(default_plan):
    d = default_plan.design
    fig = figures_flow.fabric_figure(d)
    bars = dict(zip(fig.data[0].y, fig.data[0].x, strict=True))
    assert bars == {"Nodes": d.nodes, "Leaf switches": d.fabric.leaf, "Spine switches": d.fabric.spine,
                    "Core switches": d.fabric.core}
    assert fig.layout.xaxis.type != "log"


def test_cash_figure_accumulates_each_route(default_plan):
    dec = default_plan.decision
    fig = figures_flow.cash_figure(dec)
    assert len(fig.data) == len(dec.options)
    for tr, o in zip(fig.data, dec.options, strict=True):
        assert tr.y[-1] == pytest.approx(sum(o.cash_flow_usd_per_month) / 1e6)
        assert not looks_like_code_name(tr.name)
    assert sum(tr.name.endswith("(best)") for tr in fig.data) == (dec.best is not None)
