"""Kueue manifests validate against Kueue's own CRD schemas (v1beta2, vendored in data/ with
their origin) plus the Topology CEL rules; labels cover every node; a broken manifest fails."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import yaml

from clustertwin.export import kueue as K
from clustertwin.export.stage import make_context

from .helpers import catalog, example

jsonschema = pytest.importorskip("jsonschema", reason="jsonschema not installed (dev extra)")
SCHEMAS = json.loads((Path(__file__).parent / "data" / "kueue-crd-v1beta2.json").read_text())


def validate(doc: dict) -> list[str]:
    entry = SCHEMAS["schemas"].get(doc.get("kind"))
    if entry is None or doc.get("apiVersion") != f"{entry['group']}/{entry['version']}":
        return [f"no schema for {doc.get('apiVersion')} {doc.get('kind')}"]
    v = jsonschema.Draft7Validator(entry["openAPIV3Schema"])
    errs = [f"{doc['kind']}: {'/'.join(map(str, e.path))}: {e.message}"
            for e in v.iter_errors(doc)]
    if doc["kind"] == "Topology":
        errs += K.check_topology_rules(doc)
    return errs


@pytest.mark.parametrize("name", ["default", "llama3-70b-gb200-nvl72"])
def test_manifests_validate_against_the_crds(name):
    scen, d, _, _ = example(name)
    ctx = make_context(scen, catalog(), d)
    files = K.kueue_files(ctx)
    docs = list(yaml.safe_load_all(files["kueue.yaml"]))
    assert [x["kind"] for x in docs] == ["Topology", "ResourceFlavor", "ClusterQueue",
                                          "LocalQueue"]
    for doc in docs:
        assert validate(doc) == []
    labels = yaml.safe_load(files["node-labels.yaml"])
    assert set(labels) == {n.name for n in ctx.inventory.nodes}
    levels = [lv["nodeLabel"] for lv in docs[0]["spec"]["levels"]]
    # every level but the hostname is a label on every node, coarsest level has fewest values
    assert all(set(levels[:-1]) <= set(lab) for lab in labels.values())
    distinct = [len({lab[lv] for lab in labels.values()}) for lv in levels[:-1]]
    assert distinct == sorted(distinct)
    gpus = docs[2]["spec"]["resourceGroups"][0]["flavors"][0]["resources"][2]
    assert int(gpus["nominalQuota"]) == d.job_nodes * ctx.node.gpus
    assert files["label-nodes.sh"].count("kubectl label node") == len(ctx.inventory.nodes)


def test_broken_manifests_are_caught():
    scen, d, _, _ = example("default")
    docs = K.manifests(make_context(scen, catalog(), d))
    topo = copy.deepcopy(docs[0])
    topo["spec"]["levels"].append({"nodeLabel": "clustertwin.io/su"})
    topo["spec"]["levels"].insert(0, {"nodeLabel": K.HOST})
    assert any("unique" in e for e in validate(topo))
    assert any("lowest" in e for e in validate(topo))
    flavor = copy.deepcopy(docs[1])
    flavor["spec"]["topologyName"] = "Ctwin_Fabric!"
    assert validate(flavor)
    cq = copy.deepcopy(docs[2])
    cq["spec"]["resourceGroups"][0]["flavors"][0]["resources"][2]["nominalQuota"] = "lots"
    assert validate(cq)


@pytest.mark.parametrize(("name", "product"), [("default", "NVIDIA-H100-80GB-HBM3"),
                                               ("llama3-70b-gb200-nvl72", "NVIDIA-GB200")])
def test_gpu_product_is_gfds_label_and_every_label_value_is_valid(name, product):
    """GPU Feature Discovery's nvidia.com/gpu.product (catalog gfd_product, with a source);
    every label value a valid Kubernetes label value; the script parses in sh."""
    import shutil
    import subprocess

    from clustertwin.export.kueue import LABEL_VALUE, gpu_product, kueue_files, node_labels

    scen, d, _, _ = example(name)
    ctx = make_context(scen, catalog(), d)
    assert gpu_product(ctx) == product
    assert ctx.gpu.gfd_product_source
    values = {v for lab in node_labels(ctx).values() for v in lab.values()}
    assert all(LABEL_VALUE.match(v) and len(v) <= 63 for v in values), values
    script = kueue_files(ctx)["label-nodes.sh"]
    assert f"nvidia.com/gpu.product={product}" in script
    if shutil.which("sh"):
        run = subprocess.run(["sh", "-n"], input=script, text=True, capture_output=True,
                             check=False)
        assert run.returncode == 0, run.stderr


def test_a_gpu_without_a_gfd_label_gets_a_valid_label_value():
    from types import SimpleNamespace

    from clustertwin.export.kueue import LABEL_VALUE, gpu_product

    gpu = SimpleNamespace(gfd_product=None, name="AMD Instinct MI300X (OAM, 192 GB: \"x\")")
    value = gpu_product(SimpleNamespace(gpu=gpu))
    assert value == "AMD-Instinct-MI300X" and LABEL_VALUE.match(value)
