"""Failure profiles as data, rate scaling, checkpoint size and write times, interval formulas."""

from __future__ import annotations

import math

import pytest

from clustertwin.catalog.models import FailureCause, FailureProfile
from clustertwin.design.failure_rates import job_rates
from clustertwin.perf.checkpoint import StorageRates, checkpoint_size_gb, checkpoint_times
from clustertwin.reliability import interval as iv


def test_contract_profiles_exist(rcat):
    for pid in ("llama3-h100", "rsc-a100"):
        p = rcat.get("failure_profile", pid)
        assert p.source and p.as_of
        assert math.isclose(sum(p.cause_shares().values()), 1.0)


def test_rates_scale_with_gpus_and_override_keeps_mix(rcat):
    p = rcat.get("failure_profile", "llama3-h100")
    a = job_rates(p, 16384, 8)
    b = job_rates(p, 32768, 8)
    assert math.isclose(b.unexpected_per_h, 2 * a.unexpected_per_h)
    # a rack-scale "node" of 72 GPUs has 9 basis node-equivalents of GPU failures
    c = job_rates(p, 72 * 10, 72)
    assert math.isclose(c.unexpected_per_h, job_rates(p, 720, 8).unexpected_per_h)
    o = job_rates(p, 16384, 8, per_1000_node_days=2 * p.total_per_1000_node_days)
    assert math.isclose(o.unexpected_per_h, 2 * a.unexpected_per_h)
    assert math.isclose(o.rates_per_h[0] / o.unexpected_per_h, a.rates_per_h[0] / a.unexpected_per_h)


def test_node_scaled_cause_uses_job_nodes():
    p = FailureProfile(id="x", name="x", source="t", as_of="2024", total_per_1000_node_days=10,
                       causes={"psu": FailureCause(share=1.0, scales_with="nodes")})
    r = job_rates(p, 720, 72)   # 10 nodes
    assert math.isclose(r.unexpected_per_h, 10 * 10 / 1000 / 24)


def test_profile_needs_weights():
    with pytest.raises(ValueError):
        FailureProfile(id="x", name="x", source="t", as_of="2024", total_per_1000_node_days=1,
                       causes={"a": FailureCause()})


def test_checkpoint_size_and_times():
    # 405B x 14 B = 5.67 TB; Llama 3 quotes 1 MB - 4 GB per GPU, we get 0.35 GB at 16,384 GPUs
    assert math.isclose(checkpoint_size_gb(405e9, "bf16"), 5670.0)
    ck = checkpoint_times(405e9, "bf16", 16384, 2048)
    assert math.isclose(ck.write_gbps, 2000.0)        # default: 2 TB/s per 16,384 GPUs
    assert math.isclose(ck.write_s, 2.835)
    assert ck.per_gpu_gb < 4.0
    slow = checkpoint_times(405e9, "bf16", 16384, 2048,
                            StorageRates(pfs_write_gbps=1e6, node_storage_gbps=0.1))  # the node NICs cap the write
    assert math.isclose(slow.write_gbps, 204.8)


def test_interval_formulas_consistent():
    assert iv.young(0.1, 5.0) == pytest.approx(1.0)
    assert iv.daly(0.1, 5.0) == pytest.approx(0.934, abs=5e-4)   # textbook example
    assert iv.daly(300, 100) == 100
    assert iv.ettr_kokolis(60, 0, 110.77, 5) == pytest.approx(0.684, abs=5e-4)
