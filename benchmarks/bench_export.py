"""Export speed: design -> inventory -> every export file (``clustertwin export all``, files
built in memory and written to a temporary folder) for the default 16,384-GPU scenario
(target < 2 s) and 100,000-GPU clusters (target < 10 s), plus the cabling map alone."""

from __future__ import annotations

import copy
import tempfile
import time
from pathlib import Path

CASES = [  # (label, gpus, node, gpu, fabric)
    ("default scenario (16,384 H100 + spares)", None, None, None, None),
    ("100,000 H100 / RoCE 400G", 100000, "dgx-h100", "h100-sxm-80gb", "roce-400g"),
    ("100,008 GB200 NVL72 / XDR", 100008, "gb200-nvl72", "gb200", "ib-xdr"),
]


def _scenario(cat, gpus, node, gpu, tech):
    import yaml

    from clustertwin.scenario import DEFAULT_SCENARIO, scenario_from_dict

    doc = yaml.safe_load(DEFAULT_SCENARIO.read_text())
    if gpus is not None:
        doc = copy.deepcopy(doc)
        doc["cluster"].update({"gpus": gpus, "node": node, "gpu": gpu})
        doc["cluster"]["fabric"]["technology"] = tech
    return scenario_from_dict(doc, "<bench>", cat)


def main() -> dict[str, float]:
    from clustertwin.catalog import load_catalog
    from clustertwin.cli.export import build_files
    from clustertwin.design.site.cabling import build_cabling
    from clustertwin.export.stage import make_context
    from clustertwin.outputs import write_outputs

    cat = load_catalog()
    figures = {}
    print(f"{'case':42s} {'nodes':>7s} {'links':>9s} {'cabling s':>9s} {'export all s':>12s}")
    for label, *args in CASES:
        scen = _scenario(cat, *args)
        t0 = time.perf_counter()
        ctx = make_context(scen, cat)
        files, _ = build_files("all", ctx)
        with tempfile.TemporaryDirectory() as tmp:
            write_outputs(Path(tmp), files, force=True)
        total = time.perf_counter() - t0
        t1 = time.perf_counter()
        links = build_cabling(ctx.inventory, ctx.design)
        cab = time.perf_counter() - t1
        print(f"{label:42s} {ctx.inventory.count('node'):7,d} {len(links):9,d} {cab:9.2f} "
              f"{total:12.2f}")
        figures[label] = total
    return figures


if __name__ == "__main__":
    main()
