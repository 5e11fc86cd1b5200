"""Checks on the built-in catalog data (src/clustertwin/catalog/data/*.yaml).

Parameter-count tolerances (param_count(model).total vs params_b_published):

* dense MHA/GQA models: 3 %. The count ignores learned position embeddings and assumes two
  norms per block, both below 0.1 %; the published figures are the released-checkpoint counts
  (Llama) or the papers' rounded totals (GPT-3, OPT, Falcon "180B").
* mixtral-8x7b: 3 % on total and 3 % on active (12.9B on the model card); the schema expresses
  Mixtral exactly (top-2 of 8 SwiGLU experts in every layer).
* deepseek-v3: 2 % on total, 6 % on active. The schema cannot express multi-head latent
  attention (MLA); it is approximated by full MHA with 128 heads of 7168/128, which gives
  205.5M attention weights per layer instead of 187.1M (+1.1B over 61 layers, +0.2 % of 671B).
  Active parameters carry the same +1.1B plus the router and are compared with 37B (+4 %).
"""

from __future__ import annotations

import pytest

from clustertwin.catalog import load_catalog
from clustertwin.catalog.models import Fabric, ModelPreset, Node
from clustertwin.catalog.params import param_count


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


CONTRACT_IDS = [
    *[("gpu", i) for i in ("a100-sxm-40gb", "a100-sxm-80gb", "h100-sxm-80gb", "h800", "h200", "b200", "gb200")],
    *[("node", i) for i in ("dgx-a100", "dgx-h100", "hgx-h200", "dgx-b200", "gb200-nvl72")],
    *[("fabric", i) for i in ("ib-hdr", "ib-ndr", "ib-xdr", "roce-400g", "roce-800g")],
    *[("model", i) for i in ("gpt3-175b", "llama2-70b", "llama3-8b", "llama3-70b", "llama3-405b", "bloom-176b",
                             "opt-175b", "falcon-180b", "mixtral-8x7b", "deepseek-v3")],
    ("costs", "us-2025"),
    ("node", "hgx-h800"),  # DeepSeek-V3 example
]

COST_KEYS = {
    "facility_build_usd_per_mw", "colo_usd_per_kw_month", "facility_om_frac_per_year",
    "staff_fte_per_1000_gpus", "staff_fte_min", "staff_fte_min_colo", "staff_usd_per_fte_year",
    "hw_maintenance_frac_per_year", "integration_frac", "storage_tb_per_gpu_default",
}

# (model id, relative tolerance on total, published active params in B or None, tolerance on active)
PARAM_CASES = [
    ("gpt3-175b", 0.03, None, None),
    ("llama2-7b", 0.03, None, None),
    ("llama2-13b", 0.03, None, None),
    ("llama2-70b", 0.03, None, None),
    ("llama3-8b", 0.03, None, None),
    ("llama3-70b", 0.03, None, None),
    ("llama3-405b", 0.03, None, None),
    ("bloom-176b", 0.03, None, None),
    ("opt-175b", 0.03, None, None),
    ("falcon-180b", 0.03, None, None),
    ("mixtral-8x7b", 0.03, 12.9, 0.03),
    ("deepseek-v3", 0.02, 37.0, 0.06),
]


def _all_entries(catalog):
    return [(kind, e) for kind in catalog.kinds() for e in catalog.all(kind)]


def test_catalog_loads(catalog):
    assert catalog.kinds()
    assert not catalog.overridden


@pytest.mark.parametrize(("kind", "entry_id"), CONTRACT_IDS, ids=[f"{k}:{i}" for k, i in CONTRACT_IDS])
def test_contract_ids_exist(catalog, kind, entry_id):
    assert catalog.has(kind, entry_id), f"missing {kind} {entry_id}"


def test_every_entry_has_source_and_date(catalog):
    bad = [(k, e.id) for k, e in _all_entries(catalog) if not e.source.strip() or not str(e.as_of).strip()]
    assert not bad


def test_every_price_has_source(catalog):
    bad = [(k, e.id) for k, e in _all_entries(catalog)
           if getattr(e, "price_usd", None) is not None and not (e.price_source.strip() and e.price_as_of.strip())]
    assert not bad


def test_nodes_reference_known_gpus(catalog):
    for node in catalog.all("node"):
        assert isinstance(node, Node)
        assert catalog.has("gpu", node.gpu), f"node {node.id} names unknown gpu {node.gpu}"
        assert node.nvlink_domain_gpus <= node.gpus
        assert node.compute_cages <= node.compute_nics


def test_rack_scale_nodes(catalog):
    nvl = catalog.node("gb200-nvl72")
    assert (nvl.gpus, nvl.nvlink_domain_gpus, nvl.rack_scale, nvl.rack_units, nvl.cooling) == (72, 72, True, None, "liquid")
    assert all(n.rack_units for n in catalog.all("node") if not n.rack_scale)


def test_fabrics_reference_known_parts(catalog):
    for fab in catalog.all("fabric"):
        assert isinstance(fab, Fabric)
        refs = [("switch", fab.switch), ("nic", fab.nic), ("transceiver", fab.switch_transceiver),
                ("transceiver", fab.node_transceiver), ("cable", fab.copper_cable), ("cable", fab.fiber_cable)]
        for kind, ref in refs:
            assert catalog.has(kind, ref), f"fabric {fab.id} names unknown {kind} {ref}"
        sw = catalog.get("switch", fab.switch)
        assert sw.technology == fab.technology
        assert sw.port_gbps == fab.link_gbps
        assert catalog.get("nic", fab.nic).gbps >= fab.link_gbps


def test_dense_peaks(catalog):
    """Dense (not sparse) peaks: the anchors every MFU figure in the calibration set uses."""
    h100 = catalog.gpu("h100-sxm-80gb")
    assert h100.peak_tflops["bf16"] == pytest.approx(989, rel=0.01)
    assert h100.peak_tflops["fp8"] == pytest.approx(1979, rel=0.01)
    a100 = catalog.gpu("a100-sxm-80gb")
    assert a100.peak_tflops["bf16"] == 312 and "fp8" not in a100.peak_tflops
    assert catalog.gpu("h800").nvlink_gb_per_s == 400
    for gid in ("b200", "gb200"):
        assert "fp4" in catalog.gpu(gid).peak_tflops


def test_cost_book_keys(catalog):
    book = catalog.get("costs", "us-2025")
    assert set(book.items) == COST_KEYS
    assert book.value("facility_build_usd_per_mw") == 11.7e6
    assert book.value("colo_usd_per_kw_month") == 184.06
    # seed 003: $300K/month of staff for 10,000 GPUs
    staff = 10 * book.value("staff_fte_per_1000_gpus") * book.value("staff_usd_per_fte_year") / 12
    assert staff == pytest.approx(300_000, rel=0.01)
    for key, item in book.items.items():
        assert item.source.strip() and item.as_of and item.unit, key


@pytest.mark.parametrize(("model_id", "tol", "active_b", "active_tol"), PARAM_CASES,
                         ids=[f"{m}-tol{t:.0%}" for m, t, _, _ in PARAM_CASES])
def test_param_count_matches_published(catalog, model_id, tol, active_b, active_tol):
    model = catalog.get("model", model_id)
    assert isinstance(model, ModelPreset)
    assert model.params_b_published is not None
    pc = param_count(model)
    assert pc.total / 1e9 == pytest.approx(model.params_b_published, rel=tol)
    if active_b is not None:
        assert pc.active / 1e9 == pytest.approx(active_b, rel=active_tol)


def test_every_model_has_published_count(catalog):
    assert all(m.params_b_published for m in catalog.all("model"))
