"""Cables by medium in the design result (issue 22): ``design.cabling`` is computed in the
design stage from the placed site, and equals what ``cabling.csv`` (written by the export layer
with the user's names) holds: per medium the same links, cables, total / median / longest cable
length; every length within the medium's reach."""

from __future__ import annotations

import csv
import io
from collections import defaultdict

import numpy as np
import pytest

from clustertwin.export.stage import make_context
from clustertwin.export.tables import cabling_files
from export.helpers import catalog, scenario

CASES = [("1024-h100", 1024, {}), ("1008-gb200", 1008, {"node": "gb200-nvl72", "gpu": "gb200"}),
         ("16k-h100", 16_384, {})]


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
    got = ctx.design.to_contract()["cabling"]
    want = _csv_by_medium(ctx)
    assert set(got["by_medium"]) == set(want)
    for medium, w in want.items():
        g = got["by_medium"][medium]
        assert (g["links"], g["cables"]) == (w["links"], w["cables"]), medium
        assert g["total_length_m"] == pytest.approx(w["total"], abs=0.1 * w["cables"])
        assert g["median_length_m"] == pytest.approx(w["median"], abs=0.11)
        assert g["max_length_m"] == pytest.approx(w["max"], abs=0.11)
        assert 0 < g["median_length_m"] <= g["max_length_m"] <= g["reach_m"]
    assert got["links"] == sum(w["links"] for w in want.values())


def test_links_by_medium_add_up_to_the_designs_networks(ctx):
    d = ctx.design
    by = d.to_contract()["cabling"]["by_medium"]
    assert by["cat6-rj45"]["links"] == d.networks.oob_devices
    fabric = sum(v["cables"] for k, v in by.items() if k != "cat6-rj45")
    assert fabric >= d.fabric.cables


def test_unreachable_links_warn_instead_of_a_summary(monkeypatch):
    """A site with links no medium reaches is still a design: it warns (export refuses it)."""
    from dataclasses import replace

    from clustertwin.design import design, media

    short = tuple(replace(m, max_length_m=1.0) for m in media.load_media())
    monkeypatch.setattr(media, "load_media", lambda: short)
    d = design(scenario(1024), catalog(), None)
    assert d.cabling == ()
    assert any(w.startswith("cabling not placed: ") and "reach no cable medium" in w
               for w in d.warnings)
