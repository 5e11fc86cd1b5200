"""Where named traces live: the ones packaged with clustertwin (``data/`` beside this module,
gzip-compressed, each folder with its licence and attribution; ``data/index.yaml`` lists them)
and, for traces whose terms do not allow redistribution (Sia's workloads, Lucid's Venus files),
a folder the user names with ``CLUSTERTWIN_TRACES`` laid out the same way. Nothing is searched
for elsewhere: no walk up the directory tree."""

from __future__ import annotations

import os
from pathlib import Path

from clustertwin.errors import Problem, UsageError

ENV = "CLUSTERTWIN_TRACES"
PACKAGED = Path(__file__).with_name("data")


def user_dir() -> Path | None:
    """``$CLUSTERTWIN_TRACES`` (None when unset; a UsageError when it names no folder)."""
    env = os.environ.get(ENV)
    if not env:
        return None
    p = Path(env)
    if not p.is_dir():
        raise UsageError([Problem(ENV, "", f"{env!r} is not a folder; set it to the folder "
                                  "holding the trace sub-folders, or unset it")])
    return p


def roots() -> list[Path]:
    """Folders searched for a named trace, first match wins: the user's, then the packaged."""
    user = user_dir()
    return [user, PACKAGED] if user is not None else [PACKAGED]


def traces_dir() -> Path:
    """The first trace folder: ``$CLUSTERTWIN_TRACES`` when set, else the packaged traces."""
    return roots()[0]


def find_file(relative: str) -> Path | None:
    """``relative`` (e.g. ``tiresias-sample/60_job.csv``) or its ``.gz`` in the first root that
    holds either."""
    for root in roots():
        for cand in (root / relative, root / f"{relative}.gz"):
            if cand.is_file():
                return cand
    return None


def find_files(folder: str, suffix: str) -> list[Path]:
    """Files ``*suffix`` (or ``*suffix.gz``) of ``folder`` in the first root that has any."""
    for root in roots():
        d = root / folder
        if d.is_dir():
            files = sorted([*d.glob(f"*{suffix}"), *d.glob(f"*{suffix}.gz")])
            if files:
                return files
    return []


def not_found(what: str, relative: str) -> UsageError:
    """The one-line refusal for a named trace file that is in no root."""
    return UsageError([Problem("--trace", what, f"{relative} is not among the packaged traces "
                               "(`clustertwin traces list`); for others set "
                               f"{ENV} to a folder holding {relative.split('/')[0]}/")])


def trace_stem(path: Path) -> str:
    """The file's name without ``.gz`` and its own suffix (``0e4a51.trace.gz`` -> ``0e4a51``)."""
    name = path.name[:-3] if path.name.endswith(".gz") else path.name
    return Path(name).stem
