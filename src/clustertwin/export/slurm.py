"""Slurm configuration from the inventory: ``slurm.conf``, ``gres.conf``, ``topology.conf``
and, for NVLink domains larger than a node, the ``topology/block`` form and the
``topology.yaml`` of Slurm >= 25.05.

* Nodes: one ``NodeName`` line per group of identical nodes (job nodes, hot spares), with
  CPUs / sockets / cores / threads and ``RealMemory`` from the catalog node (a rack-scale
  system split over its compute trays), ``Gres=gpu:<type>:<n>``.
* Partitions: ``batch`` (the job nodes, default) and ``spares`` (hot spares, lower priority
  tier) when the design has spares.
* Scheduling policy (the scheduling simulator's ``--policy`` syntax): ``fifo`` ->
  ``priority/basic``; ``multifactor`` -> ``priority/multifactor`` with the simulator's weights
  (age, fair share, job size, QoS) and its max age / decay half-life; ``priority`` ->
  multifactor with only the QoS weight; ``sjf`` has no Slurm equivalent (nearest: job size
  weight with ``PriorityFlags=SMALL_RELATIVE_TO_TIME``; said in a comment). ``+backfill`` ->
  ``sched/backfill``, ``+greedy`` -> ``sched/builtin``, ``+preempt`` -> ``preempt/qos`` with
  ``PreemptMode=REQUEUE``.
* topology/tree: each scalable unit is one virtual leaf switch (its rail leaves all reach the
  same nodes, so Slurm sees one leaf), grouped under their pod (spine group), pods under one
  top switch. topology/block: one block per NVLink domain (GB200 NVL72: 18 trays), BlockSizes
  doubling from the domain up to the cluster (Slurm requires each size to double).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from clustertwin.export.hostlist import compress
from clustertwin.export.stage import ExportContext
from clustertwin.quoting import comment_text

#: RAM left to the OS and daemons when RealMemory is set (Slurm fails a node whose RealMemory
#: exceeds what it finds, so sites leave headroom; 5 % is our assumption, not a Slurm default).
OS_MEMORY_FRACTION = 0.05
DAY_MIN = 1440


@dataclass(frozen=True)
class SlurmSite:
    """Site lines of slurm.conf. Production defaults; tests pass a loopback site."""

    #: SlurmctldHost; "" = the first two management servers (primary and backup; the backup
    #: needs StateSaveLocation on storage both reach)
    controller: str = ""
    auth: str = "auth/munge"
    slurm_user: str = "slurm"
    #: StateSaveLocation; "" = /var/spool/slurmctld with one controller, else
    #: :data:`SHARED_STATE_DIR` (both controllers must read and write the same state)
    state_dir: str = ""
    spool_dir: str = "/var/spool/slurmd"
    log_dir: str = "/var/log/slurm"
    pid_dir: str = "/run"
    ctld_port: int = 6817
    slurmd_port: int = 6818
    node_addr: str = ""             #: test only: every node at this address, one port each
    first_node_port: int = 17001
    #: accounting storage; priority/multifactor needs slurmdbd for its age and fair-share
    #: factors (slurmctld: "PriorityWeightAge can only be used with SlurmDBD, ignoring")
    accounting: str = "accounting_storage/slurmdbd"
    dbd_host: str = ""              #: slurmdbd host; "" = the primary controller
    dbd_port: int = 6819
    db_user: str = "slurm"           #: MariaDB user of slurmdbd (unix-socket login: no password)
    dbd_log_dir: str = ""            #: "" = log_dir
    #: task / process tracking through cgroups (ConstrainDevices in cgroup.conf isolates GPUs);
    #: the test site, with no cgroup file system, tracks processes plainly
    cgroups: bool = True
    #: cgroup.conf CgroupPlugin; a lab without a cgroup file system (Slurm >= 23.02) says
    #: "disabled"
    cgroup_plugin: str = "autodetect"
    #: prolog / epilog health checks (slurm_node.py); "" = none
    prolog: str = "/etc/slurm/prolog.sh"
    epilog: str = "/etc/slurm/epilog.sh"
    extra: tuple[str, ...] = ()


#: StateSaveLocation when a backup controller takes over: storage both controllers mount
SHARED_STATE_DIR = "/shared/slurm/statesave"


@dataclass(frozen=True)
class NodeHardware:
    cpus: int
    sockets: int
    cores_per_socket: int
    threads_per_core: int
    real_memory_mib: int
    gpus: int


def node_hardware(ctx: ExportContext) -> NodeHardware:
    """Per schedulable node (a tray of a rack-scale system). Sockets from the catalog CPU
    text ("2x Intel ..."), SMT off for Arm CPUs (Grace, Neoverse) and on for x86."""
    node, trays = ctx.node, ctx.inventory.trays_per_system
    m = re.match(r"\s*(\d+)\s*x", node.cpu or "")
    sockets = max(1, (int(m.group(1)) if m else 1) // trays)
    cores = max(sockets, int(node.cpu_cores or sockets) // trays)
    arm = any(w in (node.cpu or "") for w in ("Grace", "Arm", "Neoverse"))
    tpc = 1 if arm else 2
    mem = int(float(node.ram_gib) * 1024 / trays * (1 - OS_MEMORY_FRACTION))
    return NodeHardware(cores * tpc, sockets, cores // sockets, tpc, mem,
                        ctx.inventory.gpus_per_node)


def has_blocks(ctx: ExportContext) -> bool:
    """NVLink domains span several schedulable nodes (GB200 NVL72)."""
    return ctx.design.layout.nvlink_domain_gpus > ctx.inventory.gpus_per_node


def _policy_lines(policy: str) -> list[str]:
    from clustertwin.scheduling.policies import ORDERS, parse_policy

    spec = parse_policy(policy)
    lines = [f"# scheduling policy from the twin: {comment_text(spec.label)}",
             f"SchedulerType={'sched/builtin' if spec.greedy else 'sched/backfill'}"]
    order = ORDERS.get(spec.order, path="--policy")
    p = dict(spec.params)
    if spec.order == "fifo":
        lines.append("PriorityType=priority/basic")
    else:
        lines.append("PriorityType=priority/multifactor")
        if spec.order == "multifactor":
            w = {k: int(p.get(k, getattr(order, k))) for k in ("age", "fairshare", "size", "qos")}
            lines += [f"PriorityWeightAge={w['age']}", f"PriorityWeightFairshare={w['fairshare']}",
                      f"PriorityWeightJobSize={w['size']}", f"PriorityWeightQOS={w['qos']}",
                      f"PriorityMaxAge={_minutes(p.get('max_age_s', order.max_age_s))}",
                      f"PriorityDecayHalfLife="
                      f"{_minutes(p.get('half_life_s', order.half_life_s))}",
                      f"PriorityCalcPeriod="
                      f"{max(1, round(p.get('calc_period_s', order.calc_period_s) / 60))}"]
        elif spec.order == "priority":
            lines += ["PriorityWeightQOS=10000", "PriorityWeightAge=0",
                      "PriorityWeightFairshare=0", "PriorityWeightJobSize=0"]
        else:
            lines += [f"# '{spec.order}' has no Slurm equivalent; nearest: favour small jobs",
                      "PriorityWeightJobSize=10000", "PriorityFlags=SMALL_RELATIVE_TO_TIME"]
    if spec.preempt:
        lines += ["PreemptType=preempt/qos", "PreemptMode=REQUEUE"]
    return lines


def _minutes(seconds: float) -> str:
    """Slurm time as days-hh:mm."""
    mins = int(round(seconds / 60))
    d, rem = divmod(mins, DAY_MIN)
    return f"{d}-{rem // 60:02d}:{rem % 60:02d}"


def _node_lines(ctx: ExportContext, site: SlurmSite) -> list[str]:
    hw = node_hardware(ctx)
    nodes = ctx.inventory.nodes
    groups = [("job nodes", [n.name for n in nodes if not n.spare], "UNKNOWN"),
              ("hot spares", [n.name for n in nodes if n.spare], "UNKNOWN")]
    out, port = [], site.first_node_port
    for label, names, state in groups:
        if not names:
            continue
        addr = ""
        if site.node_addr:
            addr = f" NodeAddr={site.node_addr} Port=[{port}-{port + len(names) - 1}]" \
                if len(names) > 1 else f" NodeAddr={site.node_addr} Port={port}"
            port += len(names)
        out += [f"# {label}: {len(names)}",
                f"NodeName={compress(names)}{addr} CPUs={hw.cpus} Boards=1 "
                f"SocketsPerBoard={hw.sockets} CoresPerSocket={hw.cores_per_socket} "
                f"ThreadsPerCore={hw.threads_per_core} RealMemory={hw.real_memory_mib} "
                f"Gres=gpu:{ctx.gpu_type}:{hw.gpus} State={state}"]
    return out


def controllers(ctx: ExportContext, site: SlurmSite) -> list[str]:
    """SlurmctldHost values: the site's, else the first two management servers."""
    if site.controller:
        return [site.controller]
    return [m.name for m in ctx.inventory.role("management")[:2]] or ["slurmctld"]


