"""Start the real slurmctld on generated configs, offline (shared/research/ops-bridge.md 1.3).

slurmctld runs in a private network + mount namespace with only loopback (two addresses, so
getaddrinfo(AI_ADDRCONFIG) works), ``SLURM_CONF`` always set (no DNS SRV lookups), auth/none,
every node at 127.0.0.1 with its own port (the multiple-slurmd layout). No slurmd is started:
the controller parses slurm.conf, gres.conf and topology.conf and serves ``scontrol`` and
``sinfo``; nodes stay UNKNOWN.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from clustertwin.export.slurm import SlurmSite

#: log lines that are not about the configuration (each seen with Debian's 22.05 here)
NOISE = [
    r"Trying backup state save file",            # first start: no saved state yet
    r"Could not open \w+ state file \S+: No such file or directory",
    r"mpi/pmix|PMIx",                            # optional MPI plugin library absent
    # the test site runs without slurmdbd; production slurm.conf names one
    # (SlurmSite.accounting) and the age / fair-share weights then apply
    r"PriorityWeight\w+ can only be used with SlurmDBD",
    # a clock check slurmctld makes at start: a loaded machine, not the configuration
    r"High latency for \d+ calls to gettimeofday",
]


def skip_reason() -> str | None:
    if shutil.which("slurmctld") is None or shutil.which("scontrol") is None:
        return "slurmctld/scontrol not installed (apt-get install slurmctld slurm-client)"
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        return "unshare/ip (util-linux, iproute2) not installed"
    if os.geteuid() != 0:
        return "needs root for a private network namespace"
    return None


def loopback_site(tmp: Path) -> SlurmSite:
    return SlurmSite(controller="localhost(127.0.0.1)", auth="auth/none", slurm_user="root",
                     state_dir=str(tmp / "state"), spool_dir=str(tmp / "spool" / "%n"),
                     log_dir=str(tmp / "log"), pid_dir=str(tmp), ctld_port=16817,
                     slurmd_port=16818, node_addr="127.0.0.1", accounting="", cgroups=False,
                     extra=("CredType=cred/none", "SlurmdParameters=config_overrides"))


#: network namespace set-up, then INNER (directly, or inside a chroot with a newer Slurm)
OUTER = r"""
set -u
ip link set lo up
ip addr add 127.0.0.2/8 dev lo
if [ -n "${ROOT:-}" ]; then
  mount -t proc proc "$ROOT/proc"
  chroot "$ROOT" /bin/sh -c "$INNER"
else
  sh -c "$INNER"
fi
"""

INNER = r"""
cd "$CONF"
export SLURM_CONF="$CONF/slurm.conf"
slurmctld -D -i > "$CONF/slurmctld.out" 2>&1 &
p=$!
up=0
for i in $(seq 100); do
  if scontrol ping > /dev/null 2>&1; then up=1; break; fi
  kill -0 $p 2> /dev/null || break
  sleep 0.1
done
if [ $up = 1 ]; then
  sleep 0.5
  kill -0 $p 2> /dev/null || up=0
fi
if [ $up = 1 ]; then
  scontrol show topology > "$CONF/topology.out" 2>&1
  sinfo -h -N -o "%N %G %P" > "$CONF/sinfo.out" 2>&1
  scontrol show partition > "$CONF/partition.out" 2>&1
  kill $p; wait $p
  echo UP
else
  kill $p 2> /dev/null; wait $p; echo "DOWN rc=$?"
fi
"""

#: where .ci/run builds a Debian sid root with Slurm >= 25.05 (topology/block, topology.yaml)
NEW_SLURM_ROOT = Path(os.environ.get("CLUSTERTWIN_SLURM_ROOT", "/var/cache/clustertwin/slurm-sid"))


def new_slurm_skip_reason() -> str | None:
    base = skip_reason()
    if base:
        return base
    ctld = NEW_SLURM_ROOT / "usr" / "sbin" / "slurmctld"
    if not ctld.exists():
        return (f"no Slurm >= 25.05 root at {NEW_SLURM_ROOT} (.ci/run builds one with "
                "debootstrap sid; or set CLUSTERTWIN_SLURM_ROOT)")
    return None


@dataclass(frozen=True)
class CtldRun:
    up: bool
    output: str
    log: str
    topology: str
    sinfo: str
    partitions: str

    def problems(self) -> list[str]:
        """error / warning / fatal log lines that are not known noise."""
        bad = []
        for line in self.log.splitlines():
            if re.search(r"error|warning|fatal", line, re.I) and not any(
                    re.search(n, line) for n in NOISE):
                bad.append(line)
        return bad


def run_ctld(conf: Path, files: dict[str, str], root: Path | None = None) -> CtldRun:
    """Write ``files`` into ``conf`` (slurm.conf must use :func:`loopback_site` with the same
    folder) and run slurmctld until it answers ``scontrol ping``, then query it and stop it.
    With ``root``, ``conf`` must lie inside it and slurmctld runs chrooted there."""
    conf.mkdir(parents=True, exist_ok=True)
    for sub in ("state", "spool", "log"):
        (conf / sub).mkdir(exist_ok=True)
    for name, text in files.items():
        (conf / name).write_text(text, encoding="utf-8")
    inside = "/" + str(conf.relative_to(root)) if root is not None else str(conf)
    env = {**os.environ, "CONF": inside, "ROOT": str(root or ""), "INNER": INNER}
    proc = subprocess.run(["unshare", "--net", "--mount", "--fork", "sh", "-c", OUTER],
                          env=env, capture_output=True, text=True, timeout=120, check=False)

    def read(name: str) -> str:
        p = conf / name
        return p.read_text(encoding="utf-8", errors="replace") if p.exists() else ""

    log = read("slurmctld.out") + read("log/slurmctld.log")
    return CtldRun("UP" in proc.stdout, proc.stdout + proc.stderr, log, read("topology.out"),
                   read("sinfo.out"), read("partition.out"))
