"""``clustertwin measure``: run the standard benchmark on this machine's GPU, price the same job
with the twin, and write what ``plan --measured`` and ``calibration --csv`` read.

Files (through :class:`clustertwin.outputs.OutputDir`):

* ``measured.json``: the benchmark, the environment, predicted and measured tokens/s, and a
  ``measured`` block in the format of ``check.json`` (``gemm_ratio`` = measured / predicted
  throughput, so ``plan --measured measured.json`` re-predicts the scenario with the GPU's
  compute efficiencies scaled by it). On a CPU the ratio is null: a CPU says nothing about a GPU.
* ``measured.csv`` (GPU runs only): the run as one calibration row (the columns of the shared
  calibration CSV plus ``stack``), for ``clustertwin calibration --csv measured.csv``.

The benchmark runs on one device, so the twin prices a one-GPU job of the same shape, micro-
batch, recompute and stack (``pytorch``, or ``pytorch-compile`` with ``--compile``).
"""

from __future__ import annotations

import io
from typing import Any

from clustertwin.measure.bench import BenchShape
from clustertwin.quoting import csv_writer

#: the shape ``--tiny`` runs (seconds on a CPU): what the tests use
TINY = {"layers": 2, "hidden": 64, "ffn_hidden": 256, "heads": 4, "kv_heads": 4, "vocab": 512}
TINY_SEQ, TINY_BATCH = 64, 2
#: device memory the scaled-down model may take for weights, gradients and Adam (16 B/param)
STATE_SHARE = 0.25
CSV_COLUMNS = ("id", "source", "layers", "hidden", "ffn_hidden", "heads", "kv_heads", "vocab", "mlp",
               "seq_len", "gpu", "gpus", "tp", "pp", "dp", "cp", "ep", "virtual_stages", "micro_batch",
               "global_batch_seqs", "recompute", "sequence_parallel", "precision", "measured_value",
               "measured_unit", "derived_step_time_s", "notes", "stack")


def _params(m: dict[str, Any]) -> float:
    h, f = m["hidden"], m["ffn_hidden"]
    mats = 3 if m["mlp"] == "swiglu" else 2
    kv = h // m["heads"] * m["kv_heads"]
    return m["layers"] * (2 * h * h + 2 * h * kv + mats * h * f) + 2 * m["vocab"] * h


def bench_shape(scenario: Any, hbm_gib: float, tiny: bool, micro_batch: int, recompute: bool,
                compile_: bool) -> BenchShape:
    """The scenario's dense shape, with layers halved until its states take at most
    :data:`STATE_SHARE` of the GPU's memory; ``tiny``: :data:`TINY`."""
    m = scenario.model
    if tiny:
        d = {**TINY, "mlp": m.mlp}
        return BenchShape(**d, seq=TINY_SEQ, micro_batch=TINY_BATCH, recompute=recompute, compile=compile_)
    d = {k: getattr(m, k) for k in ("layers", "hidden", "ffn_hidden", "heads", "kv_heads", "vocab", "mlp")}
    while d["layers"] > 1 and 16 * _params(d) > STATE_SHARE * hbm_gib * 2**30:
        d["layers"] //= 2
    if 16 * _params(d) > STATE_SHARE * hbm_gib * 2**30:
        from clustertwin.errors import Problem, UsageError

        raise UsageError([Problem(scenario.source, "model", f"even one layer of {d['hidden']:,} wide with a "
                                  f"{d['vocab']:,}-token vocabulary needs {16 * _params(d) / 2**30:.0f} GiB of "
                                  f"weights and optimizer state on one {hbm_gib:g} GiB GPU; use --tiny or a smaller model")])
    return BenchShape(**d, seq=scenario.training.seq_len, micro_batch=micro_batch,
                      recompute=recompute, compile=compile_)


def _job_doc(scenario: Any, gpu: str, node: str, s: BenchShape, precision: str) -> dict[str, Any]:
    model = {k: getattr(s, k) for k in ("layers", "hidden", "ffn_hidden", "heads", "kv_heads", "vocab", "mlp")}
    par = {"tp": 1, "pp": 1, "cp": 1, "ep": 1, "dp": 1, "micro_batch": s.micro_batch,
           "recompute": "full" if s.recompute else "none", "zero": 0}
    return {"name": f"{scenario.name} (measure)", "model": model,
            "training": {"tokens": float(scenario.training.tokens), "seq_len": s.seq,
                         "global_batch_seqs": s.micro_batch, "precision": precision, "gpus": 1,
                         "stack": "pytorch-compile" if s.compile else "pytorch", "parallelism": par},
            "cluster": {"gpu": gpu, "node": node, "gpus": 1}}


