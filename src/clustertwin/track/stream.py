"""The bounded-memory accumulator a run's records stream through.

Records arrive in time order (file after file, each file in line order) and are taken in
columns of up to :data:`BATCH`; nothing per line is kept. What is kept, all bounded:

- segments: stretches of uninterrupted training (a new one starts at a restart);
- restarts: the step counter going back (the job reloaded an older checkpoint), a silence
  longer than the steps' own time by :data:`GAP_MIN_S` (plus :data:`GAP_REL` of it when the log
  gives no step time: then it is a typical one) (the job was down), or a "resuming from
  checkpoint" line;
- at most :data:`POINTS_MAX` points (time, step, tokens) for the burn-up chart, thinned by
  doubling the stride when full (segment ends are kept exactly in the segments);
- step time as one log-spaced histogram per day (weights: the steps each record covers), so
  any window's median comes out without the records;
- loss spikes (a loss above both ``SPIKE_RATIO`` x and ``SPIKE_MADS`` MADs over the median of its
  block of :data:`BATCH` records) and intervals with skipped or nan iterations, the first
  :data:`EVENTS_MAX` of each with their time (all of them counted).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from clustertwin.track.records import Record

BATCH = 4096
POINTS_MAX = 4096
EVENTS_MAX = 2000
#: a silence in the log longer than this (beyond the logged steps' own time) is a restart: the
#: job was down. Shorter stalls (a slow checkpoint save, a hiccup) count as slow steps.
GAP_MIN_S = 600.0
#: ... and, in a log that does not give the step time, longer than this share of the steps'
#: typical time (a coarse log, one row an hour or a day, whose rows vary is not a string of restarts)
GAP_REL = 0.5
SPIKE_RATIO = 1.2
SPIKE_MADS = 8.0
#: step-time histogram: log-spaced bins (0.9% wide) from 1 ms to 1e5 s
HIST_EDGES = np.logspace(-3, 5, 2001)
DAY_S = 86400.0


@dataclass
class Restart:
    """One restart seen in the log: the last record before and the first after it."""

    t_before: float
    step_before: int
    t_after: float
    step_after: int
    why: str            #: "step went back" | "gap" | "resume line"


@dataclass
class Accumulator:
    """Feed with :meth:`add` / :meth:`add_columns`, then :meth:`finish`. ``tokens_per_step``
    turns steps into tokens when a log has no token count; ``seq_len`` turns samples into tokens;
    ``as_of``: records after it are dropped (replaying the history up to a date)."""

    tokens_per_step: float
    seq_len: int
    as_of: float | None = None
    buf: list[Record] = field(default_factory=list)
    resume_pending: bool = False
    last: tuple[float, int, float] | None = None     #: (t, step, tokens) of the last record
    seg_start: tuple[float, int, float] | None = None
    segments: list[tuple[float, int, float, float, int, float]] = field(default_factory=list)
    restarts: list[Restart] = field(default_factory=list)
    points: list[np.ndarray] = field(default_factory=list)
    stride: int = 1
    seen: int = 0
    days: dict[int, np.ndarray] = field(default_factory=dict)
    spikes: list[tuple[float, int, float]] = field(default_factory=list)
    n_spikes: int = 0
    bad_steps: list[tuple[float, int, int, int]] = field(default_factory=list)  #: (t, step, skipped, nan)
    n_skipped: int = 0
    n_nan: int = 0
    mfu_sum: float = 0.0
    tflops_sum: float = 0.0
    perf_weight: float = 0.0
    tflops_weight: float = 0.0
    last_loss: float | None = None
    ref_step_s: float = 0.0   #: typical time per step between records (logs without a step time)
    dropped_after: int = 0    #: records after --as-of
    untimed: int = 0          #: records without a time (undatable)

    def add(self, rec: Record) -> None:
        self.buf.append(rec)
        if len(self.buf) >= BATCH:
            self.flush()

    def resume(self, t: float | None) -> None:
        """A "resuming" line: the next record starts a new segment."""
        self.flush()
        if t is None or self.as_of is None or t <= self.as_of:
            self.resume_pending = True

    def flush(self) -> None:
        if not self.buf:
            return
        recs, self.buf = self.buf, []
        cols = {k: np.array([getattr(r, k) if getattr(r, k) is not None else np.nan for r in recs], dtype=float)
                for k in ("t", "tokens", "samples", "step_s", "loss", "tflops", "mfu", "tps_per_gpu")}
        cols["step"] = np.array([r.step for r in recs], dtype=np.int64)
        cols["skipped"] = np.array([r.skipped for r in recs], dtype=np.int64)
        cols["nan"] = np.array([r.nan for r in recs], dtype=np.int64)
        self.add_columns(cols)

    def add_columns(self, c: dict[str, np.ndarray]) -> None:
        """A block of records as columns (NaN = not logged)."""
        keep = np.isfinite(c["t"])
        self.untimed += int((~keep).sum())
        if self.as_of is not None:
            late = keep & (c["t"] > self.as_of)
            self.dropped_after += int(late.sum())
            keep &= ~late
        if not keep.all():
            c = {k: v[keep] for k, v in c.items()}
        if len(c["t"]) == 0:
            return
        tok = self._tokens(c)
        self._segments(c["t"], c["step"], tok, c)
        self._quality(c)

    def _tokens(self, c: dict[str, np.ndarray]) -> np.ndarray:
        tok = c["tokens"].copy()
        from_samples = ~np.isfinite(tok) & np.isfinite(c["samples"])
        tok[from_samples] = c["samples"][from_samples] * self.seq_len
        from_steps = ~np.isfinite(tok)
        tok[from_steps] = c["step"][from_steps] * self.tokens_per_step
        return tok

    def _segments(self, t: np.ndarray, step: np.ndarray, tok: np.ndarray, c: dict[str, np.ndarray]) -> None:
        prev_t = np.concatenate(([self.last[0] if self.last else np.nan], t[:-1]))
        prev_step = np.concatenate(([self.last[1] if self.last else -1], step[:-1]))
        dstep = step - prev_step
        dt = t - prev_t
        # the steps' own time: as logged, else the chunk's median time per step (a log without a
        # step time: a gap is a silence well beyond what its neighbours take per step)
        per = np.where(dstep > 0, dt / np.maximum(dstep, 1), np.nan)
        fin = per[np.isfinite(per)]
        if len(fin) >= 5 or (len(fin) and not self.ref_step_s):
            self.ref_step_s = float(np.median(fin))
        own = np.where(np.isfinite(c["step_s"]), c["step_s"], self.ref_step_s) * np.maximum(dstep, 0)
        back = dstep <= 0
        slack = np.where(np.isfinite(c["step_s"]), 0.0, GAP_REL) * own  # the steps' time is a guess
        gap = np.isfinite(dt) & (dt > own + slack + GAP_MIN_S)
        brk = (back | gap) & np.isfinite(prev_t)
        if self.resume_pending and self.last is not None:
            brk[0] = True
        self.resume_pending = False
        # the measured step time; else the time between records of one segment per step
        derived = np.where(~brk & (dstep > 0) & np.isfinite(dt), dt / np.maximum(dstep, 1), np.nan)
        step_s = np.where(np.isfinite(c["step_s"]), c["step_s"], derived)
        weight = np.where(~brk & (dstep > 0), dstep, 1).astype(float)
        self._histogram(t, step_s, weight)
        for i in np.flatnonzero(brk):
            why = "step went back" if back[i] else ("gap" if gap[i] else "resume line")
            self.restarts.append(Restart(float(prev_t[i]), int(prev_step[i]), float(t[i]), int(step[i]), why))
        starts = np.unique(np.concatenate(([0], np.flatnonzero(brk))))
        ends = np.append(starts[1:] - 1, len(t) - 1)
        for s, e in zip(starts, ends, strict=True):
            if s == 0 and not brk[0] and self.seg_start is not None:
                first = self.seg_start
            else:
                if s > 0 or brk[0]:
                    self._close()
                first = (float(t[s]), int(step[s]), float(tok[s]))
            self.seg_start = first
            self.last = (float(t[e]), int(step[e]), float(tok[e]))
        self._points(t, step, tok)

    def _close(self) -> None:
        if self.seg_start is not None and self.last is not None:
            self.segments.append((*self.seg_start, *self.last))

    def _histogram(self, t: np.ndarray, step_s: np.ndarray, weight: np.ndarray) -> None:
        ok = np.isfinite(step_s) & (step_s > 0)
        if not ok.any():
            return
        day = np.floor(t[ok] / DAY_S).astype(np.int64)
        bins = np.clip(np.searchsorted(HIST_EDGES, step_s[ok]) - 1, 0, len(HIST_EDGES) - 2)
        w = weight[ok]
        for d in np.unique(day):
            sel = day == d
            h = self.days.setdefault(int(d), np.zeros(len(HIST_EDGES) - 1))
            h += np.bincount(bins[sel], weights=w[sel], minlength=len(h))

    def _points(self, t: np.ndarray, step: np.ndarray, tok: np.ndarray) -> None:
        idx = np.arange(self.seen, self.seen + len(t))
        self.seen += len(t)
        sel = idx % self.stride == 0
        if sel.any():
            self.points.append(np.stack([t[sel], step[sel].astype(float), tok[sel]], axis=1))
        if sum(len(p) for p in self.points) > POINTS_MAX:
            allp = np.concatenate(self.points)
            self.points, self.stride = [allp[::2]], self.stride * 2

    def _quality(self, c: dict[str, np.ndarray]) -> None:
        loss = c["loss"]
        for lo in range(0, len(loss), BATCH):
            block = loss[lo:lo + BATCH]
            fin = np.isfinite(block)
            if fin.sum() >= 16:
                med = float(np.median(block[fin]))
                mad = float(np.median(np.abs(block[fin] - med))) or 1e-12
                hit = np.flatnonzero(fin & (block > med * SPIKE_RATIO) & (block > med + SPIKE_MADS * mad))
                self.n_spikes += len(hit)
                for i in hit[: max(0, EVENTS_MAX - len(self.spikes))]:
                    self.spikes.append((float(c["t"][lo + i]), int(c["step"][lo + i]), float(block[i])))
        fin = np.isfinite(loss)
        if fin.any():
            self.last_loss = float(loss[fin][-1])
        bad = np.flatnonzero((c["skipped"] > 0) | (c["nan"] > 0))
        self.n_skipped += int(c["skipped"].sum())
        self.n_nan += int(c["nan"].sum())
        for i in bad[: max(0, EVENTS_MAX - len(self.bad_steps))]:
            self.bad_steps.append((float(c["t"][i]), int(c["step"][i]), int(c["skipped"][i]), int(c["nan"][i])))
        for key, total, weight in (("mfu", "mfu_sum", "perf_weight"), ("tflops", "tflops_sum", "tflops_weight")):
            ok = np.isfinite(c[key])
            setattr(self, total, getattr(self, total) + float(c[key][ok].sum()))
            setattr(self, weight, getattr(self, weight) + float(ok.sum()))

    def finish(self) -> RunHistory:
        self.flush()
        self._close()
        self.seg_start = None
        pts = np.concatenate(self.points) if self.points else np.zeros((0, 3))
        return RunHistory(
            segments=tuple(self.segments), restarts=tuple(self.restarts), points=pts,
            days={d: h.copy() for d, h in sorted(self.days.items())}, spikes=tuple(self.spikes),
            n_spikes=self.n_spikes, bad_steps=tuple(self.bad_steps), n_skipped=self.n_skipped,
            n_nan=self.n_nan,
            mfu=self.mfu_sum / self.perf_weight if self.perf_weight else None,
            tflops=self.tflops_sum / self.tflops_weight if self.tflops_weight else None,
            last_loss=self.last_loss, dropped_after=self.dropped_after, untimed=self.untimed)


@dataclass(frozen=True)
class RunHistory:
    """What the log says, summarised (segments in time order)."""

    segments: tuple[tuple[float, int, float, float, int, float], ...]  #: (t0, step0, tok0, t1, step1, tok1)
    restarts: tuple[Restart, ...]
    points: np.ndarray       #: (n, 3): time, step, tokens
    days: dict[int, np.ndarray]
    spikes: tuple[tuple[float, int, float], ...]
    n_spikes: int
    bad_steps: tuple[tuple[float, int, int, int], ...]
    n_skipped: int
    n_nan: int
    mfu: float | None
    tflops: float | None
    last_loss: float | None
    dropped_after: int
    untimed: int

    @property
    def start(self) -> float:
        return self.segments[0][0]

    @property
    def end(self) -> float:
        return max(s[3] for s in self.segments)

    @property
    def tokens_done(self) -> float:
        return self.segments[-1][5]

    def step_time(self, since: float = -math.inf, q: float = 0.5) -> float | None:
        """The ``q`` quantile of the step time over the days from ``since`` (weighted by steps)."""
        first = math.floor(since / DAY_S) if math.isfinite(since) else None
        hs = [h for d, h in self.days.items() if first is None or d >= first]
        if not hs:
            return None
        return hist_quantile(np.sum(hs, axis=0), q)


def hist_quantile(h: np.ndarray, q: float) -> float | None:
    """The ``q`` quantile of a step-time histogram on :data:`HIST_EDGES` (log-interpolated
    inside the bin); None for an empty one."""
    cum = np.cumsum(h)
    if cum[-1] <= 0:
        return None
    want = q * cum[-1]
    i = int(np.searchsorted(cum, want))
    below = cum[i - 1] if i > 0 else 0.0
    frac = (want - below) / h[i] if h[i] > 0 else 0.5
    lo, hi = math.log(HIST_EDGES[i]), math.log(HIST_EDGES[i + 1])
    return float(math.exp(lo + frac * (hi - lo)))
