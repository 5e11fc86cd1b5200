"""Hugging Face Trainer logs: ``trainer_state.json`` and the logged dicts, one per line.

The Trainer keeps every ``logging_steps`` entry in ``trainer_state.json`` under
``log_history``: ``{"epoch": 0.02, "grad_norm": 1.9, "learning_rate": 4.9e-05, "loss": 2.31,
"step": 10}`` (``num_input_tokens_seen`` when ``include_num_input_tokens_seen`` is on; eval
entries carry ``eval_loss`` instead of ``loss``; the last entry ``train_runtime``). The same
dicts are printed on stdout (Python's repr: single quotes) and written as JSON lines by logging
callbacks. The Trainer itself stores no clock time, so an entry is dated by a ``time``,
``timestamp`` or ``_timestamp`` key (epoch seconds or ISO 8601: what W&B exports and a one-line
callback adds); an entry without one is a bad line naming what is missing.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterable, Iterator
from typing import Any

from clustertwin.track.readers import RESUME_RE, Resume
from clustertwin.track.records import BadLine, LineStats, Record, number, parse_time

TIME_KEYS = ("time", "timestamp", "_timestamp", "wall_time")
TOKEN_KEYS = ("num_input_tokens_seen", "tokens")
#: a trainer_state.json is read whole; larger files are refused (it is a summary, not a log)
STATE_MAX_BYTES = 256 * 2**20
_LINE_MAX = 20_000


def _entry(d: dict[str, Any]) -> Record | None:
    """A Record of one log_history entry; None for entries that are not training steps."""
    if "loss" not in d:
        return None
    step = d.get("step", d.get("global_step"))
    if step is None:
        raise BadLine("no 'step' in the logged dict")
    when = next((d[k] for k in TIME_KEYS if k in d), None)
    if when is None:
        raise BadLine("no time key (time, timestamp or _timestamp) in the logged dict")
    t = float(when) if isinstance(when, int | float) and not isinstance(when, bool) else parse_time(str(when))
    tokens = next((d[k] for k in TOKEN_KEYS if k in d), None)
    return Record(step=int(number(str(step), "step")), t=t,
                  tokens=number(str(tokens), "tokens") if tokens is not None else None,
                  loss=number(str(d["loss"]), "loss"))


def read_state(doc: Any, stats: LineStats) -> Iterator[Record | Resume]:
    """Entries of a parsed ``trainer_state.json`` (named by their index in ``log_history``)."""
    stats.unit = "log_history entry"
    history = doc.get("log_history") if isinstance(doc, dict) else None
    if not isinstance(history, list):
        stats.reject(1, "no log_history list: not a trainer_state.json")
        return
    for i, d in enumerate(history, start=1):
        yield from _one(d, i, stats)


def _one(d: Any, no: int, stats: LineStats) -> Iterator[Record]:
    if not isinstance(d, dict):
        stats.reject(no, "log entry is not an object")
        return
    try:
        rec = _entry(d)
    except (BadLine, TypeError) as exc:
        stats.reject(no, str(exc))
        return
    if rec is None:
        stats.other += 1
        return
    stats.read += 1
    yield rec


def _parse_dict(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        raise BadLine("a '{' line that is neither JSON nor a Python dict") from None


def read_lines(lines: Iterable[tuple[int, str]], stats: LineStats) -> Iterator[Record | Resume]:
    """Logged dicts, one per line (JSON lines or the Trainer's printed repr)."""
    for no, text in lines:
        start = text.find("{")
        if start < 0 or "loss" not in text:
            if RESUME_RE.search(text):
                yield Resume(None, no)
            stats.other += 1
            continue
        body = text[start:].strip()
        if len(body) > _LINE_MAX:
            stats.reject(no, f"logged dict longer than {_LINE_MAX} characters")
            continue
        try:
            d = _parse_dict(body)
        except BadLine as exc:
            stats.reject(no, str(exc))
            continue
        yield from _one(d, no, stats)
