"""Leave-one-source-out check and the days band (issues 20 and 33): targets of the scale-only
and of the refit-everything check, the catalog bands kept current, and the band in the plan."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from clustertwin.perf import crossval as cv
from clustertwin.perf.calreport import published_rows


@pytest.fixture(scope="module")
def folds(catalog):
    return cv.cross_validate(catalog, published_rows())


def test_loso_targets(folds):
    """Done-when of issue 20: LOSO median |error| <= 8%, mean signed within +-4%, >= 80% of
    published values inside the band computed without their source."""
    s = cv.summary(folds)
    assert s["sources"] >= 8 and s["rows"] >= 60
    assert s["median_abs_err"] <= 0.08, s
    assert abs(s["mean_signed_err"]) <= 0.04, s
    assert s["within_band"] >= 0.80, s


def test_refit_everything_targets(folds):
    """Done-when of issue 33: every fitted constant refitted without the left-out source. Its
    median |error| is what a source the model never saw gets (our own check of 9 unseen rows,
    tests/validation/test_perf_unseen.py, sits at 3%; all 56 rows no calibration uses at 7%):
    <= 10%, mean signed within +-5%, >= 80% of published values inside the band computed
    without their source, and no better than the leaky scale-only figure."""
    s = cv.summary(folds)
    assert s["refit_median_abs_err"] <= 0.10, s
    assert abs(s["refit_mean_signed_err"]) <= 0.05, s
    assert s["within_band"] >= 0.80, s
    assert s["refit_median_abs_err"] >= s["median_abs_err"], s


def test_a_source_alone_in_its_stack_is_priced_on_priors(catalog):
    """Leaving out the only source of a stack family's rows leaves its fitted constants at
    their priors (perf.fitplan.GROUPS), while the other groups are still fitted."""
    from clustertwin.perf import fitplan

    rows = [r for r in published_rows() if cv.steady_state(r)
            and cv.source_key(r.source) != "torchtitan llama 3.1 h100 benchmarks"]
    vals = fitplan.refit(catalog, fitplan.priced(catalog, rows, cv.family))
    titan = next(g for g in fitplan.GROUPS if g.id == "torchtitan")
    assert {k: vals[k] for k in titan.keys} == {k: v[2] for k, v in titan.keys.items()}
    megatron = next(g for g in fitplan.GROUPS if g.id == "megatron-core")
    assert any(vals[k] != v[2] for k, v in megatron.keys.items())


def test_refit_leaves_no_source_in_its_own_fold(folds):
    """The refit-everything residual of a single-source stack differs from its scale-only one
    (the leak the scale-only check has), and every steady-state row has one."""
    steady = [r for r in folds if cv.steady_state(r.result.row)]
    assert all(r.refit is not None and r.refit_in_sample is not None for r in steady)
    titan = [r for r in steady if cv.family(r.stack) == "torchtitan"]
    assert titan and all(abs(r.refit - r.loso) > 0.005 for r in titan)


def test_catalog_bands_match_the_calibration_rows(folds, catalog):
    """stacks.yaml days_band_* are what calibration --cv gives now (rewrite them if this fails)."""
    bands = cv.stack_bands(catalog, folds)
    for e in catalog.all("stack"):
        assert e.days_band_low == pytest.approx(bands[e.id]["low"], abs=0.005), e.id
        assert e.days_band_high == pytest.approx(bands[e.id]["high"], abs=0.005), e.id
        assert e.days_band_low < 0 < e.days_band_high


def test_a_fold_leaves_its_source_out(folds):
    """The LOSO residual differs from the in-sample one by the other sources' median only."""
    by_src = {}
    for r in folds:
        by_src.setdefault(r.source, []).append(r)
    assert all(len({x.source for x in v}) == 1 for v in by_src.values())
    shift = [r.residual - r.loso for r in folds]
    assert np.isfinite(shift).all() and np.std(shift) > 0


@pytest.mark.parametrize("text, key", [
    ("Narayanan et al. 2021 (arXiv 2104.04473) Table 1", "narayanan et al. 2021"),
    ("Smith et al. 2022, MT-NLG 530B (arXiv 2201.11990) section 2.3", "smith et al. 2022"),
    ("Llama 3 Herd of Models (arXiv 2407.21783) Table 4 row 2", "llama 3 herd of models"),
])
def test_source_key(text, key):
    assert cv.source_key(text) == key


def test_plan_reports_the_band(catalog):
    from clustertwin.perf import estimate
    from clustertwin.scenario import scenario_from_dict

    d = {"name": "b", "model": {"preset": "llama3-8b"},
         "training": {"tokens": 1e11, "seq_len": 8192, "global_batch_tokens": 2**22},
         "cluster": {"gpu": "h100-sxm-80gb", "node": "dgx-h100", "gpus": 64}}
    est = estimate(scenario_from_dict(d, catalog=catalog), catalog)
    band = catalog.get("stack", est.stack)
    assert est.days_low == pytest.approx(est.days * (1 + band.days_band_low))
    assert est.days_low < est.days < est.days_high
    assert {"days_low", "days_high", "stack"} <= set(est.to_contract())


def test_cli_cv_json():
    from clustertwin.cli import app

    out = CliRunner().invoke(app, ["calibration", "--cv", "--json"])
    assert out.exit_code == 0, out.output
    d = json.loads(out.stdout)
    assert {"median_abs_err", "mean_signed_err", "within_band", "refit_median_abs_err",
            "refit_mean_signed_err"} <= set(d["summary"])
    assert d["rows"] and {"id", "loso_error", "refit_error", "band_low", "band_high",
                          "in_band"} <= set(d["rows"][0])
