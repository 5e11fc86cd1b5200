"""Kubernetes / Kueue topology-aware scheduling from the inventory (Kueue API v1beta2).

* ``kueue.yaml``: a ``Topology`` whose levels run coarsest to finest - pod (spine group),
  scalable unit (rail-leaf group), rack (the NVLink domain of an NVL72), then
  ``kubernetes.io/hostname`` (Kueue allows the hostname level only last); a
  ``ResourceFlavor`` selecting the GPU nodes by ``nvidia.com/gpu.product`` and naming the
  topology; a ``ClusterQueue`` whose nominal quota is the job nodes' CPUs, memory and GPUs
  (hot spares are outside the quota), and a ``LocalQueue`` in the ``default`` namespace.
* ``node-labels.yaml``: node -> labels (the same keys), and ``label-nodes.sh`` with the
  ``kubectl label node`` lines that apply them.

Jobs then ask for ``kueue.x-k8s.io/podset-required-topology: clustertwin.io/su`` (or
``podset-preferred-topology``) to stay within one scalable unit.
"""

from __future__ import annotations

import re

from clustertwin.export.slurm import has_blocks, node_hardware
from clustertwin.export.stage import ExportContext, yaml_text
from clustertwin.quoting import shell_quote

API = "kueue.x-k8s.io/v1beta2"
HOST = "kubernetes.io/hostname"
PREFIX = "clustertwin.io"


def levels(ctx: ExportContext) -> list[str]:
    rack = f"{PREFIX}/nvlink-domain" if has_blocks(ctx) else f"{PREFIX}/rack"
    return [f"{PREFIX}/pod", f"{PREFIX}/su", rack, HOST]


#: a Kubernetes label value: at most 63 characters, alphanumerics and ``-_.`` inside
LABEL_VALUE = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$")


def gpu_product(ctx: ExportContext) -> str:
    """Value of ``nvidia.com/gpu.product``: what GPU Feature Discovery sets on these nodes,
    from the catalog (``gfd_product``, with its source). A GPU without one (a user's catalog,
    a non-NVIDIA part) gets its name made a valid label value: the ResourceFlavor then
    selects nothing until the operator labels the nodes, which the comment in kueue.yaml
    says."""
    label = ctx.gpu.gfd_product
    if label:
        return label
    words = re.sub(r"[^A-Za-z0-9_.]+", "-", ctx.gpu.name.split("(")[0].strip())
    return re.sub(r"^[^A-Za-z0-9]+|[^A-Za-z0-9]+$", "", words[:63]) or ctx.gpu.id[:63]


def node_labels(ctx: ExportContext) -> dict[str, dict[str, str]]:
    out = {}
    rack_key = levels(ctx)[2]
    for n in ctx.inventory.nodes:
        out[n.name] = {f"{PREFIX}/pod": f"pod{n.pod:02d}", f"{PREFIX}/su": f"su{n.su:03d}",
                       rack_key: (f"nvl{n.nvlink_domain:03d}" if has_blocks(ctx) else n.rack),
                       f"{PREFIX}/spare": "true" if n.spare else "false",
                       "nvidia.com/gpu.product": gpu_product(ctx)}
    return out


def manifests(ctx: ExportContext) -> list[dict]:
    name = ctx.cluster_name
    topo = f"{name}-fabric"
    hw = node_hardware(ctx)
    job = [n for n in ctx.inventory.nodes if not n.spare]
    flavor = ctx.gpu_type
    quota = [{"name": "cpu", "nominalQuota": str(hw.cpus * len(job))},
             {"name": "memory", "nominalQuota": f"{hw.real_memory_mib * len(job)}Mi"},
             {"name": "nvidia.com/gpu", "nominalQuota": str(hw.gpus * len(job))}]
    return [
        {"apiVersion": API, "kind": "Topology", "metadata": {"name": topo},
         "spec": {"levels": [{"nodeLabel": lv} for lv in levels(ctx)]}},
        {"apiVersion": API, "kind": "ResourceFlavor", "metadata": {"name": flavor},
         "spec": {"nodeLabels": {"nvidia.com/gpu.product": gpu_product(ctx),
                                 f"{PREFIX}/spare": "false"},
                  "topologyName": topo}},
        {"apiVersion": API, "kind": "ClusterQueue", "metadata": {"name": "training"},
         "spec": {"namespaceSelector": {},
                  "resourceGroups": [{"coveredResources": [q["name"] for q in quota],
                                      "flavors": [{"name": flavor, "resources": quota}]}]}},
        {"apiVersion": API, "kind": "LocalQueue",
         "metadata": {"name": "training", "namespace": "default"},
         "spec": {"clusterQueue": "training"}},
    ]


def check_topology_rules(doc: dict) -> list[str]:
    """Kueue's CEL rules on Topology levels, which JSON Schema cannot express."""
    labels = [lv["nodeLabel"] for lv in doc["spec"]["levels"]]
    bad = []
    if len(set(labels)) != len(labels):
        bad.append("Topology: levels must be unique")
    if HOST in labels and labels[-1] != HOST:
        bad.append(f"Topology: {HOST} can only be the lowest level")
    return bad


def kueue_files(ctx: ExportContext) -> dict[str, str]:
    labels = node_labels(ctx)
    script = ["#!/bin/sh", f"# label the nodes of {ctx.title} for Kueue TAS", "set -e"]
    script += [" ".join(["kubectl label node --overwrite", shell_quote(name),
                         *(shell_quote(f"{k}={v}") for k, v in lab.items())])
               for name, lab in labels.items()]
    return {"kueue.yaml": yaml_text(manifests(ctx), all_docs=True),
            "node-labels.yaml": yaml_text(labels),
            "label-nodes.sh": "\n".join(script) + "\n"}
