"""``ibnetdiscover`` output: the links the subnet manager sees, port to port, with their speed.

Format (one block per device; the remote end's description follows ``#``)::

    Switch  65 "S-2c5eab0300b87b40"   # "MF0;fab-leaf001:MQM9700/U1" enhanced port 0 lid 73 lmc 0
    [1]     "H-e09d7303007a4bd8"[1](e09d7303007a4bd8)   # "gpu0001 mlx5_0" lid 647 4xNDR
    [33]    "S-2c5eab0300c26280"[1]     # "MF0;fab-spine001:MQM9700/U1" lid 236 4xNDR

Links are read from the switch blocks (every fabric link has a switch end); a switch-to-switch
link, listed from both ends, counts once. Ends are named as the cabling map names them: a
switch by its description (``MF0;`` prefix and ``:model`` suffix dropped) and 1-based port; a
host adapter by its node description (``HOST HCA``) as ``(HOST, HCA)``. Host adapters that
carry no host name (``MT4129 ConnectX7 ...``) keep their GUID, so they show up as extra links.
Speeds: ``4xNDR`` = 4 lanes x 100 Gb/s.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from clustertwin.acceptance.importers.common import ImportReport, fail, read_text
from clustertwin.errors import Problem

LANE_GBPS = {"SDR": 2.5, "DDR": 5.0, "QDR": 10.0, "FDR10": 10.0, "FDR": 14.0625, "EDR": 25.0,
             "HDR": 50.0, "NDR": 100.0, "XDR": 200.0}
_SWITCH = re.compile(r'^Switch\s+(\d+)\s+"S-([0-9a-fA-F]+)"\s*#\s*"([^"]*)"')
_PORT = re.compile(r'^\[(\d+)\](?:\([0-9a-fA-F]+\))?\s+"([SH])-([0-9a-fA-F]+)"\[(\d+)\](?:\([0-9a-fA-F]+\))?\s*(?:#\s*"([^"]*)"(.*))?$')
_SPEED = re.compile(r"\b(\d+)x([A-Z]+\d*)\b")

Endpoint = tuple[str, str]


@dataclass(frozen=True)
class SeenLink:
    a: Endpoint
    b: Endpoint
    speed: str          #: as printed, e.g. 4xNDR
    gbps: float

    @property
    def key(self) -> frozenset[Endpoint]:
        return frozenset((self.a, self.b))


def switch_name(desc: str, guid: str) -> str:
    name = desc.split(";", 1)[-1].split(":", 1)[0].strip()
    return (name or f"S-{guid}").lower()


def host_end(desc: str, guid: str, port: str) -> Endpoint:
    parts = desc.split()
    if len(parts) == 2:
        return parts[0].lower(), parts[1]
    return f"h-{guid}".lower(), port


def speed_gbps(text: str) -> tuple[str, float]:
    m = _SPEED.search(text or "")
    if not m or m.group(2) not in LANE_GBPS:
        return "", 0.0
    return m.group(0), int(m.group(1)) * LANE_GBPS[m.group(2)]


def parse(text: str, source: str) -> tuple[list[SeenLink], ImportReport]:
    rep = ImportReport(source, "ibnetdiscover")
    links: dict[frozenset[Endpoint], SeenLink] = {}
    current: str | None = None
    switches = 0
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith(("Switch", "Ca", "Rt")):
            m = _SWITCH.match(line)
            current = switch_name(m.group(3), m.group(2)) if m else None
            switches += bool(m)
            continue
        if not line.startswith("[") or current is None:
            continue
        rep.rows_read += 1
        m = _PORT.match(line)
        if not m:
            rep.reject("port line not in ibnetdiscover's form")
            continue
        port, kind, guid, rport, desc, rest = m.groups()
        desc = desc or ""
        speed, gbps = speed_gbps(rest or "")
        if gbps <= 0:
            rep.reject("no link speed (e.g. 4xNDR) on the port line")
            continue
        far = (switch_name(desc, guid), rport) if kind == "S" else host_end(desc, guid, rport)
        link = SeenLink((current, port), far, speed, gbps)
        links.setdefault(link.key, link)
    if switches == 0:
        fail([Problem(source, "--ibnet", "no 'Switch N \"S-GUID\" # \"NAME\"' block found; expected "
                      "ibnetdiscover output")])
    return list(links.values()), rep


def load(path: str | Path) -> tuple[list[SeenLink], ImportReport]:
    return parse(read_text(path, "--ibnet"), str(path))


def render(links: list[tuple[str, str, str, str, float]], lane: str = "NDR") -> str:
    """ibnetdiscover-style text for ``(a_device, a_port, b_device, b_port, gbps)`` links whose
    ``b`` end is a switch (what the cabling map lists); ``a`` is a switch when its port is a
    number, else a host adapter. Used by tests and the benchmark to stand in for a real fabric."""
    per_switch: dict[str, list[str]] = {}
    guid: dict[str, str] = {}

    def g(name: str) -> str:
        return guid.setdefault(name, f"{0x2c5eab0300000000 + len(guid):016x}")

    for a, ap, b, bp, gbps in links:
        width = max(1, round(gbps / LANE_GBPS[lane]))
        sp = f"{width}x{lane}"
        if ap.isdigit():  # switch to switch: listed from both ends
            per_switch.setdefault(a, []).append(f'[{ap}]\t"S-{g(b)}"[{bp}]\t\t# "MF0;{b}:MQM9700/U1" lid 1 {sp}')
            per_switch.setdefault(b, []).append(f'[{bp}]\t"S-{g(a)}"[{ap}]\t\t# "MF0;{a}:MQM9700/U1" lid 1 {sp}')
        else:
            hg = g(f"{a}/{ap}")
            per_switch.setdefault(b, []).append(f'[{bp}]\t"H-{hg}"[1]({hg}) \t\t# "{a} {ap}" lid 2 {sp}')
    out = ["#", "# Topology file: generated by clustertwin", "#", ""]
    for sw, ports in per_switch.items():
        out += ["vendid=0x2c9", "devid=0xd2f0", f"switchguid=0x{g(sw)}({g(sw)})",
                f'Switch\t65 "S-{g(sw)}"\t\t# "MF0;{sw}:MQM9700/U1" enhanced port 0 lid 1 lmc 0', *ports, ""]
    return "\n".join(out) + "\n"