def needs_accounting(policy: str, site: SlurmSite) -> bool:
    """priority/multifactor (age, fair share) needs slurmdbd; so do GPU-hour records."""
    return bool(site.accounting) and "PriorityType=priority/multifactor" in _policy_lines(policy)


def _base_lines(ctx: ExportContext, site: SlurmSite, hosts: list[str]) -> list[str]:
    log, pid = site.log_dir, site.pid_dir
    per = ".%n" if site.node_addr else ""     # several slurmd on one test host
    state = site.state_dir or (SHARED_STATE_DIR if len(hosts) > 1 else "/var/spool/slurmctld")
    out = [f"ClusterName={ctx.cluster_name.replace('-', '_')[:30]}",
           *(f"SlurmctldHost={h}" for h in hosts), f"SlurmctldPort={site.ctld_port}",
           f"SlurmdPort={site.slurmd_port}", f"AuthType={site.auth}",
           f"SlurmUser={site.slurm_user}"]
    if len(hosts) > 1:
        out.append("# the backup controller takes over from this folder: shared storage "
                   "(NFS) mounted on both controllers")
    out += [f"StateSaveLocation={state}", f"SlurmdSpoolDir={site.spool_dir}",
            f"SlurmctldPidFile={pid}/slurmctld.pid", f"SlurmdPidFile={pid}/slurmd{per}.pid",
            f"SlurmctldLogFile={log}/slurmctld.log", f"SlurmdLogFile={log}/slurmd{per}.log",
            "MailProg=/bin/true"]
    if site.cgroups:
        out += ["ProctrackType=proctrack/cgroup", "TaskPlugin=task/affinity,task/cgroup"]
    else:
        out += ["ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none"]
    hw = node_hardware(ctx)
    out += ["MpiDefault=none", "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core_Memory", "GresTypes=gpu",
            "# a job's memory follows its GPUs (node memory / GPUs), so 1-GPU jobs share nodes",
            f"DefMemPerGPU={hw.real_memory_mib // max(1, hw.gpus)}"]
    if site.prolog or site.epilog:
        out += ["# health checks on every node before and after each job (see prolog.sh)",
                "PrologFlags=Alloc"]
        out += [f"Prolog={site.prolog}"] if site.prolog else []
        out += [f"Epilog={site.epilog}"] if site.epilog else []
    return out


