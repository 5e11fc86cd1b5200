"""Finding ``shared/traces``: the ``CLUSTERTWIN_TRACES`` variable, else a ``shared/traces``
folder next to (or above) the current directory or the installed package."""

from __future__ import annotations

import os
from pathlib import Path

ENV = "CLUSTERTWIN_TRACES"


def traces_dir() -> Path | None:
    env = os.environ.get(ENV)
    if env:
        p = Path(env)
        return p if p.is_dir() else None
    starts = [Path.cwd(), Path(__file__).resolve()]
    for start in starts:
        for d in (start, *start.parents):
            for cand in (d / "shared" / "traces", d.parent / "shared" / "traces"):
                if cand.is_dir():
                    return cand
    return None
