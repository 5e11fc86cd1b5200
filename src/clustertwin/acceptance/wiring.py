"""The fabric as wired (ibnetdiscover) against the fabric as designed (the cabling map).

Every designed compute-fabric link is either present at its designed speed (ok), present but
slower (``degraded``: a width or speed downgrade, usually a dirty or half-seated connector -
re-seat or replace), or absent. Links seen but not designed are ``extra``. A crossed cable is
the pattern two designed links {p, p'} and {q, q'} absent and the two links {p, q'} ... seen
instead: two cable ends swapped. Concretely, an extra link {p, q} whose ends each belong to a
missing link, {p, p2} and {q, q2}, with {p2, q2} also extra, is one swapped pair: both cables
are present and healthy, only their ends are exchanged. Crossed pairs are taken out of missing
and extra; what remains missing is a cable to install or re-seat, what remains extra a miswire
to trace.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from clustertwin.acceptance.importers.ibnet import SeenLink, device_port, ends, link_key

Designed = tuple[str, str, str, str, float]   #: (a_device, a_port, b_device, b_port, gbps)


@dataclass(frozen=True)
class WiringResult:
    designed: int
    seen: int
    ok: int
    degraded: tuple[tuple[str, str, float, float], ...] = ()  #: (link key, speed, seen, designed gbps)
    missing: tuple[str, ...] = ()       #: link keys (``dev:port|dev:port``)
    extra: tuple[str, ...] = ()
    crossed: tuple[tuple[str, str], ...] = ()  #: designed links whose ends were swapped
    nodes_affected: dict[str, int] = field(default_factory=dict)  #: host -> bad links

    def to_dict(self) -> dict[str, Any]:
        def fmt(k: str) -> str:
            return " <-> ".join(ends(k))

        return {"designed_links": self.designed, "seen_links": self.seen, "ok": self.ok,
                "degraded": [{"link": fmt(k), "speed": s, "gbps": g, "designed_gbps": d}
                             for k, s, g, d in self.degraded],
                "missing": [fmt(k) for k in self.missing], "extra": [fmt(k) for k in self.extra],
                "crossed": [{"designed": [fmt(a), fmt(b)]} for a, b in self.crossed]}


def compare(designed: Iterable[Designed], seen: Iterable[SeenLink]) -> WiringResult:
    want = {link_key(f"{str(a).lower()}:{ap}", f"{str(b).lower()}:{bp}"): float(gbps)
            for a, ap, b, bp, gbps in designed}
    got = {s.key: s for s in seen}
    degraded, ok = [], 0
    for k, s in got.items():
        if k in want:
            if s.gbps + 1e-9 < want[k]:
                degraded.append((k, s.speed, s.gbps, want[k]))
            else:
                ok += 1
    missing = {k for k in want if k not in got}
    extra = {k for k in got if k not in want}
    crossed = _crossed(missing, extra)
    for a, b in crossed:
        missing -= {a, b}
        (p, p2), (q, q2) = ends(a), ends(b)
        extra -= {link_key(p, q), link_key(p, q2), link_key(p2, q), link_key(p2, q2)}
    hosts: dict[str, int] = {}
    for k in [d[0] for d in degraded] + list(missing):
        for end in ends(k):
            dev, port = device_port(end)
            if not port.isdigit():
                hosts[dev] = hosts.get(dev, 0) + 1
    return WiringResult(len(want), len(got), ok, tuple(sorted(degraded)), tuple(sorted(missing)),
                        tuple(sorted(extra)), tuple(crossed), hosts)


def _crossed(missing: set[str], extra: set[str]) -> list[tuple[str, str]]:
    by_end: dict[str, str] = {}
    for k in missing:
        for e in ends(k):
            by_end[e] = k
    pairs: list[tuple[str, str]] = []
    used: set[str] = set()
    for x in sorted(extra):
        if x in used:
            continue
        p, q = ends(x)
        mp, mq = by_end.get(p), by_end.get(q)
        if mp is None or mq is None or mp == mq or mp in used or mq in used:
            continue
        p2 = next(e for e in ends(mp) if e != p)
        q2 = next(e for e in ends(mq) if e != q)
        partner = link_key(p2, q2)
        if partner in extra and partner not in used:
            pairs.append((min(mp, mq), max(mp, mq)))
            used |= {x, partner, mp, mq}
    return pairs


def expected_compute_links(scenario: Any, catalog: Any, design: Any = None) -> list[Designed]:
    """The designed compute-fabric links of a scenario, from the export package's cabling map
    (issue 13): ``(node, mlx5_N, leaf, port)`` and switch-to-switch links."""
    from clustertwin.design.site.cabling import build_cabling
    from clustertwin.design.site.inventory import build_inventory

    if design is None:  # the design the exports are made from (deadline: sized by the perf stage)
        from clustertwin.export.stage import export_design

        design = export_design(scenario, catalog)
    inv = build_inventory(scenario, catalog, design)
    return [(lk.a_device, lk.a_port, lk.b_device, lk.b_port, lk.gbps)
            for lk in build_cabling(inv, design) if lk.fabric == "compute" and lk.kind != "manager-leaf"]
