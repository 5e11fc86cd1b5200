"""Line readers for Megatron-LM / NeMo, torchtitan and a plain CSV (HF Trainer: :mod:`.hf`).

Each reader is a generator over ``(line_no, text)`` that yields :class:`Record` and
:class:`Resume` items and counts what it cannot read in a :class:`LineStats`. Lines that are
not metric lines (start-up banners, timers, warnings) are ``other``, neither read nor bad.

Formats (as the frameworks print them):

- Megatron-LM ``training_log`` (and NeMo's Megatron-core runs, Megatron-DeepSpeed): ``[2025-10-11
  18:11:22] iteration      311/  500000 | consumed samples:          311 | elapsed time per
  iteration (ms): 179.8 | throughput per GPU (TFLOP/s/GPU): 26.8 | learning rate: 4.34E-05 |
  global batch size:     1 | lm loss: 7.220541E+00 | loss scale: 1.0 | grad norm: 6.003 |
  number of skipped iterations:   0 | number of nan iterations:   0 |``. The leading time is
  printed by recent versions only; older logs print ``[before the start of training step]
  datetime: 2023-07-16 11:34:57`` once per launch, and the reader dates later lines from it (or
  from the last dated line of any kind) and the elapsed time per iteration. Megatron-DeepSpeed
  adds ``consumed tokens:``, prints the elapsed time in ``(s)`` and the throughput as
  ``TFLOPs:``. NeMo 2 prints ``Training epoch 0, iteration 97/99 | lr: 1.469e-05 |
  global_batch_size: 128 | global_step: 97 | reduced_train_loss: 6.265 | train_step_timing in s:
  12.22 | consumed_samples: 12544`` (dated by the launcher's ``[2025-11-20T14:55:23+08:00]``
  prefix, or by the ``[NeMo I 2024-11-15 10:22:04 ...]`` lines around it).
- torchtitan's metrics logger: ``[titan] 2026-02-11 00:54:17,768 - root - INFO - step:  2  loss:
  12.85991  grad_norm:  2.1345  memory: 19.45GiB(30.39%)  tps: 5,941  tflops: 56.37  mfu:
  18.91%`` (``tps`` is tokens per second per GPU; the time is the logging module's).
- CSV with a header naming ``time, step, tokens`` (and optionally ``loss``): ``time`` in ISO
  8601 or epoch seconds, ``tokens`` cumulative.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from clustertwin.track.records import BadLine, LineStats, Record, number, parse_time

#: a line saying the job loaded a checkpoint (any framework): a restart, whatever the steps do
RESUME_RE = re.compile(r"(?i)\b(resum(?:e|ed|ing) (?:from|training)|loading (?:the )?checkpoint|"
                       r"loaded (?:the )?checkpoint|restor(?:e|ed|ing) (?:from )?checkpoint)")
_STAMP_RE = re.compile(r"(\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2}\b)?)")
MEG_ITER_RE = re.compile(r"\biteration\s+(\d+)\s*/\s*(\d+)\s*\|")
_LOADED_AT_RE = re.compile(r"\bat iteration\s+(\d+)")
MEG_ANCHOR_RE = re.compile(r"datetime:\s*(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})")
#: NeMo 2 (``Training epoch 0, iteration 97/99 | lr: ... | global_batch_size: 128 | global_step: 97 |
#: reduced_train_loss: 6.265 | train_step_timing in s: 12.22 | consumed_samples: 12544``) -> Megatron's names
_NEMO2 = {"train_step_timing in s": "elapsed time per iteration (s)", "reduced_train_loss": "lm loss",
          "consumed_samples": "consumed samples", "global_batch_size": "global batch size"}
_TT_RE = re.compile(r"\bstep:\s*(\d+)\s+loss:\s*(\S+)")
_TT_FIELDS = re.compile(r"\b(tps|tflops|mfu|memory):\s*([\d.,]+)")


@dataclass(slots=True)
class Resume:
    """A "loading checkpoint" / "resuming" line: the job (re)started from a checkpoint."""

    t: float | None
    line_no: int


def _stamp(text: str) -> float | None:
    m = _STAMP_RE.search(text)
    return parse_time(m.group(1)) if m else None


def _stamp_or_none(text: str) -> float | None:
    try:
        return _stamp(text)
    except BadLine:
        return None


def _meg_fields(text: str) -> dict[str, str]:
    out = {}
    for part in text.split("|"):
        key, sep, val = part.partition(":")
        if sep:
            out[key.strip().lower()] = val.strip()
    return out


def _meg_record(text: str, m: re.Match[str]) -> Record:
    f = _meg_fields(text[m.end():])
    for nemo, meg in _NEMO2.items():  # NeMo 2's progress line names the same fields its own way
        if nemo in f and meg not in f:
            f[meg] = f[nemo]
    step_s = None
    if "elapsed time per iteration (ms)" in f:
        step_s = number(f["elapsed time per iteration (ms)"], "elapsed time per iteration (ms)") / 1e3
    elif "elapsed time per iteration (s)" in f:
        step_s = number(f["elapsed time per iteration (s)"], "elapsed time per iteration (s)")
    else:
        raise BadLine("no 'elapsed time per iteration' field")
    if step_s <= 0:
        raise BadLine("elapsed time per iteration is not positive")
    loss = f.get("lm loss", f.get("lm_loss"))
    tflops = f.get("throughput per gpu (tflop/s/gpu)", f.get("tflops"))
    step = int(number(f["global_step"], "global_step")) if "global_step" in f else int(m.group(1))
    rec = Record(step=step, t=_stamp(text[: m.start()]), step_s=step_s,
                 loss=number(loss, "lm loss") if loss is not None else None,
                 skipped=int(number(f.get("number of skipped iterations", "0"), "skipped iterations")),
                 nan=int(number(f.get("number of nan iterations", "0"), "nan iterations")),
                 tflops=number(tflops.removesuffix("TFLOPS"), "TFLOP/s") if tflops else None)
    if "global batch size" in f:
        rec.batch = number(f["global batch size"], "global batch size")
    if "consumed tokens" in f:
        rec.tokens = number(f["consumed tokens"], "consumed tokens")
    elif "consumed samples" in f:
        rec.samples = number(f["consumed samples"], "consumed samples")
    return rec


def read_megatron(lines: Iterable[tuple[int, str]], stats: LineStats,
                  state: dict[str, float | None] | None = None) -> Iterator[Record | Resume]:
    """Megatron-LM / NeMo / Megatron-DeepSpeed iteration lines (consumed samples are turned
    into tokens by the caller, who knows the sequence length). ``state`` carries the launch
    time across calls (the block reader calls this once per block it cannot take whole)."""
    state = state if state is not None else {}
    anchor, clock = state.get("anchor"), state.get("clock")
    for no, text in lines:
        m = MEG_ITER_RE.search(text)
        if m is None:
            a = MEG_ANCHOR_RE.search(text)
            when = parse_time(a.group(1)) if a is not None else _stamp_or_none(text)
            if when is not None:  # a dated line: undated iteration lines count on from it
                anchor, clock = when, None
                state["anchor"], state["clock"] = anchor, clock
            if RESUME_RE.search(text):
                at = _LOADED_AT_RE.search(text)
                if at is not None:  # a launch's first logged step counts from here
                    state["step"] = int(at.group(1))
                yield Resume(_stamp(text), no)
            stats.other += 1
            continue
        try:
            rec = _meg_record(text, m)
        except BadLine as exc:
            stats.reject(no, str(exc))
            continue
        if rec.t is None and anchor is not None:  # date it from the launch's datetime line
            prev = state.get("step") or 0  # a launch without a loaded checkpoint starts at 0
            steps = rec.step - prev if rec.step > prev else 1
            clock = (anchor if clock is None else clock) + steps * rec.step_s
            rec.t = clock
        state["anchor"], state["clock"], state["step"] = anchor, clock, rec.step
        stats.read += 1
        yield rec


def read_torchtitan(lines: Iterable[tuple[int, str]], stats: LineStats) -> Iterator[Record | Resume]:
    """torchtitan step lines (tokens/s per GPU in ``tps``; MFU in percent)."""
    for no, text in lines:
        m = _TT_RE.search(text)
        if m is None:
            if RESUME_RE.search(text):
                yield Resume(_stamp(text), no)
            stats.other += 1
            continue
        try:
            loss = number(m.group(2), "loss") if m.group(2).lower() != "nan" else float("nan")
            f = {k: v for k, v in _TT_FIELDS.findall(text[m.end():])}
            rec = Record(step=int(m.group(1)), t=_stamp(text[: m.start()]), loss=loss,
                         nan=1 if loss != loss else 0)
            if "tflops" in f:
                rec.tflops = number(f["tflops"], "tflops")
            if "mfu" in f:
                rec.mfu = number(f["mfu"], "mfu") / 100.0
            if "tps" in f:  # tokens per second per GPU: the step time once the GPUs are known
                rec.tps_per_gpu = number(f["tps"], "tps")
        except BadLine as exc:
            stats.reject(no, str(exc))
            continue
        if rec.t is None:
            stats.reject(no, "no time on the step line (log with torchtitan's default format)")
            continue
        stats.read += 1
        yield rec


CSV_COLUMNS = ("time", "step", "tokens")


def read_csv(lines: Iterable[tuple[int, str]], stats: LineStats) -> Iterator[Record | Resume]:
    """``time, step, tokens[, loss]`` with a header row (any column order, extra columns ignored)."""
    it = iter(lines)
    header: list[str] | None = None
    for _no, text in it:
        if text.strip():
            header = [h.strip().lower() for h in text.strip().split(",")]
            break
    if header is None:
        return
    col = {name: header.index(name) for name in (*CSV_COLUMNS, "loss") if name in header}
    for no, text in it:
        if not text.strip():
            continue
        cells = text.rstrip("\r\n").split(",")
        if len(cells) != len(header):
            stats.reject(no, f"{len(cells)} cells, the header has {len(header)}")
            continue
        try:
            loss = cells[col["loss"]].strip() if "loss" in col else ""
            rec = Record(step=int(number(cells[col["step"]], "step")), t=parse_time(cells[col["time"]]),
                         tokens=number(cells[col["tokens"]], "tokens"),
                         loss=number(loss, "loss") if loss else None)
        except BadLine as exc:
            stats.reject(no, str(exc))
            continue
        stats.read += 1
        yield rec
