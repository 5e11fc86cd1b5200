"""Bring a whole exported Slurm set up, offline: MariaDB, slurmdbd, slurmctld and one slurmd
per node with fake GPU devices (char devices of the NVIDIA major, 195, in a private /dev),
all in a private network + mount namespace on loopback; then run a job and read its
accounting record back.

What the harness changes in the exported set, and only that (:func:`lab_site`): ports and
loopback addresses (every slurmd at 127.0.0.1 on its own port), auth/none instead of munge,
root instead of the slurm user (and as MariaDB's unix-socket user), folders under the test's
own, ``SlurmdParameters=config_overrides`` (a 2-core VM stands in for a 224-CPU node), no
cgroup task/process tracking (no cgroup file system to delegate), and DCGM_LEVEL=0 in the
prolog (no DCGM in a lab; the GPU-count check still runs against the fake devices).
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from clustertwin.export.slurm import SlurmSite, slurm_files

from .slurm_harness import loopback_site

BRING_UP = r"""
set -u
cd "$CONF"
for n in $NODES; do mkdir -p "spool/$n"; done
export SLURM_CONF="$CONF/slurm.conf"
mount -t tmpfs none /dev
mknod -m 666 /dev/null c 1 3; mknod -m 666 /dev/zero c 1 5; mknod -m 666 /dev/full c 1 7
mknod -m 666 /dev/random c 1 8; mknod -m 666 /dev/urandom c 1 9; mknod -m 666 /dev/tty c 5 0
i=0; while [ $i -lt "$GPUS" ]; do mknod -m 666 "/dev/nvidia$i" c 195 $i; i=$((i+1)); done
if [ -f slurmdbd.conf ] && [ ! -S /run/mysqld/mysqld.sock ] && [ ! -S /run/mariadbd/mysqld.sock ]
then
  mkdir -p /run/mysqld && mount -t tmpfs none /run/mysqld
  mariadb-install-db --user=root --datadir="$CONF/db" > db-install.out 2>&1 || exit 3
  mariadbd --user=root --datadir="$CONF/db" --socket=/run/mysqld/mysqld.sock \
    --skip-networking > mariadb.out 2>&1 &
  for i in $(seq 200); do [ -S /run/mysqld/mysqld.sock ] && break; sleep 0.1; done
fi
if [ -f slurmdbd.conf ]; then
  chmod 600 slurmdbd.conf
  slurmdbd -D > slurmdbd.out 2>&1 &
  for i in $(seq 200); do sacctmgr -n show cluster > /dev/null 2>&1 && break; sleep 0.1; done
fi
slurmctld -D -i > slurmctld.out 2>&1 &
for i in $(seq 200); do scontrol ping > /dev/null 2>&1 && break; sleep 0.1; done
if ! scontrol ping > /dev/null 2>&1; then kill $(jobs -p) 2> /dev/null; wait; exit 4; fi
for n in $NODES; do slurmd -D -N "$n" > "slurmd.$n.out" 2>&1 & done
for i in $(seq 600); do
  [ -z "$(sinfo -h -N -o '%N %t' | grep -v ' idle$')" ] && break; sleep 0.2
done
sinfo -h -N -o "%N %t %G %P" > sinfo.out 2>&1
scontrol show nodes > nodes.out 2>&1
if [ -n "${PRE_JOB:-}" ]; then
  sbatch -N "$PRE_JOB" --gres=gpu:$GPUS -t 2 --wrap 'sleep 60' > prejob.out 2>&1
  for i in $(seq 100); do squeue -h -t R | grep -q . && break; sleep 0.1; done
  squeue -h -o "%N" > prejob.nodes 2>&1
fi
timeout 60 srun -N${JOB_NODES:-2} --gres=gpu:$GPUS ${JOB_OPTS:---switches=1} -t 1 \
  bash -c 'echo $SLURMD_NODENAME $CUDA_VISIBLE_DEVICES' > srun.out 2> srun.err
echo "rc=$?" >> srun.err
if [ -f slurmdbd.conf ]; then
  for i in $(seq 150); do
    sacct -a -X -n -P -o JobID,AllocTRES > sacct.out 2>&1; grep -q gres/gpu sacct.out && break
    sleep 0.2
  done
