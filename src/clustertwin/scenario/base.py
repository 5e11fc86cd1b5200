"""Shared pieces of the scenario schema: the frozen section base class, ``auto``, bounded
counts and the size bounds every section checks."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from clustertwin.catalog.models import MODEL_SIZE_MAX
from clustertwin.checked import CheckedModel

Auto = Literal["auto"]
PosInt = Annotated[int, Field(gt=0, le=2**40, strict=False)]
#: Most GPUs a scenario may install or use: 2**20, the scale of the largest clusters announced
#: (xAI Colossus 2, ~1M GPUs planned, 2025). The reliability Monte Carlo costs trials x
#: interruptions per run: ~9 s at 524,288 GPUs with 1,000 trials on one core (issue 15).
MAX_GPUS = 1_048_576
GpuCount = Annotated[int, Field(gt=0, le=MAX_GPUS, strict=False)]


class Section(CheckedModel):
    """A scenario section (frozen, strict; see :mod:`clustertwin.checked`)."""


#: Largest sizes the models compute in seconds: the model's (catalog.models.MODEL_SIZE_MAX,
#: which a catalog preset shares); the longest trained context is ~10 M tokens (issue 15).
SIZE_MAX_MODEL = dict(MODEL_SIZE_MAX)
SIZE_MAX = {**SIZE_MAX_MODEL, "seq_len": 16_777_216, "global_batch_tokens": 2**36,
             "global_batch_seqs": 2**26, "micro_batch": 2**20, "virtual_stages": 1024,
             "tp": MAX_GPUS, "pp": 1024, "cp": MAX_GPUS, "ep": MAX_GPUS, "dp": MAX_GPUS}


def at_most(v: Any, name: str) -> Any:
    top = SIZE_MAX[name]
    if isinstance(v, int) and not isinstance(v, bool) and v > top:
        raise ValueError(f"at most {top:,} (got {v:,})")
    return v
