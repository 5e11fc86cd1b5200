"""Ansible inventory (YAML) from the inventory: every host once with its variables, grouped by
role, rack, scalable unit, pod and NVLink domain.

Groups (Ansible group names are identifiers, so ``-`` becomes ``_``):

* by role: ``gpu_nodes`` (with ``spares`` as a child group), ``compute_fabric_switches``
  (children ``leaf``, ``spine``, ``core``), ``storage_fabric_switches``, ``inband_switches``,
  ``oob_switches``, ``management_servers``, ``fabric_managers``, ``storage_systems``,
  ``nvlink_switch_trays``;
* by place: ``rack_<rack>`` (every racked host), ``su_<n>``, ``pod_<n>``, ``nvl_<n>`` (nodes).

Host variables: ``rack``, ``rack_slot``, ``row``, ``model`` and, for nodes, ``su``, ``pod``,
``nvlink_domain``, ``gpus``, ``spare``.
"""

from __future__ import annotations

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

    def add(group: str, host: str, hostvars: dict | None = None) -> None:
        groups.setdefault(group, {"hosts": {}})["hosts"][host] = hostvars

    for d in ctx.inventory.devices:
        role_group = ROLE_GROUPS.get(d.role)
        if role_group is None:
            continue          # PDUs and CDUs are not Ansible hosts
        hostvars = {"rack": d.rack, "rack_slot": d.slot, "row": d.row, "model": d.model}
        if d.role == "node":
            hostvars |= {"su": d.su, "pod": d.pod, "nvlink_domain": d.nvlink_domain,
                         "gpus": d.gpus, "spare": d.spare}
        add(role_group, d.name, hostvars)
        if d.rack:
            add(f"rack_{_gid(d.rack)}", d.name)
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
    return {"all": {"vars": {"cluster_name": ctx.cluster_name,
                             "gpus_per_node": ctx.inventory.gpus_per_node},
                    "children": children}}


def ansible_files(ctx: ExportContext) -> dict[str, str]:
    head = (f"# Ansible inventory for {ctx.title}, written by clustertwin export "
            "ansible\n")
    return {"ansible-inventory.yml": head + yaml_text(ansible_inventory(ctx))}
