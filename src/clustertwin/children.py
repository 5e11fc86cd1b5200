"""Worker processes that end with the process that started them.

A pool worker blocked on its pipe may never see the end of it when its parent is killed: a
forked sibling can hold a copy of the parent's side, so ``kill -9`` of a sweep, a trace
parse or the web server would leave its workers waiting for good (each ~130 MB). Each worker
runs :func:`exit_with_parent` first: a daemon thread watches the parent's process id, and a
worker whose parent is gone (re-parented) exits.
"""

from __future__ import annotations

import os
import threading
import time

#: seconds between two looks at the parent's id
WATCH_PERIOD_S = 1.0


def exit_with_parent(period_s: float = WATCH_PERIOD_S) -> None:
    """End this process when its parent (as of this call) is gone: usable as a pool's
    ``initializer``. The parent is read here, not passed in, so a pool started through a fork
    server watches the fork server (which itself ends with the process that started it)."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(period_s)
        os._exit(0)

    threading.Thread(target=watch, name="clustertwin-parent-watch", daemon=True).start()