def slurm_conf(ctx: ExportContext, policy: str = "multifactor+backfill",
               site: SlurmSite = SlurmSite(), topology: str = "auto") -> str:  # noqa: B008
    """slurm.conf text. ``topology``: auto (block for NVLink domains, else tree), tree,
    block, or yaml (no TopologyPlugin line; topology.yaml, Slurm >= 25.05)."""
    d, inv = ctx.design, ctx.inventory
    hosts = controllers(ctx, site)
    if topology == "auto":
        topology = "block" if has_blocks(ctx) else "tree"
    lines = [f"# slurm.conf for {ctx.title}: {inv.count('node'):,} nodes, "
             f"{d.gpus:,} GPUs ({ctx.gpu.id}), written by clustertwin export slurm",
             *_base_lines(ctx, site, hosts), *site.extra]
    if needs_accounting(policy, site):
        lines += ["# accounting in slurmdbd (slurmdbd.conf); gres/gpu records GPU-hours",
                  f"AccountingStorageType={site.accounting}",
                  f"AccountingStorageHost={site.dbd_host or hosts[0].split('(')[0]}",
                  f"AccountingStoragePort={site.dbd_port}",
                  "AccountingStorageTRES=gres/gpu", "JobAcctGatherType=jobacct_gather/"
                  + ("cgroup" if site.cgroups else "linux")]
    else:
        lines.append("JobAcctGatherType=jobacct_gather/none")
    if topology in ("tree", "block"):
        lines.append(f"TopologyPlugin=topology/{topology}")
    lines += _policy_lines(policy)
    lines += _node_lines(ctx, site)
    job = [n.name for n in inv.nodes if not n.spare]
    spare = [n.name for n in inv.nodes if n.spare]
    lines.append(f"PartitionName=batch Nodes={compress(job)} Default=YES MaxTime=INFINITE "
                 f"State=UP PriorityTier=10")
    if spare:
        lines.append(f"PartitionName=spares Nodes={compress(spare)} MaxTime=INFINITE "
                     f"State=UP PriorityTier=1")
    return "\n".join(lines) + "\n"