fi
scancel $(squeue -h -o %i) 2> /dev/null; sleep 1      # no job step may outlive its slurmd
kill $(jobs -p) 2> /dev/null; wait
"""


#: network namespace set-up, then BRING_UP here or chrooted in a newer Slurm root; that root
#: has no MariaDB, so the host's serves its slurmdbd through a socket placed inside it (Debian
#: sid's client library looks in /run/mariadbd, bookworm's server in /run/mysqld)
OUTER = r"""
set -u
ip link set lo up
ip addr add 127.0.0.2/8 dev lo
dbpid=""
if [ -n "${ROOT:-}" ] && [ -f "$ROOT$CONF/slurmdbd.conf" ]; then
  mkdir -p "$ROOT/run/mariadbd" && mount -t tmpfs none "$ROOT/run/mariadbd"
  mariadb-install-db --user=root --datadir="$ROOT$CONF/db" > "$ROOT$CONF/db-install.out" 2>&1
  mariadbd --user=root --datadir="$ROOT$CONF/db" --socket="$ROOT/run/mariadbd/mysqld.sock" \
    --skip-networking > "$ROOT$CONF/mariadb.out" 2>&1 &
  dbpid=$!
  for i in $(seq 200); do [ -S "$ROOT/run/mariadbd/mysqld.sock" ] && break; sleep 0.1; done
fi
if [ -n "${ROOT:-}" ]; then
  mount -t proc proc "$ROOT/proc"
  chroot "$ROOT" /bin/bash -c "$INNER"; rc=$?
else
  bash -c "$INNER"; rc=$?
fi
if [ -n "$dbpid" ]; then kill "$dbpid"; wait "$dbpid"; fi
exit $rc
"""


def skip_reason() -> str | None:
    from .slurm_harness import skip_reason as base

    need = ("slurmd", "slurmdbd", "sacct", "mariadbd", "mariadb-install-db", "mknod")
    missing = [t for t in need if shutil.which(t) is None]
    if missing:
        return (f"{', '.join(missing)} not installed (apt-get install slurmd slurmdbd "
                "mariadb-server)")
    return base()


def lab_site(conf: Path) -> SlurmSite:
    """The exported site with the lab changes listed in the module docstring."""
    return dataclasses.replace(
        loopback_site(conf), accounting="accounting_storage/slurmdbd", dbd_port=16819,
        db_user="root", cgroups=False, prolog=str(conf / "prolog.sh"),
        epilog=str(conf / "epilog.sh"))


@dataclass(frozen=True)
class Bringup:
    conf: Path
    rc: int
    output: str

    def read(self, name: str) -> str:
        p = self.conf / name
        return p.read_text(encoding="utf-8", errors="replace") if p.exists() else ""


def bring_up(conf: Path, ctx, policy: str = "multifactor+backfill", root: Path | None = None,
             job: tuple[int, str] = (2, "--switches=1"), pre_job: int = 0) -> Bringup:
    """Export ``ctx``'s Slurm set with :func:`lab_site` into ``conf`` and run it (see module
    docstring), then the job ``srun -N<job[0]> --gres=gpu:<all> <job[1]>``. With ``root`` (a
    Debian root with a newer Slurm; ``conf`` inside it); ``pre_job`` nodes are taken first by
    a batch job (its nodes in prejob.nodes) the daemons run chrooted there, with
    ``CgroupPlugin=disabled`` (Slurm >= 23.02 refuses to start without a cgroup file system
    otherwise). Results: sinfo.out, nodes.out, srun.out / srun.err, sacct.out, daemon logs."""
    conf.mkdir(parents=True, exist_ok=True)
    for sub in ("state", "spool", "log"):
        (conf / sub).mkdir(exist_ok=True)
    inside = Path("/" + str(conf.relative_to(root))) if root is not None else conf
    site = lab_site(inside)
    if root is not None:
        site = dataclasses.replace(site, cgroup_plugin="disabled")
    files = slurm_files(ctx, policy, site)
    files["prolog.sh"] = files["prolog.sh"].replace("DCGM_LEVEL=1", "DCGM_LEVEL=0")
    for name, text in files.items():
        (conf / name).write_text(text, encoding="utf-8")
    for name in ("prolog.sh", "epilog.sh"):
        os.chmod(conf / name, 0o755)
    env = {**os.environ, "CONF": str(inside), "ROOT": str(root or ""), "INNER": BRING_UP,
           "GPUS": str(ctx.inventory.gpus_per_node), "JOB_NODES": str(job[0]),
           "JOB_OPTS": job[1], "PRE_JOB": str(pre_job or ""), "NODES": " ".join(n.name for n in ctx.inventory.nodes)}
    proc = subprocess.run(["unshare", "--net", "--mount", "--fork", "bash", "-c", OUTER],
                          env=env, capture_output=True, text=True, timeout=400, check=False)
    return Bringup(conf, proc.returncode, proc.stdout + proc.stderr)
