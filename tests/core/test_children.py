"""Values computed ahead in a forked child (:class:`clustertwin.children.Ahead`): the value when
the key is one of its jobs', nothing otherwise (the caller then computes it itself), each job's
value whatever became of the others, and no child left running or unreaped whichever way it
ends."""

from __future__ import annotations

import os
import signal
import time

import pytest

from clustertwin.children import MISSING, Ahead, can_fork_ahead
from tests.procs import still_running

pytestmark = pytest.mark.skipif(not can_fork_ahead(), reason="Ahead needs Linux and two usable CPUs")


def _pid(ahead: Ahead) -> int:
    return ahead._pid


def test_the_childs_value_for_its_key():
    parent = os.getpid()
    ahead = Ahead.start([(7, lambda: (os.getpid(), [1.5, 2.5]))])
    pid = _pid(ahead)
    child_pid, value = ahead.get(7)
    assert child_pid == pid != parent  # computed in the child, not here
    assert value == [1.5, 2.5]
    assert still_running([pid], 5.0) == []
    assert ahead.get(7) is MISSING  # once only


def test_another_key_is_missing_and_the_child_is_stopped():
    ahead = Ahead.start([(2048, lambda: time.sleep(60))])
    pid = _pid(ahead)
    t0 = time.monotonic()
    assert ahead.get(2016) is MISSING
    ahead.close()
    assert time.monotonic() - t0 < 10
    assert still_running([pid], 5.0) == []


def test_a_failing_child_gives_missing_not_its_error():
    def boom():
        raise ValueError("in the child")

    ahead = Ahead.start([("k", boom)])
    assert ahead.get("k") is MISSING


def test_jobs_are_sent_in_order_and_a_later_key_keeps_the_earlier_values():
    ahead = Ahead.start([("a", lambda: 1), ("b", lambda: os.getpid()), ("c", lambda: [3])])
    pid = _pid(ahead)
    assert ahead.get("b") == pid          # "a" is read on the way and kept for its turn
    assert ahead.get("a") == 1
    assert ahead.get("a") is MISSING      # once only
    assert ahead.get("c") == [3]
    assert still_running([pid], 5.0) == []


def test_a_failed_job_leaves_the_next_ones_their_values():
    def boom():
        raise ValueError("in the child")

    ahead = Ahead.start([("a", boom), ("b", lambda: 2)])
    assert ahead.get("a") is MISSING
    assert ahead.get("b") == 2


def test_a_child_killed_between_two_values_gives_the_first_and_not_the_second():
    ahead = Ahead.start([("a", lambda: 1), ("b", lambda: time.sleep(60))])
    pid = _pid(ahead)
    assert ahead.get("a") == 1
    os.kill(pid, signal.SIGKILL)
    t0 = time.monotonic()
    assert ahead.get("b") is MISSING
    assert time.monotonic() - t0 < 10
    assert still_running([pid], 5.0) == []


def test_nothing_to_compute_starts_no_child():
    assert Ahead.start([]) is None


def test_a_killed_child_gives_missing_without_a_hang():
    ahead = Ahead.start([("k", lambda: time.sleep(60))])
    pid = _pid(ahead)
    os.kill(pid, signal.SIGKILL)
    t0 = time.monotonic()
    assert ahead.get("k") is MISSING
    assert time.monotonic() - t0 < 10
    assert still_running([pid], 5.0) == []


def test_a_value_that_does_not_pickle_is_missing():
    ahead = Ahead.start([("k", lambda: (lambda: 1))])
    assert ahead.get("k") is MISSING


def test_close_stops_an_unread_child():
    ahead = Ahead.start([("k", lambda: time.sleep(60))])
    pid = _pid(ahead)
    t0 = time.monotonic()
    ahead.close()
    ahead.close()  # twice is harmless
    assert time.monotonic() - t0 < 10
    assert still_running([pid], 5.0) == []


def test_no_child_on_one_cpu(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0})
    assert Ahead.start([("k", lambda: 1)]) is None


def test_no_child_from_a_process_with_another_thread():
    import threading

    stop = threading.Event()
    t = threading.Thread(target=stop.wait, daemon=True)
    t.start()
    try:
        assert Ahead.start([("k", lambda: 1)]) is None
    finally:
        stop.set()
        t.join()
    ahead = Ahead.start([("k", lambda: 1)])  # one thread again
    assert ahead is not None and ahead.get("k") == 1


def test_no_child_from_a_daemonic_process(monkeypatch):
    import multiprocessing

    monkeypatch.setattr(multiprocessing.current_process(), "_config",
                        {**multiprocessing.current_process()._config, "daemon": True})
    assert Ahead.start([("k", lambda: 1)]) is None


def test_the_child_writes_nothing_and_leaves_this_process_output_alone(tmp_path):
    """Output this process buffered before the fork is written once (the child leaves through
    os._exit), and the child's work prints nothing of its own."""
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from clustertwin.children import Ahead\n"
        "sys.stdout.write('before ')\n"           # buffered, not flushed yet
        "a = Ahead.start([(1, lambda: 41 + 1)])\n"
        "print(a.get(1))\n"
    )
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "before 42\n"
    assert r.stderr == ""


def test_a_child_ends_with_a_killed_parent(tmp_path):
    """kill -9 of the process that started the child, even at once after the fork (before the
    child could look up its parent): the child sees it is orphaned and exits within a fraction
    of a second, instead of computing on for nobody."""
    import subprocess
    import sys

    pid_file = tmp_path / "child.pid"
    script = (
        "import os, signal, time\n"
        "from clustertwin.children import Ahead\n"
        "a = Ahead.start([(1, lambda: time.sleep(120))])\n"
        f"open({str(pid_file)!r}, 'w').write(str(a._pid))\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    r = subprocess.run([sys.executable, "-c", script], timeout=60)
    assert r.returncode == -9
    child = int(pid_file.read_text())
    assert still_running([child], 10.0) == []


def test_a_watcher_told_a_parent_already_gone_exits_at_once():
    """exit_with_parent with the parent's id taken before the process started: if that parent
    is already gone (the process was adopted), the process ends at its first look."""
    import subprocess
    import sys

    script = (
        "import time\n"
        "from clustertwin.children import exit_with_parent\n"
        "exit_with_parent(0.05, parent=1)\n"  # never this process's parent here
        "time.sleep(30)\n"
        "raise SystemExit(7)\n"
    )
    r = subprocess.run([sys.executable, "-c", script], timeout=20)
    assert r.returncode == 0  # ended by the watcher, long before the sleep


@pytest.mark.parametrize("method, own", [("fork", True), ("spawn", True), ("forkserver", False)])
def test_pool_watch_args_per_start_method(method, own):
    import multiprocessing

    from clustertwin.children import WATCH_PERIOD_S, watch_args

    if method not in multiprocessing.get_all_start_methods():
        pytest.skip(f"no {method} start method here")
    args = watch_args(multiprocessing.get_context(method))
    assert args == ((WATCH_PERIOD_S, os.getpid()) if own else ())
