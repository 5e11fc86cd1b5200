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
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

from clustertwin.acceptance.importers.common import ImportReport, fail, read_text
from clustertwin.errors import Problem

LANE_GBPS = {"SDR": 2.5, "DDR": 5.0, "QDR": 10.0, "FDR10": 10.0, "FDR": 14.0625, "EDR": 25.0,
             "HDR": 50.0, "NDR": 100.0, "XDR": 200.0}
_SPEED = re.compile(r"\b(\d+)x([A-Z]+\d*)\b")

#: one end of a link, ``device:port`` (device lower-case; a switch port is its number)
Endpoint = str


def link_key(a: Endpoint, b: Endpoint) -> str:
    """The order-free key of the link between two ends: ``lower|higher``."""
    return f"{a}|{b}" if a <= b else f"{b}|{a}"


def ends(key: str) -> tuple[Endpoint, Endpoint]:
    a, b = key.split("|", 1)
    return a, b


def device_port(end: Endpoint) -> tuple[str, str]:
    dev, port = end.rsplit(":", 1)
    return dev, port


class SeenLink(NamedTuple):
    """One link as the subnet manager sees it (a NamedTuple: cheap at 10^5-10^6 links)."""

    a: Endpoint
    b: Endpoint
    speed: str                  #: as printed, e.g. 4xNDR
    gbps: float
    key: str                    #: :func:`link_key` of a and b


@lru_cache(maxsize=65536)
def switch_name(desc: str, guid: str) -> str:
    name = desc.split(";", 1)[-1].split(":", 1)[0].strip()
    return (name or f"S-{guid}").lower()


def host_end(desc: str, guid: str, port: str) -> Endpoint:
    parts = desc.split()
    if len(parts) == 2:
        return f"{parts[0].lower()}:{parts[1]}"
    return f"h-{guid.lower()}:{port}"


@lru_cache(maxsize=1024)
def speed_gbps(text: str) -> tuple[str, float]:
    m = _SPEED.search(text or "")
    if not m or m.group(2) not in LANE_GBPS:
        return "", 0.0
    return m.group(0), int(m.group(1)) * LANE_GBPS[m.group(2)]


#: one pass over the whole text: a switch header (groups 1-2), a port line (groups 3-8), or
#: the header of a Ca / Rt block (whose links are read from the switch side)
_LINE = re.compile(
    r'^[ \t]*(?:Switch\s+\d+\s+"S-([0-9a-fA-F]+)"\s*#\s*"([^"]*)"[^\n]*'
    r'|\[(\d+)\][^"\n]*"([SH])-([0-9a-fA-F]+)"\[(\d+)\][^#\n]*#\s*"([^"]*)"([^\n]*))$'
    r'|^[ \t]*(?:Ca|Rt)\b[^\n]*$', re.M)


def parse(text: str, source: str) -> tuple[list[SeenLink], ImportReport]:
    rep = ImportReport(source, "ibnetdiscover")
    links: dict[str, SeenLink] = {}
    names: dict[tuple[str, str], str] = {}              # (description, guid) -> switch name
    speeds: dict[str, tuple[str, float]] = {}           # last word of the remark -> speed
    blocks: set[str] = set()                            # switches whose block the file holds
    later: list[tuple[str, str, tuple[str, ...]]] = []  # switch links seen from the higher GUID
    current, cur_guid = "", ""
    switches = matched = ca_ports = 0
    # findall hands back plain tuples ('' for groups that did not take part): at 10^5-10^6
    # port lines this loop is the importer's cost, so it keeps to local lookups
    for t in _LINE.findall(text):
        sw_guid, sw_desc, port, kind, guid, rport = t[:6]
        if sw_guid:
            current, cur_guid = switch_name(sw_desc, sw_guid), sw_guid
            blocks.add(sw_guid)
            switches += 1
            continue
        if not port or not current:  # a Ca / Rt block: its links are read from the switch side
            ca_ports += bool(port)
            current = current if port else ""
            continue
        matched += 1
        # a switch-to-switch link is listed from both ends: read it from the lower GUID's block
        if kind == "S" and (guid < cur_guid or (guid == cur_guid and rport < port)):
            later.append((current, cur_guid, t))
            continue
        _take(links, names, speeds, rep, current, t)
    for current, _, t in later:  # the lower end's block is missing (an excerpt): read it here
        if t[4] not in blocks:
            _take(links, names, speeds, rep, current, t)
    if switches == 0:
        fail([Problem(source, "--ibnet", "no 'Switch N \"S-GUID\" # \"NAME\"' block found; expected "
                      "ibnetdiscover output")])
    lead = text.count("\n[") + text.count("\n\t[") + text.count("\n [") + text.startswith("[")
    port_lines = lead - ca_ports  # port lines of switch blocks
    rep.rows_read += port_lines
    for _ in range(max(0, port_lines - matched)):
        rep.reject("port line not in ibnetdiscover's form")
    return list(links.values()), rep


def _take(links: dict[str, SeenLink], names: dict, speeds: dict, rep: ImportReport,
          current: str, t: tuple[str, ...]) -> None:
    _, _, port, kind, guid, rport, desc, rest = t
    word = rest[rest.rfind(" ") + 1:]
    sp = speeds.get(word)
    if sp is None:
        sp = speed_gbps(word.strip())
        speeds[word] = sp = sp if sp[1] > 0 else speed_gbps(rest)  # speed not the last word
    if sp[1] <= 0:
        rep.reject("no link speed (e.g. 4xNDR) on the port line")
        return
    near = current + ":" + port
    if kind == "S":
        name = names.get((desc, guid))
        if name is None:
            name = names[(desc, guid)] = switch_name(desc, guid)
        far = name + ":" + rport
    else:
        far = host_end(desc, guid, rport)
    key = near + "|" + far if near <= far else far + "|" + near
    if key not in links:
        links[key] = SeenLink(near, far, sp[0], sp[1], key)


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
