"""Fat-tree counting rule: unit cases and properties (hypothesis)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clustertwin.design.fabric import leaf_split, max_endpoints, size_fabric
from clustertwin.errors import InfeasibleError, ScenarioError


def test_single_switch_when_it_fits():
    f = size_fabric(40, 64)
    assert (f.tiers, f.leaf, f.spine, f.core) == (1, 1, 0, 0)


def test_leaf_split_respects_requested_ratio():
    assert leaf_split(64, 1.0) == (32, 32)
    d, u = leaf_split(64, 3.0)
    assert (d, u) == (48, 16) and d / u <= 3.0
    d, u = leaf_split(64, 4 / 3)
    assert d / u <= 4 / 3 + 1e-9


def test_oversubscription_reaches_more_endpoints():
    assert max_endpoints(64, 3, 3.0) > max_endpoints(64, 3, 1.0)
    f = size_fabric(3000, 64, 3.0)
    assert f.tiers == 2 and f.oversubscription <= 3.0


def test_oversubscription_below_one_is_a_user_error():
    with pytest.raises(ScenarioError, match="below 1"):
        size_fabric(100, 64, 0.5)


def test_past_three_tiers_names_limit_and_nearest_changes():
    with pytest.raises(InfeasibleError) as exc:
        size_fabric(65_537, 64, source="s.yaml")
    msg = str(exc.value)
    assert "65,536" in msg and "oversubscription" in msg and "ports" in msg
    assert msg.startswith("s.yaml: cluster.fabric.technology:")


def _per_switch_ports(f):
    leaf = f.leaf_down + f.leaf_up
    spine = max((u for _, u in f.spine_groups), default=0)
    core = max((u for _, u in f.core_groups), default=0)
    return leaf, spine, core


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 200_000), st.sampled_from([32, 40, 64, 128, 144]),
       st.sampled_from([1.0, 1.5, 2.0, 3.0]))
def test_no_tier_exceeds_radix_and_ports_fit(endpoints, k, r):
    if endpoints > max_endpoints(k, 3, r):
        with pytest.raises(InfeasibleError):
            size_fabric(endpoints, k, r)
        return
    f = size_fabric(endpoints, k, r)
    assert all(p <= k for p in _per_switch_ports(f))
    assert f.leaf * f.leaf_down >= endpoints
    # every leaf uplink lands on a spine port, every spine uplink on a core port
    assert sum(n * u for n, u in f.spine_groups) >= f.leaf_spine_links
    if f.tiers == 3:
        assert f.core * k >= f.spine_core_links


@settings(max_examples=120, deadline=None)
@given(st.integers(1, 60_000), st.integers(1, 5_000), st.sampled_from([64, 128, 144]))
def test_more_endpoints_never_fewer_switches_or_links(n, extra, k):
    if n + extra > max_endpoints(k, 3):
        return
    a, b = size_fabric(n, k), size_fabric(n + extra, k)
    assert b.switches >= a.switches
    assert b.links >= a.links
    assert (b.leaf, b.spine + b.core) >= (a.leaf, 0) and b.leaf >= a.leaf


def test_port_map_unique_small():
    f = size_fabric(1000, 64)
    assert f.leaf == int(np.ceil(1000 / 32))
