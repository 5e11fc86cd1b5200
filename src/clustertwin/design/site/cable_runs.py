"""Cable runs: each link's routed length and the cheapest medium that reaches it.

Device positions come from the inventory (hall, row, rack position, slot) through
:class:`clustertwin.design.geometry.Geometry`; a device's height is the middle of its slot
(nodes ``node_ru`` U each from the bottom, switches and appliances 1U each from the top, PDUs
and unracked things at the floor). Media come from :func:`clustertwin.design.media.choose_media`:
a link the design cables in copper may take passive or active copper, every other link an
optical medium (AOC, multimode or single-mode optics), so the copper / optical counts per fabric
stay the design's. A link beyond every medium's reach raises InfeasibleError.
"""

from __future__ import annotations

import numpy as np

from clustertwin.design.geometry import Geometry
from clustertwin.design.media import choose_media, load_media

#: roles stacked from the rack's top (switches, appliances, servers), one U each
_TOP_DOWN = ("leaf", "spine", "core", "storage-leaf", "storage-spine", "storage-core", "inband",
             "oob", "ufm", "management", "storage", "nvswitch")


def device_xyz(inv, rules) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(x, y, z) in metres of every device of ``inv`` (see the module docstring)."""
    geo = Geometry.from_rules(rules)
    per_row = max(1, int(rules.num("racks_per_row")))
    hall = np.array([r.hall for r in inv.racks] + [1], dtype=np.int64)
    row = np.array([r.row for r in inv.racks] + [1], dtype=np.int64)
    first_row = {}
    for r in inv.racks:
        first_row[r.hall] = min(first_row.get(r.hall, r.row), r.row)
    hall_row = row - np.array([first_row.get(h, 1) for h in hall.tolist()]) + 1
    pos = np.array([r.position for r in inv.racks] + [1], dtype=np.int64)
    rx, ry = geo.rack_xy(hall, hall_row, pos, per_row)
    ri = inv.rack_index                      # -1 -> the sentinel entry at the end
    x, y = rx[ri], ry[ri]
    slot = np.array([d.slot for d in inv.devices], dtype=float)
    z = np.zeros(len(inv.devices))
    a, b = inv.span("node")
    node_u = max(1.0, float(inv.node_ru or 1.0))
    z[a:b] = np.minimum(geo.rack_height_m, (slot[a:b] - 0.5) * node_u * geo.ru_m)
    for role in _TOP_DOWN:
        a, b = inv.span(role)
        z[a:b] = np.maximum(0.0, geo.rack_height_m - (slot[a:b] - 0.5) * geo.ru_m)
    z[ri < 0] = 0.0
    return x, y, z


def lengths(inv, rules, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Routed length (m, to 0.1 m) of links between device indices a and b."""
    geo = Geometry.from_rules(rules)
    x, y, z = device_xyz(inv, rules)
    same = (inv.rack_index[a] == inv.rack_index[b]) & (inv.rack_index[a] >= 0)
    return np.round(geo.route_m(x[a], y[a], z[a], x[b], y[b], z[b], same), 1)


def runs(inv, rules, a: np.ndarray, b: np.ndarray, gbps: np.ndarray, copper: np.ndarray):
    """(length_m, the cheapest medium reaching each: index into load_media()) of links between
    device indices a and b."""
    length = lengths(inv, rules, a, b)
    return length, choose_media(gbps, length, copper)


def media_columns(pick: np.ndarray) -> dict[str, np.ndarray]:
    """medium, part_number, max_length_m columns for medium indices ``pick``."""
    media = load_media()
    ids = np.array([m.id for m in media], dtype=object)
    parts = np.array([m.part_number for m in media], dtype=object)
    reach = np.array([m.max_length_m for m in media], dtype=float)
    return {"medium": ids[pick], "part_number": parts[pick], "max_length_m": reach[pick]}
