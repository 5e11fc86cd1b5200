"""The queue in front of the planning processes.

A request's scenario is checked in the server (cheap) and looked up in the plan cache: a hit is
answered at once, without a slot; a scenario that another request is planning right now waits
for that plan instead of planning it twice. A miss waits in a bounded queue for one of the
worker slots (:mod:`.workers`); when the queue is full the answer is 503 with ``Retry-After``.
A plan past the wall-clock limit or the memory cap stops its worker (the slot starts a new one)
and is answered with a JSON error naming the limit.
"""

from __future__ import annotations

import asyncio
import math
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from clustertwin.serve.guard import HttpError
from clustertwin.serve.workers import MEMORY_CAP_MB, Slot

PLAN_TIMEOUT_S = 60.0  #: one plan's wall-clock time in a worker before the worker is stopped
QUEUE_MAX = 64  #: requests waiting for a worker beyond those being planned; then 503
LIGHT_TIMEOUT_S = 30.0  #: in-server work (checking a scenario, rendering an answer)


def default_workers() -> int:
    """One planning process per core the server may use (at least 1, at most 8)."""
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    return max(1, min(8, n))


class Runner:
    """Plans in worker processes behind a bounded queue; light work in threads."""

    def __init__(self, engine: Any, catalog_dirs: tuple[str, ...] = (), timeout_s: float = PLAN_TIMEOUT_S,
                 workers: int | None = None, memory_mb: int = MEMORY_CAP_MB, queue_max: int = QUEUE_MAX,
                 warm: tuple[Any, ...] | None = None) -> None:
        self.engine = engine
        self.timeout_s = timeout_s
        self.memory_mb = memory_mb
        self.queue_max = queue_max
        n = workers or default_workers()
        self.slots = [Slot(catalog_dirs, memory_mb << 20, warm) for _ in range(n)]
        self._threads = ThreadPoolExecutor(max_workers=n + 4, thread_name_prefix="serve")
        self._idle: asyncio.Queue[Slot] | None = None
        self._inflight: dict[str, asyncio.Future[Any]] = {}
        self.pending = 0  # requests holding or waiting for a slot
        self.plan_s = 1.0  # a running mean of plan times, for Retry-After
        if warm:
            for slot in self.slots:
                self._threads.submit(self._take_warm, slot)

    def _take_warm(self, slot: Slot) -> None:
        got = slot.warm_answer()
        if got and got[0] == "ok":
            self.engine.store(got[1].key, got[1])

    async def run(self, fn: Any, *args: Any) -> Any:
        """Light, bounded work in a thread of the server (no slot)."""
        from clustertwin.errors import UserError

        loop = asyncio.get_running_loop()
        try:
            return await asyncio.wait_for(loop.run_in_executor(self._threads, fn, *args), LIGHT_TIMEOUT_S)
        except TimeoutError:
            raise HttpError(503, f"the server took longer than {LIGHT_TIMEOUT_S:g} s; try again",
                            retry_after=5) from None
        except UserError as exc:
            raise HttpError(422, exc.problems) from None

    async def plan(self, doc: dict[str, Any], source: str = "request") -> Any:
        """The :class:`~clustertwin.serve.engine.Answer` for a scenario document."""
        scen = await self.run(self.engine.scenario, doc, source)
        key = self.engine.key(scen)
        hit = self.engine.cached(key)
        if hit is not None:
            return hit
        same = self._inflight.get(key)
        if same is not None:
            return await asyncio.shield(same)
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        fut.add_done_callback(lambda f: f.cancelled() or f.exception())  # read by waiters, if any
        self._inflight[key] = fut
        try:
            answer = await self._in_worker(("plan", doc, source))
            self.engine.store(key, answer)
            fut.set_result(answer)
            return answer
        except asyncio.CancelledError:
            fut.cancel()
            raise
        except BaseException as exc:
            fut.set_exception(exc)
            raise
        finally:
            del self._inflight[key]

    async def plan_or_problems(self, doc: dict[str, Any], source: str = "yaml") -> tuple[Any, list[Any]]:
        """(answer, []) or (None, the problems) when the scenario cannot be planned (422: its
        fields, or a limit it runs into), for the pages; a busy server is still an error."""
        try:
            return await self.plan(doc, source), []
        except HttpError as exc:
            if exc.status != 422:
                raise
            return None, exc.problems

    async def file(self, doc: dict[str, Any], name: str, source: str = "yaml") -> bytes:
        """A download (a name of :data:`clustertwin.serve.files.FILES`), made in a worker."""
        await self.run(self.engine.scenario, doc, source)  # a bad scenario: 422 before a slot
        return await self._in_worker(("file", doc, source, name))

    async def track(self, inputs: dict[str, Any]) -> Any:
        """The track page's parts for an upload (:func:`clustertwin.serve.track_page.form_inputs`),
        made in a worker; a bad scenario is a 422 before a slot."""
        doc, source = inputs["doc"], inputs["source"]
        await self.run(self.engine.scenario, doc, source)
        return await self._in_worker(("track", doc, source, inputs["logs"], inputs["sacct"], inputs["as_of"]))

    async def problems(self, doc: Any, source: str = "request") -> list[Any]:
        """Every problem ``clustertwin validate`` reports, checked in a worker."""
        return await self._in_worker(("problems", doc, source))

    def _busy(self) -> HttpError:
        wait = math.ceil(max(1.0, self.plan_s * (self.pending + 1) / len(self.slots)))
        return HttpError(503, f"{self.pending} plans are queued or running (at most "
                         f"{self.queue_max + len(self.slots)}); try again in {wait} s", retry_after=wait)

    async def _in_worker(self, job: tuple[Any, ...]) -> Any:
        if self.pending >= self.queue_max + len(self.slots):
            raise self._busy()
        if self._idle is None:
            self._idle = asyncio.Queue()
            for slot in self.slots:
                self._idle.put_nowait(slot)
        self.pending += 1
        try:
            slot = await self._idle.get()
        except BaseException:
            self.pending -= 1
            raise
        loop = asyncio.get_running_loop()
        started = loop.time()
        cf = self._threads.submit(slot.call, job, self.timeout_s)

        def release(_: Any) -> None:
            loop.call_soon_threadsafe(self._release, slot, loop.time() - started)

        cf.add_done_callback(release)
        return self._outcome(await asyncio.wrap_future(cf))

    def _release(self, slot: Slot, took: float) -> None:
        self.pending -= 1
        self.plan_s = 0.8 * self.plan_s + 0.2 * took
        assert self._idle is not None
        self._idle.put_nowait(slot)

    def _outcome(self, got: Any) -> Any:
        if got.kind == "ok":
            return got.value
        if got.kind == "user":
            raise HttpError(422, got.value)
        if got.kind == "timeout":
            raise HttpError(503, f"planning took longer than the {self.timeout_s:g} s limit per request "
                            "(--timeout); the plan was stopped", retry_after=5)
        if got.kind == "memory":
            raise HttpError(422, f"planning this scenario needs more than the {self.memory_mb:,} MiB "
                            "memory limit per request (--memory-cap); a count in it (GPUs, spares, "
                            "nodes) is probably far larger than intended")
        if got.kind == "died":
            raise HttpError(503, "the planning process stopped before answering (it was replaced); "
                            f"the {self.memory_mb:,} MiB memory limit per request is the likely cause",
                            retry_after=5)
        import logging

        from clustertwin.errors import Problem

        logging.getLogger("clustertwin.serve").error("internal error in a plan worker: %s", got.value)
        raise HttpError(500, [Problem("server", "", "internal error; see the server log")])

    def close(self) -> None:
        for slot in self.slots:
            slot.stop()
        self._threads.shutdown(wait=False, cancel_futures=True)
