"""Cables by medium in the design result (issues 22, 36): ``design.cabling`` and the bill of
materials count links, cables and one medium per link class in closed form, without placing the
site; placed and routed (``cabling.csv``, ``summary.routed``), the site has the same links and
cables per medium, and every routed link is within its class's bound and its medium's reach."""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from types import SimpleNamespace

import numpy as np
import pytest

from clustertwin.design.media import load_media
from clustertwin.design.rules import load_rules
from clustertwin.design.site.cable_runs import runs
from clustertwin.design.site.cabling import _ends, cabling_groups
from clustertwin.design.site.inventory import build_inventory
from clustertwin.design.site.summary import routed
from clustertwin.export.stage import make_context
from clustertwin.export.tables import cabling_files
from export.helpers import catalog, design_of, scenario

CASES = [("1024-h100", 1024, {}), ("1008-gb200", 1008, {"node": "gb200-nvl72", "gpu": "gb200"}),
         ("16k-h100", 16_384, {})]

#: (id, GPUs, cluster keys): sizes from a leaf pair to 100K GPUs, H100 / A100 / B200 / GB200
#: NVL72 / MI300X, InfiniBand NDR / HDR / XDR and RoCE, rail-optimized, ToR fat tree, pods
SITES = [
    ("64-h100-leaf-pair", 64, {}),
    ("256-a100-hdr", 256, {"node": "dgx-a100", "gpu": "a100-sxm-80gb", "fabric": {"technology": "ib-hdr"}}),
    ("2048-h100-ndr", 2048, {}),
    ("4608-gb200-xdr", 4608, {"node": "gb200-nvl72", "gpu": "gb200",
                              "fabric": {"technology": "ib-xdr"}}),
    ("8192-b200", 8192, {"node": "dgx-b200", "gpu": "b200"}),
    ("4096-h100-roce-tor", 4096, {"fabric": {"technology": "roce-400g", "topology": "fat-tree"}}),
    ("3072-mi300x-roce", 3072, {"node": "mi300x-platform", "gpu": "mi300x",
                                "fabric": {"technology": "roce-400g"}}),
    ("16k-h100-pods", 16_384, {"fabric": {"pod_gpus": 4096}}),
    ("32k-h100", 32_768, {}),
    ("100k-gb200-xdr", 100_008, {"node": "gb200-nvl72", "gpu": "gb200",
                                 "fabric": {"technology": "ib-xdr"}}),
]


def _placed(d):
    """Per link class of the placed site: links, distinct cables, and each link's lower-end
    rack and routed length."""
    inv = build_inventory(SimpleNamespace(name="c"), catalog(), d)
    out: dict[str, dict] = {}
    for g in cabling_groups(inv, d):      # a kind may come in several groups (one per plane)
        a, b, copper, gbps, cid = _ends([g])
        if not a.size:
            continue
        length, _ = runs(inv, load_rules(), a, b, gbps, copper)
        k = out.setdefault(g.kind, {"links": 0, "cables": 0, "rack": [], "length": []})
        k["links"] += int(a.size)
        k["cables"] += int(np.unique(cid).size)
        k["rack"].append(inv.rack_index[a])
        k["length"].append(length)
    for k in out.values():
        k["rack"], k["length"] = np.concatenate(k["rack"]), np.concatenate(k["length"])
    return out


def _band_lengths(c, placed) -> np.ndarray:
    """Routed lengths of the links of band ``c`` (by their lower end's rack)."""
    k = placed[c.kind]
    return k["length"][np.isin(k["rack"], c.racks)] if c.racks else k["length"]


@pytest.fixture(scope="module", params=SITES, ids=[s[0] for s in SITES])
def site(request):
    _, gpus, cluster = request.param
    d = design_of(scenario(gpus, **cluster))
    return d, _placed(d)


def test_closed_form_links_and_cables_are_the_placed_sites(site):
    d, placed = site
    closed: dict[str, tuple[int, int]] = {}
    for c in d.cable_classes:            # a big class comes in bands, one per medium
        n, cables = closed.get(c.kind, (0, 0))
        closed[c.kind] = (n + c.links, cables + c.cables)
    assert closed == {k: (v["links"], v["cables"]) for k, v in placed.items()}
    for c in d.cable_classes:
        assert _band_lengths(c, placed).size == c.links, c.kind


def test_every_routed_link_is_within_its_class_bound_and_medium(site):
    """The bound is the longest run the class can have; routed lengths are rounded to 0.1 m."""
    d, placed = site
    reach = {m.id: m.max_length_m for m in load_media()}
    for c in d.cable_classes:
        longest = float(_band_lengths(c, placed).max())
        assert longest <= c.bound_m + 0.05, (c.kind, longest, c.bound_m)
        if c.bound_m <= reach[c.medium]:
            assert longest <= reach[c.medium], c.kind


