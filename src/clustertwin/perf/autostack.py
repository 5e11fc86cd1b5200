"""``training.stack: auto``: the software stack a team would most likely run for a job, by GPU
generation and job size.

| job                                   | any GPU generation |
|---------------------------------------|--------------------|
| one node or less (1-8 GPUs of a node) | ``pytorch``: eager PyTorch, SDPA, fused AdamW, DDP |
| more than one node                    | ``megatron``: Megatron-core / NeMo with Transformer Engine |

Why: jobs of one node are fine-tuning runs and experiments written as plain PyTorch training
loops (nanoGPT-style scripts, Hugging Face models); multi-node pre-training of the published
runs this model is calibrated on (Llama 3, Nemotron-4, the NeMo/Megatron-Bridge tables, MT-NLG,
BLOOM) ran Megatron-class stacks. A deadline-mode scenario (no GPU count yet) plans with
``megatron``. The report and ``training.stack`` in the JSON say which stack was chosen; name a
stack (``training.stack: torchtitan``) to plan with another.
"""

from __future__ import annotations

from typing import Any

AUTO = "auto"
SMALL_JOB_STACK = "pytorch"
LARGE_JOB_STACK = "megatron"


def job_gpus(scenario: Any) -> int | None:
    """GPUs the job will use as far as the scenario says before the search: training.gpus when
    a number, else the installed GPUs, else None (deadline mode)."""
    t, c = scenario.training, scenario.cluster
    if t.gpus != "auto":
        return int(t.gpus)
    return None if c.gpus is None else int(c.gpus)


def auto_stack(scenario: Any, node_gpus: int) -> str:
    """The stack id ``auto`` stands for (see the module's table)."""
    gpus = job_gpus(scenario)
    if gpus is not None and gpus <= node_gpus:
        return SMALL_JOB_STACK
    return LARGE_JOB_STACK


def resolve_stack(scenario: Any, catalog: Any) -> str | None:
    """training.stack with ``auto`` replaced by the stack it stands for."""
    sid = scenario.training.stack
    if sid is None or str(sid).strip().lower() != AUTO:
        return sid
    return auto_stack(scenario, int(catalog.node(scenario.cluster.node).gpus))