def gres_conf(ctx: ExportContext) -> str:
    n = ctx.inventory.gpus_per_node
    files = f"/dev/nvidia[0-{n - 1}]" if n > 1 else "/dev/nvidia0"
    names = compress([x.name for x in ctx.inventory.nodes])
    return (f"# gres.conf for {ctx.title}: {n} GPUs per node, explicit device files.\n"
            f"# On the real cluster 'AutoDetect=nvml' may replace the explicit lines.\n"
            f"NodeName={names} Name=gpu Type={ctx.gpu_type} File={files}\n")


def tree_switches(ctx: ExportContext) -> list[tuple[str, str, str]]:
    """(switch, 'Nodes' | 'Switches', hostlist) of the tree topology, leaves first."""
    inv = ctx.inventory
    by_su: dict[int, list[str]] = {}
    pod_of: dict[int, int] = {}
    for n in inv.nodes:
        by_su.setdefault(n.su, []).append(n.name)
        pod_of.setdefault(n.su, n.pod)
    w_su = max(3, len(str(max(by_su))))
    out = [(f"su{s:0{w_su}d}", "Nodes", compress(names)) for s, names in by_su.items()]
    if len(by_su) == 1:
        return out
    pods: dict[int, list[str]] = {}
    for s in by_su:
        pods.setdefault(pod_of[s], []).append(f"su{s:0{w_su}d}")
    if len(pods) == 1:
        return out + [("spine", "Switches", compress(next(iter(pods.values()))))]
    w_pod = max(2, len(str(max(pods))))
    out += [(f"pod{p:0{w_pod}d}", "Switches", compress(sus)) for p, sus in pods.items()]
    return out + [("core", "Switches", compress([f"pod{p:0{w_pod}d}" for p in pods]))]


def topology_tree(ctx: ExportContext) -> str:
    lines = [f"# topology.conf (topology/tree) for {ctx.title}: each scalable unit is "
             "one leaf, then pods (spine groups), then the top"]
    lines += [f"SwitchName={s} {kind}={members}" for s, kind, members in tree_switches(ctx)]
    return "\n".join(lines) + "\n"


def blocks(ctx: ExportContext) -> list[tuple[str, str]]:
    """(block name, hostlist) per NVLink domain."""
    by_dom: dict[int, list[str]] = {}
    for n in ctx.inventory.nodes:
        by_dom.setdefault(n.nvlink_domain, []).append(n.name)
    w = max(3, len(str(max(by_dom, default=1))))
    return [(f"nvl{k:0{w}d}", compress(v)) for k, v in by_dom.items()]


