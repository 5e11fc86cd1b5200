"""Slurm hostlist compression: ``gpu0001, gpu0002, gpu0004`` -> ``gpu[0001-0002,0004]``."""

from __future__ import annotations

import re

_TAIL = re.compile(r"^(.*?)(\d+)$")


def compress(names: list[str] | tuple[str, ...]) -> str:
    """Comma-joined hostlist expressions, one per (prefix, digit width), in first-seen order.

    Names without a numeric tail are listed as they are."""
    groups: dict[tuple[str, int], list[int]] = {}
    plain: list[str] = []
    for name in names:
        m = _TAIL.match(name)
        if m is None:
            plain.append(name)
            continue
        groups.setdefault((m.group(1), len(m.group(2))), []).append(int(m.group(2)))
    out = []
    for (prefix, width), nums in groups.items():
        nums = sorted(set(nums))
        if len(nums) == 1:
            out.append(f"{prefix}{nums[0]:0{width}d}")
            continue
        parts, start, prev = [], nums[0], nums[0]
        for n in nums[1:] + [None]:
            if n is not None and n == prev + 1:
                prev = n
                continue
            parts.append(f"{start:0{width}d}" if start == prev
                         else f"{start:0{width}d}-{prev:0{width}d}")
            if n is not None:
                start = prev = n
        out.append(f"{prefix}[{','.join(parts)}]")
    return ",".join(out + plain)


def expand(expr: str) -> list[str]:
    """Inverse of :func:`compress` for the forms it writes (used by tests and lints)."""
    out: list[str] = []
    for m in re.finditer(r"([^,\[]+)(?:\[([^\]]+)\])?", expr):
        prefix, body = m.group(1), m.group(2)
        if body is None:
            out.append(prefix)
            continue
        for part in body.split(","):
            a, _, b = part.partition("-")
            width = len(a)
            for n in range(int(a), int(b or a) + 1):
                out.append(f"{prefix}{n:0{width}d}")
    return out
