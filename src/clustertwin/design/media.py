"""Cable media and the cheapest one that reaches.

:func:`load_media` reads ``data/cable_media.yaml`` (each medium: kind, vendor, part number,
speed range, reach ``max_length_m``, a ranking price ``usd_per_link``, source and date).
:func:`choose_media` picks, for arrays of link speeds and routed lengths, the cheapest medium
whose speed range holds the link and whose reach covers it, and refuses a link no medium
reaches (a design error, never a silent row). Copper is only offered where ``copper_ok``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

import numpy as np
import yaml

from clustertwin.errors import InfeasibleError, Problem


@dataclass(frozen=True)
class Medium:
    """A cable or transceiver medium, its reach and its price."""

    id: str
    kind: str
    vendor: str
    part_number: str
    min_gbps: float
    max_gbps: float
    max_length_m: float
    usd_per_link: float
    source: str
    as_of: str
    cable_usd_per_link: float = 0.0   #: the fibre's share of usd_per_link (optical media)
    ports_per_module: int = 1         #: link ends one transceiver carries (twin-port: 2)

    @property
    def copper(self) -> bool:
        return "copper" in self.kind


@lru_cache(maxsize=1)
def load_media() -> tuple[Medium, ...]:
    text = resources.files(__package__).joinpath("data/cable_media.yaml").read_text()
    # CSafeLoader exists only where PyYAML was built with libyaml; the pure-Python one reads the same
    rows = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))["media"]  # noqa: S506
    out = [Medium(**{k: (str(v) if k in ("as_of", "part_number") else v)
                     for k, v in r.items()}) for r in rows]
    return tuple(sorted(out, key=lambda m: m.usd_per_link))


def choose_media(gbps: np.ndarray, length_m: np.ndarray, copper_ok: np.ndarray | bool = True,
                 media: tuple[Medium, ...] | None = None, what: str = "cabling") -> np.ndarray:
    """Index into ``media`` (default :func:`load_media`, cheapest first) of the cheapest medium
    for each link; raises InfeasibleError naming the longest link no medium reaches."""
    media = media or load_media()
    gbps = np.asarray(gbps, dtype=float)
    length = np.asarray(length_m, dtype=float)
    copper_ok = np.broadcast_to(np.asarray(copper_ok, dtype=bool), gbps.shape)
    pick = np.full(gbps.shape, -1, dtype=np.int64)
    for i in range(len(media) - 1, -1, -1):      # cheapest last, so it wins
        m = media[i]
        ok = (gbps >= m.min_gbps) & (gbps <= m.max_gbps) & (length <= m.max_length_m)
        if m.copper:
            ok &= copper_ok
        pick[ok] = i
    bad = np.flatnonzero(pick < 0)
    if bad.size:
        j = bad[np.argmax(length[bad])]
        reach = max((m.max_length_m for m in media
                     if m.min_gbps <= gbps[j] <= m.max_gbps), default=0.0)
        raise InfeasibleError([Problem("<design>", what,
            f"{bad.size:,} link(s) reach no cable medium: the longest runs {length[j]:,.1f} m at "
            f"{gbps[j]:g} Gb/s, beyond the {reach:,.0f} m of the longest-reach medium for that "
            "speed; nearest changes: smaller halls (design rule hall_max_racks / "
            "hall_max_it_kw) or a longer-reach medium in design/data/cable_media.yaml")])
    return pick