def predict(scenario: Any, catalog: Any, gpu: str, s: BenchShape, precision: str = "bf16") -> Any:
    """The twin's estimate of the benchmark job on one ``gpu``."""
    from clustertwin.perf import estimate
    from clustertwin.perf.system import default_node
    from clustertwin.scenario import scenario_from_dict

    node = scenario.cluster.node if gpu == scenario.cluster.gpu else default_node(catalog, gpu)
    sc = scenario_from_dict(_job_doc(scenario, gpu, node, s, precision), "measure", catalog=catalog)
    return estimate(sc, catalog)


def measured_gpu(catalog: Any, scenario: Any, env: dict[str, Any]) -> str:
    """The catalog GPU the benchmark ran on (by device name), else the scenario's."""
    from clustertwin.perf.csvrows import gpu_name

    if env["device"] == "cpu":
        return scenario.cluster.gpu
    gid = gpu_name(catalog, str(env["device_name"]))
    return gid if catalog.has("gpu", gid) else scenario.cluster.gpu


def result_doc(scenario: Any, s: BenchShape, env: dict[str, Any], gpu: str, est: Any) -> dict[str, Any]:
    """measured.json: benchmark, environment, predicted vs measured, the check.json block."""
    gpu_run = env["device"] != "cpu"
    ratio = env["tokens_per_s"] / est.tokens_per_s
    return {
        "scenario": scenario.name,
        "benchmark": s.to_dict(),
        "environment": env,
        "gpu": gpu,
        "predicted": {"tokens_per_s": est.tokens_per_s, "step_time_s": est.step_time_s,
                      "mfu": est.mfu, "stack": est.stack, "memory_gib": est.memory_gib_per_gpu},
        "measured_tokens_per_s": env["tokens_per_s"],
        #: + = the twin predicts faster than measured
        "error": est.tokens_per_s / env["tokens_per_s"] - 1.0,
        "comparable": gpu_run,
        "measured": {"gemm_ratio": ratio if gpu_run else None, "nvlink_ratio": None,
                     "fabric_ratio": None, "drained_nodes": [],
                     "note": None if gpu_run else "CPU run: no GPU figure; the catalog plan is kept"},
    }


def calibration_csv(doc: dict[str, Any], precision: str) -> str:
    """measured.csv: the benchmark as one calibration row."""
    s, env = doc["benchmark"], doc["environment"]
    row = {**{k: s[k] for k in ("layers", "hidden", "ffn_hidden", "heads", "kv_heads", "vocab", "mlp")},
           "id": f"measure-{doc['gpu']}-{s['layers']}l-{s['hidden']}h-{s['seq']}",
           "source": f"clustertwin measure on {env['device_name']} (torch {env['torch_version']}, CUDA {env['cuda_version']})",
           "seq_len": s["seq"], "gpu": doc["gpu"], "gpus": 1, "tp": 1, "pp": 1, "dp": 1, "cp": 1, "ep": 1,
           "virtual_stages": "", "micro_batch": s["micro_batch"], "global_batch_seqs": s["micro_batch"],
           "recompute": "full" if s["recompute"] else "none", "sequence_parallel": "false",
           "precision": precision, "measured_value": f"{env['tokens_per_s']:.1f}", "measured_unit": "tokens/s/GPU",
           "derived_step_time_s": f"{env['step_time_s']:.6f}", "notes": f"{env['steps']} timed steps",
           "stack": "pytorch-compile" if s["compile"] else "pytorch"}
    buf = io.StringIO()
    w = csv_writer(buf)
    w.writerow(CSV_COLUMNS)
    w.writerow([row.get(k, "") for k in CSV_COLUMNS])
    return buf.getvalue()


def summary_rows(doc: dict[str, Any]) -> list[tuple[str, str]]:
    """Predicted vs measured, for the terminal."""
    s, env, p = doc["benchmark"], doc["environment"], doc["predicted"]
    rows = [
        ("device", f"{env['device_name']} (torch {env['torch_version']}, {env['precision']})"),
        ("model", f"{s['layers']} layers x {s['hidden']} wide, {env['params'] / 1e6:.1f}M parameters, "
                  f"sequence {s['seq']}, micro-batch {s['micro_batch']}"
                  + (", recompute" if s["recompute"] else "") + (", torch.compile" if s["compile"] else "")),
        ("twin priced", f"1 x {doc['gpu']}, stack {p['stack']}"),
        ("predicted tokens/s", f"{p['tokens_per_s']:,.0f} (MFU {p['mfu']:.1%})"),
        ("measured tokens/s", f"{doc['measured_tokens_per_s']:,.0f} over {env['steps']} steps"),
    ]
    if doc["comparable"]:
        rows.append(("twin error", f"{doc['error']:+.1%} (+ = predicted faster than measured)"))
    else:
        rows.append(("twin error", "not comparable: the benchmark ran on the CPU"))
    return rows
