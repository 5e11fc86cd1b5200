"""The naming scheme of every exported thing (``--naming KEY=VALUE``).

Defaults, for a cluster of N nodes (``pad`` 0 = as many digits as the largest index needs,
at least 3; nodes at least 4 so that ``gpu0001`` sorts and compresses as a Slurm hostlist)::

    compute node / tray   gpu0001 ... gpuN           (node=gpu)
    rack                  r01-05 = row 1, position 5  (rack=r)
    compute fabric        fab-leaf001, fab-spine001, fab-core001   (compute=fab)
    storage fabric        stor-leaf001, stor-spine001, stor-core001 (storage=stor)
    in-band / OOB         inb-sw001, oob-sw001        (inband=inb, oob=oob)
    NVLink switch tray    nvsw0001 (rack-scale systems; nvswitch=nvsw)
    storage system        st-pfs01 (tier name after the prefix; system=st)
    management server     mgmt01, fabric manager ufm01, CDU cdu01, PDU <rack>-pdu1

Every name is a valid hostname label (letters, digits, hyphens). Names are 1-based.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

from clustertwin.errors import Problem, UsageError

_LABEL_OK = set("abcdefghijklmnopqrstuvwxyz0123456789-")


@dataclass(frozen=True)
class Naming:
    """Prefixes and zero padding of exported names (see the module docstring)."""

    node: str = "gpu"
    rack: str = "r"
    compute: str = "fab"
    storage: str = "stor"
    inband: str = "inb"
    oob: str = "oob"
    nvswitch: str = "nvsw"
    system: str = "st"
    management: str = "mgmt"
    ufm: str = "ufm"
    cdu: str = "cdu"
    pad: int = 0            #: digits of numbered names; 0 = automatic

    def width(self, count: int, minimum: int = 3) -> int:
        return self.pad if self.pad > 0 else max(minimum, len(str(max(1, count))))

    def numbered(self, prefix: str, count: int, minimum: int = 3) -> list[str]:
        """``prefix001 .. prefixNNN`` for ``count`` things."""
        w = self.width(count, minimum)
        return [f"{prefix}{i:0{w}d}" for i in range(1, count + 1)]


def parse_naming(items: list[str] | None) -> Naming:
    """``["node=dgx", "pad=5"]`` -> Naming; raises UsageError naming each bad item."""
    known = {f.name for f in fields(Naming)}
    values: dict[str, object] = {}
    problems: list[Problem] = []
    for item in items or []:
        key, sep, val = item.partition("=")
        key = key.strip()
        if not sep or key not in known:
            problems.append(Problem("--naming", item, "expected KEY=VALUE with KEY one of "
                                    + ", ".join(sorted(known))))
        elif key == "pad":
            if not val.isdigit() or int(val) > 12:
                problems.append(Problem("--naming", item, "pad must be an integer 0..12"))
            else:
                values["pad"] = int(val)
        elif (not val.isascii() or not val or not set(val.lower()) <= _LABEL_OK
              or val.startswith("-") or len(val) > 32):
            problems.append(Problem("--naming", item, "a prefix must be 1-32 ASCII letters, "
                                    "digits and hyphens, not starting with a hyphen"))
        else:
            values[key] = val
    if problems:
        raise UsageError(problems)
    return replace(Naming(), **values)
