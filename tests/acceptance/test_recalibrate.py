"""Recalibration: the measured plan is the ordinary pipeline on scaled calibration constants, so
a fabric measured 10% slow changes the step time by exactly what the model implies."""

from __future__ import annotations

import pytest
import yaml

from clustertwin.acceptance.recalibrate import read_measured, recalibrate
from clustertwin.errors import UsageError


def _catalog_with_slower_fabric(catalog, tmp_path, factor):
    """The same catalog with the InfiniBand collective efficiencies written x factor by hand,
    loaded through the user-catalog path (independent of recalibrate's own scaling)."""
    from clustertwin.catalog import load_catalog

    entry = next(e for e in catalog.all("perf_calibration") if e.scope == "fabric" and e.applies_to == "infiniband")
    doc = entry.model_dump(mode="json", exclude_none=True)
    doc["constants"] = {k: (v * factor if k in ("bus_efficiency", "alltoall_efficiency") else v)
                        for k, v in doc["constants"].items()}
    (tmp_path / "slow.yaml").write_text(yaml.safe_dump({"perf_calibration": [doc]}))
    return load_catalog([tmp_path])


def test_ten_percent_slower_fabric_changes_step_time_as_the_model_implies(small, catalog, tmp_path):
    from clustertwin.perf import estimate

    rec = recalibrate(small, catalog, {"fabric_ratio": 0.9})
    by_hand = estimate(small, _catalog_with_slower_fabric(catalog, tmp_path, 0.9))
    base, new = rec.base.training.step_time_s, rec.measured.training.step_time_s
    assert new == pytest.approx(by_hand.step_time_s, rel=1e-12)
    # slower, but by no more than the network's share of the step could explain
    assert base < new <= base / 0.9
    d = rec.to_dict()
    assert d["step_time_change"] == pytest.approx(new / base - 1)
    assert d["catalog_plan"]["step_time_s"] == base and d["measured_plan"]["step_time_s"] == new


def test_gemm_ratio_scales_compute_and_drained_nodes_shrink_the_cluster(small, catalog):
    rec = recalibrate(small, catalog, {"gemm_ratio": 0.95, "drained_nodes": ["gpu0001", "gpu0002"]})
    assert rec.measured.training.gpus == small.cluster.gpus - 16
    assert rec.measured.training.step_time_s > rec.base.training.step_time_s
    assert "beyond the spares" in rec.figures["note"]
    rows = dict((q, (a, b)) for q, a, b in rec.rows())
    assert rows["GPUs in the run"] == (str(small.cluster.gpus), str(small.cluster.gpus - 16))


def test_nothing_measured_changes_nothing(small, catalog):
    rec = recalibrate(small, catalog, {"drained_nodes": []})
    assert rec.measured.training.step_time_s == pytest.approx(rec.base.training.step_time_s, rel=1e-12)


@pytest.mark.parametrize("doc,what", [
    ("{}", "expected a check.json"),
    ('{"measured": {"fabric_ratio": "fast"}}', "measured.fabric_ratio"),
    ('{"measured": {"gemm_ratio": 99}}', "measured.gemm_ratio"),
    ("[", "not valid JSON"),
])
def test_bad_measured_file(tmp_path, doc, what):
    p = tmp_path / "check.json"
    p.write_text(doc)
    with pytest.raises(UsageError) as exc:
        read_measured(p)
    assert what in str(exc.value)


def test_other_scenarios_measurements_are_flagged(small, catalog):
    rec = recalibrate(small, catalog, {"fabric_ratio": 1.0, "scenario": "another-cluster"})
    assert "another-cluster" in rec.figures["note"]
