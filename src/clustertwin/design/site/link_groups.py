"""Links of one kind as NumPy arrays (the cabling map's building block) and small helpers
shared by :mod:`clustertwin.design.site.cabling` and :mod:`clustertwin.design.site.cabling_networks`."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class LinkGroup(NamedTuple):
    """Links of one kind as arrays: device indices into Inventory.devices and port numbers."""

    kind: str
    fabric: str
    a: np.ndarray
    a_port: np.ndarray
    a_prefix: str
    b: np.ndarray
    b_port: np.ndarray
    plane: np.ndarray | int
    media: str
    cable: np.ndarray | None    #: per-link cable number within the group (None = one each)
    gbps: float


def rank_within(dev: np.ndarray) -> np.ndarray:
    """For each entry, how many earlier entries name the same device (0-based port offset)."""
    if dev.size == 0:
        return dev.copy()
    order = np.argsort(dev, kind="stable")
    sd = dev[order]
    start = np.r_[0, np.flatnonzero(sd[1:] != sd[:-1]) + 1]
    counts = np.diff(np.r_[start, sd.size])
    out = np.empty_like(dev)
    out[order] = np.arange(sd.size) - np.repeat(start, counts)
    return out


def as_index(x) -> np.ndarray:
    return np.asarray(x, dtype=np.int64)


def spread_over(count: int, bins: int) -> np.ndarray:
    """Bin of each of ``count`` items spread evenly, in order, over ``bins`` bins."""
    return (np.arange(count, dtype=np.int64) * bins) // max(1, count)
