"""Training-time model vs published training runs beyond the calibration CSV.

Rows live in ``tests/validation/data/published_runs.csv`` (the calibration CSV's columns plus a
per-row ``tolerance``), each with its paper and table: Llama 3 405B Table 4 (three H100 rows),
Nemotron-4 340B Table 2 (three H100 rows) and NVIDIA's NGC 128-GPU Nemotron4 340B recipe,
MT-NLG 530B (three A100 rows). Tolerance 15% unless the row's ``tolerance`` says otherwise
(the NGC recipe 30%: the memory model forces full recompute where NVIDIA's recipe evidently
runs without it; MT-NLG 22%: DeepSpeed's 2021 pipeline engine reached 126 TFLOP/s where
Megatron-LM's reached 163 on the same 530B shape, and the A100 constants are fitted to
Megatron-LM). Published parallelism is pinned (tp, pp, dp, cp and, where the
source states them, recompute, micro-batch and interleaving); the rest is searched. None of
these rows was used to fit the constants in ``perf_calibration.yaml`` except where its
``fitted_to`` list names it.

Second, a realism check for runs on >= 1,024 GPUs: the free search may find a plan the model
predicts faster than the published one, but by at most :data:`REALISM_RATIO`. The teams behind
these runs tuned their plans on the real machines; a model that predicts a large advantage for
some other plan is almost certainly missing a cost that plan pays (communication that steals
compute, latency-bound collectives at scale, short-chunk attention) rather than having found
a plan the experts overlooked.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from clustertwin.perf import calibration as cal

DATA = Path(__file__).parent / "data" / "published_runs.csv"
RAW = cal.parse_rows(DATA)


def _row(r: dict[str, str]) -> cal.CalRow:
    row = replace(cal.make_row(r), loose=False)
    if r.get("zero"):
        row = replace(row, pinned={**row.pinned, "zero": int(r["zero"])})
    return row


ROWS = [_row(r) for r in RAW]
TOL = {r["id"]: float(r["tolerance"]) for r in RAW}
REALISM_RATIO = 1.25
#: runs on stacks with sequence parallelism and selective recompute; MT-NLG (DeepSpeed, 2021)
#: had neither, and those two alone made the same 530B model 1.30x faster (Korthikanti et al.
#: 2022, Table 5: 49.05 s -> 37.83 s), so a modern plan beating it by more than 1.25x is expected
LARGE = [r for r in ROWS if r.gpus >= 1024 and r.pinned.get("sequence_parallel", True)]
#: published plans the memory model does not fit: Llama 3 states it pre-trained at 8K without
#: activation checkpointing (section 3.3.2), but Korthikanti's accounting (no dropout masks,
#: flash attention, sequence parallelism) gives 0.50 GiB per layer per 8,192-token micro-batch
#: on TP8, so the 126 layers alone hold >= 62 GiB and any interleaved schedule exceeds 80 GiB.
#: Meta's stack evidently stores less per layer than the formula; the throughput is checked on
#: the plan as run, and the memory gap is reported rather than hidden.
MEMORY_GAP = {"llama3-405b-8k-8192", "llama3-405b-8k-16384", "llama3-405b-128k-16384"}


def _id(r: cal.CalRow) -> str:
    return f"{r.id} [{r.source}] tol {TOL[r.id]:.0%}"


@pytest.fixture(scope="module")
def pinned_results(catalog):
    return {r.id: cal.run_row(catalog, r) for r in ROWS}


@pytest.mark.parametrize("row", ROWS, ids=_id)
def test_published_run_within_tolerance(row, pinned_results):
    res, _ = pinned_results[row.id]
    if row.id not in MEMORY_GAP:
        assert res.fits, f"{row.id}: the published plan does not fit ({res.memory_gib:.1f} GiB)"
    for k, v in row.pinned.items():
        assert res.plan[k] == v
    assert abs(res.error) <= TOL[row.id], (
        f"{row.id}: predicted {res.predicted:.4g} vs published {res.published:.4g} "
        f"({res.error:+.1%})"
    )


@pytest.mark.parametrize("row", LARGE, ids=lambda r: f"{r.id} max {REALISM_RATIO}x")
def test_free_search_not_absurdly_faster_than_published(row, catalog, pinned_results):
    published, _ = pinned_results[row.id]
    free, _ = cal.run_row(catalog, row, pinned={})
    assert free.fits
    ratio = published.step_time_s / free.step_time_s
    assert ratio <= REALISM_RATIO, (
        f"{row.id}: search plan {free.plan} predicted {ratio:.2f}x faster than the published "
        f"plan {published.plan}"
    )


def test_default_scenario_mfu_is_plausible(catalog):
    """Llama 3 405B on 16,384 H100 (the default scenario): published runs at this scale reach
    38-43% MFU (Llama 3 Table 4); the searched plan may beat them a little, not by half."""
    from clustertwin.perf.stage import estimate
    from clustertwin.scenario import load_scenario

    est = estimate(load_scenario(None, catalog), catalog)
    assert 0.35 <= est.mfu <= 0.50, (est.mfu, est.parallelism)
