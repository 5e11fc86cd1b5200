"""The rest of the Slurm set around slurm.conf: ``cgroup.conf`` (jobs see only their GPUs),
``slurmdbd.conf`` (accounting, GPU-hours), and the prolog / epilog health checks.

Health checks (run as root on every node of a job, ``PrologFlags=Alloc`` = at allocation):

* prolog: the node shows all its GPUs (``/dev/nvidiaN`` device files, which the driver
  creates per GPU), then ``dcgmi diag -r 1`` - DCGM's quick level (deployment and software
  checks, seconds), short enough to run before every job. Levels 2 (~2 min) and 3 (~30 min,
  stress) belong to burn-in and acceptance (``clustertwin check --dcgm``), not to each job.
* epilog: the GPU count again, and no uncorrected volatile ECC error on any GPU
  (``nvidia-smi --query-gpu=ecc.errors.uncorrected.volatile.total``).

A failing prolog or epilog makes Slurm drain the node (and requeue the job for a prolog), so
the scripts only report on stderr and exit non-zero. The scripts carry numbers from the
design only; nothing a user typed.
"""

from __future__ import annotations

from clustertwin.export.stage import ExportContext

#: dcgmi diag run level in the prolog (1 = quick); 0 skips DCGM (a lab with no DCGM)
DCGM_LEVEL = 1


def cgroup_conf(site) -> str:
    """cgroup.conf: ConstrainDevices so a job opens only the GPUs it was given (with
    task/cgroup in slurm.conf), and cores / memory fenced the same way."""
    plugin = site.cgroup_plugin
    return ("# cgroup.conf written by clustertwin export slurm: jobs see only their GPUs,\n"
            "# cores and memory (needs TaskPlugin=task/cgroup, as slurm.conf sets)\n"
            f"CgroupPlugin={plugin}\n"
            "ConstrainCores=yes\n"
            "ConstrainDevices=yes\n"
            "ConstrainRAMSpace=yes\n"
            "ConstrainSwapSpace=yes\n")


def slurmdbd_conf(ctx: ExportContext, site, controller: str) -> str:
    """slurmdbd.conf on the primary controller, MariaDB on the same host through its unix
    socket (``CREATE USER slurm@localhost IDENTIFIED VIA unix_socket``: no password in the
    file). Slurm requires this file to be owned by SlurmUser with mode 600."""
    name, _, addr = controller.partition("(")
    host = site.dbd_host or name
    lines = ["# slurmdbd.conf written by clustertwin export slurm (mode 600, owner SlurmUser)",
             "# MariaDB on this host; its user logs in through the unix socket:",
             f"#   CREATE USER {site.db_user}@localhost IDENTIFIED VIA unix_socket;",
             f"#   GRANT ALL ON slurm_acct_db.* TO {site.db_user}@localhost;",
             f"AuthType={site.auth}", f"DbdHost={host}"]
    if addr:
        lines.append(f"DbdAddr={addr.rstrip(')')}")
    log = site.dbd_log_dir or site.log_dir
    lines += [f"DbdPort={site.dbd_port}", f"SlurmUser={site.slurm_user}",
              "StorageType=accounting_storage/mysql", "StorageHost=localhost",
              f"StorageUser={site.db_user}", "StorageLoc=slurm_acct_db",
              f"LogFile={log}/slurmdbd.log", f"PidFile={site.pid_dir}/slurmdbd.pid",
              "# keep job records for a year; GPU-hours roll up into usage tables",
              "PurgeJobAfter=12month", "PurgeStepAfter=3month"]
    return "\n".join(lines) + "\n"


_COUNT = """fail() { echo "$0: $*" >&2; exit 1; }
shopt -s nullglob
gpus=(/dev/nvidia[0-9]*)
[ "${#gpus[@]}" -eq "$EXPECTED_GPUS" ] || fail "${#gpus[@]} GPUs visible, expected $EXPECTED_GPUS"
"""


def prolog_sh(ctx: ExportContext, dcgm_level: int = DCGM_LEVEL) -> str:
    return ("#!/bin/bash\n"
            "# Slurm prolog written by clustertwin export slurm: runs as root on each node of a\n"
            "# job before it starts; a non-zero exit drains the node and requeues the job.\n"
            "set -u\n"
            f"EXPECTED_GPUS={ctx.inventory.gpus_per_node}\n"
            f"DCGM_LEVEL={int(dcgm_level)}   # dcgmi diag run level: 1 quick; 0 = skip\n"
            + _COUNT +
            'if [ "$DCGM_LEVEL" -gt 0 ]; then\n'
            '  command -v dcgmi > /dev/null || fail "dcgmi not installed (DCGM)"\n'
            '  dcgmi diag -r "$DCGM_LEVEL" > /dev/null 2>&1 || fail "dcgmi diag -r $DCGM_LEVEL failed"\n'
            "fi\n"
            "exit 0\n")


def epilog_sh(ctx: ExportContext) -> str:
    return ("#!/bin/bash\n"
            "# Slurm epilog written by clustertwin export slurm: after each job, every GPU is\n"
            "# still there and none has an uncorrected ECC error; else the node is drained.\n"
            "set -u\n"
            f"EXPECTED_GPUS={ctx.inventory.gpus_per_node}\n"
            + _COUNT +
            "if command -v nvidia-smi > /dev/null; then\n"
            "  ecc=$(nvidia-smi --query-gpu=ecc.errors.uncorrected.volatile.total "
            "--format=csv,noheader,nounits 2> /dev/null | grep -c '^[1-9]')\n"
            '  [ "$ecc" -eq 0 ] || fail "$ecc GPUs with uncorrected ECC errors"\n'
            "fi\n"
            "exit 0\n")