def test_bounds_are_tight(site):
    """Tightness (the price of one medium per band): a band's bound, from the wiring (node to
    its unit's leaves, leaf to its pod's spines, spine to its core groups, a node port to its
    storage or in-band switch, a device to the OOB switch of its stretch of floor), is within
    15 m of its longest routed run. Not for the few storage-system links (storage racks to any
    management rack)."""
    d, placed = site
    for c in d.cable_classes:
        if c.kind != "storage-system":
            longest = float(_band_lengths(c, placed).max())
            assert c.bound_m - longest <= 15.0, (c.kind, longest, c.bound_m)


@pytest.fixture(scope="module", params=CASES, ids=[c[0] for c in CASES])
def ctx(request):
    _, gpus, cluster = request.param
    return make_context(scenario(gpus, **cluster), catalog())


def _csv_by_medium(ctx) -> dict[str, dict]:
    rows = list(csv.DictReader(io.StringIO(cabling_files(ctx)["cabling.csv"])))
    links: dict[str, int] = defaultdict(int)
    cable_len: dict[str, dict[str, float]] = defaultdict(dict)
    for r in rows:
        links[r["medium"]] += 1
        cable_len[r["medium"]].setdefault(r["cable_id"], float(r["length_m"]))
    return {m: {"links": links[m], "cables": len(c), "total": sum(c.values()),
                "median": float(np.median(list(c.values()))), "max": max(c.values())}
            for m, c in cable_len.items()}


def test_design_cabling_equals_the_cabling_csv(ctx):
    """Closed form: the csv's links and cables per medium, no lengths; routed: its lengths."""
    want = _csv_by_medium(ctx)
    closed = ctx.design.to_contract()["cabling"]
    assert closed["placed"] is False and closed["total_length_m"] is None
    got = routed(ctx.design, ctx.catalog).to_contract()["cabling"]
    assert got["placed"] is True
    assert set(got["by_medium"]) == set(want) == set(closed["by_medium"])
    for medium, w in want.items():
        g, c = got["by_medium"][medium], closed["by_medium"][medium]
        assert (g["links"], g["cables"]) == (c["links"], c["cables"]) == (w["links"], w["cables"])
        assert c["total_length_m"] is None and c["max_length_m"] is None
        assert g["total_length_m"] == pytest.approx(w["total"], abs=0.1 * w["cables"])
        assert g["median_length_m"] == pytest.approx(w["median"], abs=0.11)
        assert g["max_length_m"] == pytest.approx(w["max"], abs=0.11)
        assert 0 < g["median_length_m"] <= g["max_length_m"] <= g["reach_m"]
    assert got["links"] == closed["links"] == sum(w["links"] for w in want.values())


def test_links_by_medium_add_up_to_the_designs_networks(ctx):
    d = ctx.design
    by = d.to_contract()["cabling"]["by_medium"]
    assert by["cat6-rj45"]["links"] == d.networks.oob_devices
    fabric = sum(v["cables"] for k, v in by.items() if k != "cat6-rj45")
    assert fabric >= d.fabric.cables


def test_unreachable_links_warn_and_the_placed_map_refuses_them(monkeypatch):
    """A site with links no medium reaches is still a design: it warns, and placing it (export,
    ``plan --cabling``) refuses the links past the medium's reach."""
    from dataclasses import replace

    from clustertwin.design import design, media
    from clustertwin.errors import InfeasibleError

    short = tuple(replace(m, max_length_m=1.0) for m in media.load_media())
    monkeypatch.setattr(media, "load_media", lambda: short)
    d = design(scenario(1024), catalog(), None)
    assert any(w.startswith("cabling: ") and "past the 1 m of the longest-reach medium" in w
               for w in d.warnings)
    with pytest.raises(InfeasibleError, match="reach no cable medium|run past their class"):
        routed(d, catalog())


def test_plan_cabling_asks_for_the_routed_lengths():
    """``plan --json`` counts cables without placing the site (no lengths); ``--cabling`` places
    it and routes every cable: the same counts, with lengths, and the same bill of materials."""
    import json
    from pathlib import Path

    from typer.testing import CliRunner

    from clustertwin.cli import app

    path = str(Path(__file__).resolve().parents[2] / "examples" / "gpt3-175b-1024-a100.yaml")
    plain = CliRunner().invoke(app, ["plan", path, "--json"])
    asked = CliRunner().invoke(app, ["plan", path, "--json", "--cabling"])
    assert plain.exit_code == asked.exit_code == 0, plain.output[-500:] + asked.output[-500:]
    a, b = json.loads(plain.stdout)["design"], json.loads(asked.stdout)["design"]
    assert a["cabling"]["placed"] is False and a["cabling"]["total_length_m"] is None
    assert b["cabling"]["placed"] is True and b["cabling"]["total_length_m"] > 0
    for medium, m in b["cabling"]["by_medium"].items():
        assert (m["links"], m["cables"]) == (a["cabling"]["by_medium"][medium]["links"],
                                             a["cabling"]["by_medium"][medium]["cables"])
        assert 0 < m["median_length_m"] <= m["max_length_m"] <= m["reach_m"]
    assert a["bom"] == b["bom"] and a["bom_priced_usd"] == b["bom_priced_usd"]
