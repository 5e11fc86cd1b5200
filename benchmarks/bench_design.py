"""Design-stage speed: a full design (layout, fabric, networks, storage, power, cooling, BOM)
at several sizes, including 100,000 GPUs (target < 100 ms)."""

from __future__ import annotations

import copy
import time

CASES = [  # (label, gpus, node, gpu, fabric)
    ("1,016 H100 / NDR (R1 4-SU pod)", 1016, "dgx-h100", "h100-sxm-80gb", "ib-ndr"),
    ("16,384 H100 / NDR (64 SU, 3 tiers)", 16384, "dgx-h100", "h100-sxm-80gb", "ib-ndr"),
    ("100,000 H100 / RoCE 400G", 100000, "dgx-h100", "h100-sxm-80gb", "roce-400g"),
    ("100,000 B200 / XDR", 100000, "dgx-b200", "b200", "ib-xdr"),
    ("100,008 GB200 NVL72 / XDR", 100008, "gb200-nvl72", "gb200", "ib-xdr"),
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
    print(f"{'case':40s} {'best ms':>8s} {'switches':>9s} {'racks':>7s} {'IT MW':>7s}")
    for label, gpus, node, gpu, tech in CASES:
        doc = copy.deepcopy(base)
        doc["cluster"].update({"gpus": gpus, "node": node, "gpu": gpu})
        doc["cluster"]["fabric"]["technology"] = tech
        s = scenario_from_dict(doc, "<bench>", cat)
        d = design(s, cat, None)
        ms = _time(lambda s=s: design(s, cat, None), 20) * 1000
        print(f"{label:40s} {ms:8.3f} {d.fabric.switches:9,d} {d.racks:7,d} "
              f"{d.power.it_kw / 1000:7.1f}")


if __name__ == "__main__":
    main()
