"""``clustertwin measure SCENARIO [--out DIR]``. Thin: parse, run, print or write."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Optional

import typer

from clustertwin.cli.common import CatalogOpt, JsonOpt, ScenarioArg, handle_user_errors

OutOpt = Annotated[Optional[Path], typer.Option("--out", help="write measured.json (and measured.csv on a GPU) into this folder")]  # noqa: UP045
ForceOpt = Annotated[bool, typer.Option("--force", help="overwrite files clustertwin did not write")]


def _torch_missing() -> bool:
    import importlib.util

    return importlib.util.find_spec("torch") is None


# a command: one parameter per command-line option (typer reads this signature)
def measure_cmd(
    scenario: ScenarioArg = None,
    out: OutOpt = None,
    json_out: JsonOpt = False,
    force: ForceOpt = False,
    catalog: CatalogOpt = None,
    steps: Annotated[int, typer.Option("--steps", min=1, max=1000, help="timed training steps (after 3 warm-up steps)")] = 10,
    micro_batch: Annotated[int, typer.Option("--micro-batch", min=1, max=4096, help="sequences per step")] = 1,
    recompute: Annotated[bool, typer.Option("--recompute", help="activation checkpointing per layer")] = False,
    compile_: Annotated[bool, typer.Option("--compile", help="wrap the model in torch.compile")] = False,
    tiny: Annotated[bool, typer.Option("--tiny", help="a 2-layer, 64-wide model of 64 tokens (a smoke test; seconds on a CPU)")] = False,
    device: Annotated[str, typer.Option("--device", help="auto (a GPU if PyTorch sees one), cuda, cuda:N or cpu")] = "auto",
) -> None:
    """Run a short standard training benchmark (the scenario's model shape, layers halved until it
    fits one GPU) with PyTorch on this machine, print predicted vs measured tokens/s, and write
    measured.json for 'plan --measured' and measured.csv for 'calibration --csv'."""
    from clustertwin.cli.common import OutputDir, emit_json, load_inputs, print_rows, to_json
    from clustertwin.errors import Problem, UsageError
    from clustertwin.measure import run

    if _torch_missing():
        raise UsageError([Problem("measure", "torch", "PyTorch is not installed; install the extra: pip install 'clustertwin[gpu]'")])
    if re.fullmatch(r"auto|cpu|cuda(?::[0-9]{1,3})?", device) is None:  # 'cuda:1e20', 'cudax' were tracebacks
        raise UsageError([Problem("measure", "--device", f"expected auto, cpu, cuda or cuda:N, got {device!r}")])
    _check_cuda(device)
    scen, cat = load_inputs(scenario, catalog)
    names = ["measured.json", "measured.csv"]
    folder = OutputDir(out, names, force) if out else None
    shape = run.bench_shape(scen, cat.gpu(scen.cluster.gpu).hbm_gib, tiny, micro_batch, recompute, compile_)
    from clustertwin.measure.bench import run_benchmark

    env = run_benchmark(shape, steps=steps, device=device)
    gpu = run.measured_gpu(cat, scen, env)
    doc = run.result_doc(scen, shape, env, gpu, run.predict(scen, cat, gpu, shape))
    if folder is not None:
        folder.write("measured.json", to_json(doc) + "\n")
        if doc["comparable"]:
            folder.write("measured.csv", run.calibration_csv(doc, env["precision"]))
        folder.commit()
    if json_out:
        emit_json(doc)
        return
    print_rows(f"measure: {scen.name}", run.summary_rows(doc))


def register(app: typer.Typer) -> None:
    app.command("measure")(handle_user_errors(measure_cmd))


def _check_cuda(device: str) -> None:
    """A CUDA device this PyTorch can see ('cuda' on a CPU-only build was a traceback)."""
    if not device.startswith("cuda"):
        return
    import torch

    from clustertwin.errors import Problem, UsageError

    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    index = int(device.partition(":")[2] or 0)
    if index >= count:
        seen = f"{count} CUDA device(s)" if count else "no CUDA device"
        raise UsageError([Problem("measure", "--device", f"{device}: PyTorch sees {seen}; use cpu or auto")])
