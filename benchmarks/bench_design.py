"""Design-stage speed: a full design (layout, fabric, networks, storage, power, cooling, BOM)
at several sizes, including 100,000 GPUs (target < 100 ms), plain fat trees and pod builds;
past one fabric's reach (100,000 H100 on NDR: rail-separated planes; 1,000,000 GPUs: a fourth
tier on NDR, 3 tiers on XDR); and the whole plan at 1,000,000 GPUs (target < 5 s, < 1 GiB)."""

from __future__ import annotations

import copy
import time

RAIL, FT = "rail-optimized-fat-tree", "fat-tree"
META = {"pod_gpus": 3072, "pod_oversubscription": 7, "leaf_switch": "minipack2",
        "spine_switch": "arista-7808r3"}
HPN = {"pod_gpus": 15360, "pod_oversubscription": 15, "oversubscription": 1.067,
       "dual_tor": True, "spine_switch": "hpn-51t"}
CASES = [  # (label, gpus, node, gpu, fabric, topology[, extra fabric keys])
    ("64 H100 / NDR200 (BasePOD leaf pair)", 64, "dgx-h100", "h100-sxm-80gb", "ib-ndr200", RAIL),
    ("1,016 H100 / NDR (R1 4-SU pod)", 1016, "dgx-h100", "h100-sxm-80gb", "ib-ndr", RAIL),
    ("16,384 H100 / NDR (64 SU, 3 tiers)", 16384, "dgx-h100", "h100-sxm-80gb", "ib-ndr", RAIL),
    ("24,576 H100 / RoCE ToR (Meta-like)", 24576, "dgx-h100", "h100-sxm-80gb", "roce-400g", FT),
    ("100,000 H100 / RoCE 400G", 100000, "dgx-h100", "h100-sxm-80gb", "roce-400g", RAIL),
    ("100,000 H100 liquid 4U (Colossus)", 100000, "hgx-h100-liquid-4u", "h100-sxm-80gb",
     "roce-400g", RAIL),
    ("100,000 B200 / XDR", 100000, "dgx-b200", "b200", "ib-xdr", RAIL),
    ("100,008 GB200 NVL72 / XDR", 100008, "gb200-nvl72", "gb200", "ib-xdr", RAIL),
    ("24,576 H100 Meta pods (3,072 / 1:7)", 24576, "dgx-h100", "h100-sxm-80gb", "roce-400g",
     FT, META),
    ("100,000 H100 Meta-style pods", 100000, "dgx-h100", "h100-sxm-80gb", "roce-400g", FT,
     META),
    ("100,000 H100 / NDR (rail-separated planes)", 100000, "dgx-h100", "h100-sxm-80gb",
     "ib-ndr", RAIL),
    ("1,000,000 B200 / NDR (8 planes, 4 tiers)", 1000000, "dgx-b200", "b200", "ib-ndr", RAIL),
    ("1,000,000 B200 / XDR (3 tiers)", 1000000, "dgx-b200", "b200", "ib-xdr", RAIL),
    ("1,000,008 GB200 NVL72 / XDR", 1000008, "gb200-nvl72", "gb200", "ib-xdr", RAIL),
    ("15,360 H800 Alibaba HPN pod", 15360, "hgx-h800", "h800", "roce-200g", RAIL, HPN),
    ("99,840 H800 HPN pods (6.5 pods)", 99840, "hgx-h800", "h800", "roce-200g", RAIL, HPN),
]


def _time(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main() -> None:
    import yaml

    from clustertwin.catalog import load_catalog
    from clustertwin.design import design
    from clustertwin.scenario import DEFAULT_SCENARIO, scenario_from_dict

    cat = load_catalog()
    base = yaml.safe_load(DEFAULT_SCENARIO.read_text())
    print(f"{'case':42s} {'best ms':>8s} {'switches':>9s} {'racks':>7s} {'IT MW':>7s}")
    for label, gpus, node, gpu, tech, topo, *extra in CASES:
        doc = copy.deepcopy(base)
        doc["cluster"].update({"gpus": gpus, "node": node, "gpu": gpu, "spare_nodes": 0})
        doc["cluster"]["fabric"].update({"technology": tech, "topology": topo,
                                         **(extra[0] if extra else {})})
        s = scenario_from_dict(doc, "<bench>", cat)
        d = design(s, cat, None)
        ms = _time(lambda s=s: design(s, cat, None), 20) * 1000
        print(f"{label:42s} {ms:8.3f} {d.fabric.switches:9,d} {d.racks:7,d} "
              f"{d.power.it_kw / 1000:7.1f}")
    whole_plan(cat, base)


def whole_plan(cat, base) -> None:
    """``plan`` at 1,000,000 GPUs: every stage, wall time and peak memory (target < 5 s and
    < 1 GiB on the 2-core CI machine)."""
    import resource

    from clustertwin.plan import make_plan
    from clustertwin.scenario import scenario_from_dict

    doc = copy.deepcopy(base)
    doc["cluster"].update({"gpus": 1_000_000, "node": "dgx-b200", "gpu": "b200"})
    s = scenario_from_dict(doc, "<bench 1M>", cat)
    t = time.perf_counter()
    plan = make_plan(s, cat)
    sec = time.perf_counter() - t
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    d = plan.design
    print(f"plan, 1,000,000 B200 / NDR: {sec:.2f} s, peak RSS {peak_mib:,.0f} MiB "
          f"(targets 5 s, 1,024 MiB); {d.fabric.tiers} tiers x {d.fabric.planes} planes, "
          f"{d.racks:,} racks, {d.power.it_kw / 1000:,.0f} MW IT")


if __name__ == "__main__":
    main()
