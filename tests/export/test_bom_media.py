"""The bill of materials follows the cable media the cabling map chose (issue 22): one source of
truth, so the links of each medium in ``bom.csv`` equal that medium's links in ``cabling.csv``
(single-mode where a link is long, AOC / Cat6 where the map says so), and the BOM still sums to
``economics.capex_usd``. An optical medium is its transceiver at each end and its fibre, each
with its own part number (issue 37)."""

from __future__ import annotations

import csv
import io
from collections import Counter

import pytest

from clustertwin.design.media import load_media
from clustertwin.economics import economics
from clustertwin.export.bom_files import bom_files
from clustertwin.export.stage import make_context
from clustertwin.export.tables import cabling_files
from export.helpers import catalog, scenario

CASES = [("1024-h100", 1024, {}), ("1008-gb200-nvl72", 1008, {"node": "gb200-nvl72", "gpu": "gb200"}),
         ("16k-h100", 16_384, {})]
MEDIA = {m.id: m for m in load_media()}


def _medium_of(description: str):
    return next((m for mid, m in MEDIA.items() if description.startswith(f"{mid} ")), None)


@pytest.fixture(scope="module", params=CASES, ids=[c[0] for c in CASES])
def files(request):
    _, gpus, cluster = request.param
    ctx = make_context(scenario(gpus, **cluster), catalog())
    bom, _ = bom_files(ctx)
    return ctx, list(csv.DictReader(io.StringIO(bom["bom.csv"]))), \
        list(csv.DictReader(io.StringIO(cabling_files(ctx)["cabling.csv"])))


def test_counts_by_part_are_the_cabling_maps(files):
    ctx, bom, cabling = files
    want = Counter(r["part_number"] for r in cabling)
    got: Counter = Counter()
    for r in bom:
        m = _medium_of(r["description"])
        if m is None:
            continue
        assert r["part_number"] in m.part_number.split(" + ")   # the module or the fibre
        if " links (" in r["description"] or ", end A " in r["description"]:
            got[m.part_number] += int(float(r["quantity"]))
    assert got == want
    if ctx.design.gpus >= 16_384:        # long spine-core runs go single-mode, in both files
        smf = {m.part_number for m in load_media() if m.kind == "single-mode"}
        assert any(got[p] for p in smf)
    # no catalog transceiver / fibre lines priced beside them
    assert not any("transceivers" in r["description"] or "optical cables" in r["description"]
                   for r in bom)


def test_optics_are_listed_per_medium_and_end(files):
    _, bom, _ = files
    for m in MEDIA.values():
        rows = [r for r in bom if r["description"].startswith(f"{m.id} ")]
        if not rows or " + " not in m.part_number:
            continue
        module, fibre = (p.strip() for p in m.part_number.split(" + "))
        ends = [r for r in rows if r["part_number"] == module]
        assert [", end A " in ends[0]["description"], ", end B " in ends[1]["description"]] == [
            True, True]
        assert ends[0]["quantity"] == ends[1]["quantity"] and ends[0]["unit"] == "port"
        assert [r["part_number"] for r in rows if r not in ends] == [fibre]


def test_media_lines_are_priced_per_link_and_sum_to_capex(files):
    ctx, bom, cabling = files
    price = {m.part_number: m.usd_per_link for m in load_media()}
    cost = sum(price[r["part_number"]] for r in cabling)
    media_total = sum(float(r["total_usd"]) for r in bom if _medium_of(r["description"]))
    assert media_total == pytest.approx(cost, rel=1e-9)
    eco = economics(ctx.scenario, ctx.catalog, None, ctx.design)
    assert sum(float(r["total_usd"]) for r in bom) == pytest.approx(eco.capex_usd, rel=0.01)