def block_sizes(ctx: ExportContext) -> list[int]:
    """Base block (nodes per NVLink domain) doubling while it fits the cluster."""
    per = max(1, ctx.design.layout.nvlink_domain_gpus // ctx.inventory.gpus_per_node)
    n_blocks = max(1, math.ceil(ctx.inventory.count("node") / per))
    sizes = [per]
    while sizes[-1] * 2 <= per * n_blocks:
        sizes.append(sizes[-1] * 2)
    return sizes


def topology_block(ctx: ExportContext) -> str:
    lines = [f"# topology.conf (topology/block) for {ctx.title}: one block per NVLink "
             "domain"]
    lines += [f"BlockName={b} Nodes={nodes}" for b, nodes in blocks(ctx)]
    lines.append("BlockSizes=" + ",".join(str(s) for s in block_sizes(ctx)))
    return "\n".join(lines) + "\n"


def topology_yaml(ctx: ExportContext) -> str:
    """topology.yaml (Slurm >= 25.05, which reads it in place of topology.conf when both are
    in the folder). Its cluster default is the same topology as topology.conf's, so the
    whole folder means one thing to every Slurm: the NVLink blocks (``nvl``) for NVLink-domain
    systems, with the fabric tree as topology ``fabric`` for partitions that name it
    (``Topology=fabric``, Slurm >= 26.05); else the fabric tree alone."""
    from clustertwin.export.stage import yaml_text

    switches = []
    for s, kind, members in tree_switches(ctx):
        switches.append({"switch": s, "nodes" if kind == "Nodes" else "children": members})
    tree = {"topology": "fabric", "cluster_default": not has_blocks(ctx),
            "tree": {"switches": switches}}
    if not has_blocks(ctx):
        return yaml_text([tree])
    block = {"topology": "nvl", "cluster_default": True,
             "block": {"block_sizes": block_sizes(ctx),
                       "blocks": [{"block": b, "nodes": n} for b, n in blocks(ctx)]}}
    return yaml_text([block, tree])


def lint_topology(ctx: ExportContext) -> list[str]:
    """What Slurm accepts silently but would be wrong: nodes in no leaf or in two, blocks
    of the wrong size, sizes that do not double."""
    from clustertwin.export.hostlist import expand

    names = [n.name for n in ctx.inventory.nodes]
    seen: dict[str, int] = {}
    for _, kind, members in tree_switches(ctx):
        if kind == "Nodes":
            for x in expand(members):
                seen[x] = seen.get(x, 0) + 1
    bad = [f"node {n} is in {seen.get(n, 0)} leaf switches" for n in names if seen.get(n) != 1]
    if has_blocks(ctx):
        base = block_sizes(ctx)[0]
        bad += [f"block {b} has {len(expand(m))} nodes, expected {base}"
                for b, m in blocks(ctx) if len(expand(m)) != base]
    sizes = block_sizes(ctx)
    bad += [f"BlockSizes {a},{b} do not double" for a, b in zip(sizes, sizes[1:], strict=False)
            if b != 2 * a]
    return bad


def slurm_files(ctx: ExportContext, policy: str = "multifactor+backfill",
                site: SlurmSite = SlurmSite()) -> dict[str, str]:  # noqa: B008
    """Every file of the Slurm set: slurm.conf, gres.conf, cgroup.conf, topology.conf (+
    topology.yaml with the same default), slurmdbd.conf when accounting is used, and the
    prolog / epilog health checks."""
    from clustertwin.export import slurm_node as N

    files = {"slurm.conf": slurm_conf(ctx, policy, site), "gres.conf": gres_conf(ctx),
             "cgroup.conf": N.cgroup_conf(site)}
    if has_blocks(ctx):
        files["topology.conf"] = topology_block(ctx)
        files["topology-tree.conf"] = topology_tree(ctx)
    else:
        files["topology.conf"] = topology_tree(ctx)
    files["topology.yaml"] = topology_yaml(ctx)
    if needs_accounting(policy, site):
        files["slurmdbd.conf"] = N.slurmdbd_conf(ctx, site, controllers(ctx, site)[0])
    if site.prolog:
        files["prolog.sh"] = N.prolog_sh(ctx)
    if site.epilog:
        files["epilog.sh"] = N.epilog_sh(ctx)
    return files
