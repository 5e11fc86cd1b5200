"""Process helpers for the tests that kill a command and look for what it left running
(Linux ``/proc``)."""

from __future__ import annotations

import os
import time


def ppid(pid: int) -> int:
    """The parent of ``pid``; -1 once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return -1


def state(pid: int) -> str:
    """The ``/proc`` state letter of ``pid`` (``Z`` a zombie), or ``gone``."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return "gone"


def children(parents: set[int] | int) -> list[int]:
    """The running processes whose parent is one of ``parents``."""
    wanted = {parents} if isinstance(parents, int) else set(parents)
    return [int(p) for p in os.listdir("/proc") if p.isdigit() and ppid(int(p)) in wanted]


def still_running(pids: list[int], within_s: float) -> list[int]:
    """Those of ``pids`` still running (not gone, not a zombie) after waiting up to ``within_s``."""
    deadline = time.monotonic() + within_s
    left = list(pids)
    while left:
        left = [p for p in left if state(p) not in ("Z", "X", "gone")]
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    return left
