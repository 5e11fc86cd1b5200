"""Ansible inventory (YAML) from the inventory: every host once with its variables, grouped by
role, rack, scalable unit, pod and NVLink domain.

Groups (Ansible group names are identifiers, so ``-`` becomes ``_``):

* by role: ``gpu_nodes`` (with ``spares`` as a child group), ``compute_fabric_switches``
  (children ``leaf``, ``spine``, ``core``), ``storage_fabric_switches``, ``inband_switches``,
  ``oob_switches``, ``management_servers``, ``fabric_managers``, ``storage_systems``,
  ``nvlink_switch_trays``;
* by place: ``rack_<rack>`` (every racked host), ``su_<n>``, ``pod_<n>``, ``nvl_<n>`` (nodes);
* by rail: ``plane_<n>`` (the compute-fabric switches of rail plane n);
* ``slurm_controllers`` (the first two management servers, as slurm.conf names them).

Host variables: ``ansible_host`` (in-band address from the IP plan, else the management
port's), ``bmc_address``, ``rack``, ``rack_slot``, ``row``, ``model`` and, for nodes, ``su``,
``pod``, ``nvlink_domain``, ``gpus``, ``spare``.

``site.yml`` places the exported files from the folder it sits in: the Slurm set on the
controllers and nodes (prolog / epilog executable, slurmdbd.conf mode 600 on the primary),
dcgm-exporter's counters on the nodes, prometheus.yml and the rules on the first management
server; each play restarts what it changed through a handler.
"""

from __future__ import annotations

from clustertwin.export.ipplan import ip_plan
from clustertwin.export.stage import ExportContext, yaml_text

ROLE_GROUPS = {"node": "gpu_nodes", "nvswitch": "nvlink_switch_trays", "leaf": "leaf",
               "spine": "spine", "core": "core", "storage-leaf": "storage_fabric_switches",
               "storage-spine": "storage_fabric_switches",
               "storage-core": "storage_fabric_switches", "inband": "inband_switches",
               "oob": "oob_switches", "management": "management_servers",
               "ufm": "fabric_managers", "storage": "storage_systems"}


def _gid(text: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in text)


def ansible_inventory(ctx: ExportContext) -> dict:
    groups: dict[str, dict] = {}
    addr = ip_plan(ctx).addresses

    def add(group: str, host: str, hostvars: dict | None = None) -> None:
        groups.setdefault(group, {"hosts": {}})["hosts"][host] = hostvars

    for d in ctx.inventory.devices:
        role_group = ROLE_GROUPS.get(d.role)
        if role_group is None:
            continue          # PDUs and CDUs are not Ansible hosts
        a = addr.get(d.name, {})
        hostvars = {"ansible_host": a.get("inband") or a.get("bmc", ""),
                    "bmc_address": a.get("bmc", ""), "rack": d.rack, "rack_slot": d.slot,
                    "row": d.row, "model": d.model}
        if d.role == "node":
            hostvars |= {"su": d.su, "pod": d.pod, "nvlink_domain": d.nvlink_domain,
                         "gpus": d.gpus, "spare": d.spare}
        add(role_group, d.name, hostvars)
        if d.rack:
            add(f"rack_{_gid(d.rack)}", d.name)
        if d.plane and d.role in ("leaf", "spine", "core"):
            add(f"plane_{d.plane:02d}", d.name)
        if d.role == "node":
            add(f"su_{d.su:03d}", d.name)
            add(f"pod_{d.pod:02d}", d.name)
            add(f"nvl_{d.nvlink_domain:04d}", d.name)
            if d.spare:
                add("spares", d.name)
    children: dict[str, dict] = {}
    fabric = {g: groups.pop(g) for g in ("leaf", "spine", "core") if g in groups}
    if fabric:
        children["compute_fabric_switches"] = {"children": fabric}
    if "spares" in groups:
        groups.setdefault("gpu_nodes", {"hosts": {}})["children"] = {"spares": groups.pop("spares")}
    children.update(groups)
    mgmt = [m.name for m in ctx.inventory.role("management")[:2]]
    if mgmt:
        children["slurm_controllers"] = {"hosts": dict.fromkeys(mgmt)}
    return {"all": {"vars": {"cluster_name": ctx.cluster_name,
                             "gpus_per_node": ctx.inventory.gpus_per_node},
                    "children": children}}


def _copy(src: str, dest: str, mode: str = "0644", notify: str = "", owner: str = "") -> dict:
    task = {"name": f"Place {src} in {dest}",
            "ansible.builtin.copy": {"src": "{{ playbook_dir }}/" + src, "dest": dest,
                                     "mode": mode} | ({"owner": owner} if owner else {})}
    return task | ({"notify": notify} if notify else {})


def _play(name: str, hosts: str, tasks: list[dict], handler: str, service: str) -> dict:
    folders = sorted({t["ansible.builtin.copy"]["dest"].rsplit("/", 1)[0] for t in tasks})
    mkdir = [{"name": f"Folder {f} exists", "ansible.builtin.file": {"path": f, "state": "directory",
                                                               "mode": "0755"}}
             for f in folders]
    return {"name": name, "hosts": hosts, "become": True, "tasks": mkdir + tasks,
            "handlers": [{"name": handler, "ansible.builtin.service": {
                "name": service, "state": "restarted"}}]}


def site_yml(ctx: ExportContext, slurm_names: list[str]) -> list[dict]:
    """Plays placing the exported files (those ``slurm_names`` of the Slurm set)."""
    common = [n for n in slurm_names if n not in ("slurmdbd.conf", "prolog.sh", "epilog.sh")]
    ctl = [_copy(n, f"/etc/slurm/{n}", notify="Restart slurmctld") for n in common]
    if "slurmdbd.conf" in slurm_names:
        ctl.append(_copy("slurmdbd.conf", "/etc/slurm/slurmdbd.conf", "0600", owner="slurm"))
    node = [_copy(n, f"/etc/slurm/{n}", notify="Restart slurmd") for n in common]
    node += [_copy(n, f"/etc/slurm/{n}", "0755") for n in ("prolog.sh", "epilog.sh")
             if n in slurm_names]
    node.append(_copy("dcgm-exporter-counters.csv", "/etc/dcgm-exporter/clustertwin.csv"))
    prom = [_copy(n, f"/etc/prometheus/{n}", notify="Restart prometheus")
            for n in ("prometheus.yml", "clustertwin.rules.yml")]
    return [_play("Slurm controllers", "slurm_controllers", ctl, "Restart slurmctld",
                  "slurmctld"),
            _play("GPU nodes", "gpu_nodes", node, "Restart slurmd", "slurmd"),
            _play("Prometheus", "slurm_controllers[0]", prom, "Restart prometheus",
                  "prometheus")]


def ansible_files(ctx: ExportContext) -> dict[str, str]:
    from clustertwin.export.slurm import slurm_files

    head = (f"# Ansible inventory for {ctx.title}, written by clustertwin export "
            "ansible\n")
    play = ("# Ansible playbook written by clustertwin export ansible: run from the export "
            "folder,\n#   ansible-playbook -i ansible-inventory.yml site.yml\n")
    return {"ansible-inventory.yml": head + yaml_text(ansible_inventory(ctx)),
            "site.yml": play + yaml_text(site_yml(ctx, sorted(slurm_files(ctx))))}
