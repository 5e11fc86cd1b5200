"""Importing and grading 10,000 nodes' acceptance results (target: under 5 s).

Builds (untimed) the measured results of a 10,000-node DGX H100 cluster with the synthetic
generator: an 80,000-row burn-in CSV, 10,000 DCGM 4.x documents, 10,000 intra-node nccl-tests
logs and the ibnetdiscover output of its compute fabric (with a few planted faults), written to
a temporary folder (20,002 files). Then times what ``clustertwin check`` does with them: read
and parse every file, compare the wiring with the cabling map, grade every GPU, node and link,
and build check.json. Wall time and CPU time are both printed: on a shared machine the CPU time
is the figure to compare with the target.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

NODES = 10_000


def _scenario(nodes: int = NODES):
    from clustertwin.catalog import load_catalog
    from clustertwin.scenario import scenario_from_dict

    doc = {"schema_version": 1, "name": f"bench-{nodes}-nodes",
           "cluster": {"gpu": "h100-sxm-80gb", "node": "dgx-h100", "gpus": nodes * 8, "spare_nodes": 0,
                       "fabric": {"technology": "ib-ndr", "topology": "rail-optimized-fat-tree"}}}
    cat = load_catalog()
    return scenario_from_dict(doc, "bench", cat), cat


def measure(size: int = NODES, quiet: bool = False) -> dict[str, float]:
    """Generate (untimed) and check (timed) the results of a ``size``-node cluster."""
    from clustertwin.acceptance.grade import Imported, health
    from clustertwin.acceptance.importers import burnin, dcgm, ibnet, nccl
    from clustertwin.acceptance.model import model_for
    from clustertwin.acceptance.plan import build_plan
    from clustertwin.acceptance.report import check_doc
    from clustertwin.acceptance.synthetic import Plants, synthesize
    from clustertwin.acceptance.wiring import compare, expected_compute_links

    t0 = time.perf_counter()
    scen, cat = _scenario(size)
    from clustertwin.design import design as design_stage

    plan = build_plan(scen, cat, size * 8)
    model = model_for(scen, cat)
    designed = expected_compute_links(scen, cat, design_stage(scen, cat, None))
    nodes = sorted({a for a, ap, *_ in designed if not str(ap).isdigit()})
    meas = synthesize(model, plan, nodes, designed,
                      Plants(slow_gpus=((nodes[5], 3), (nodes[700], 1)), bad_links=(11, 12345), missing=(11,),
                             crossed=((100, 200),)), seed=1)
    tmp = Path(tempfile.mkdtemp(prefix="bench-acceptance-"))
    (tmp / "burnin.csv").write_text(meas.burnin_csv)
    (tmp / "ibnetdiscover.out").write_text(meas.ibnet)
    for n in nodes:
        (tmp / f"dcgm-{n}.json").write_text(meas.dcgm[n])
        (tmp / f"nccl-{n}.txt").write_text(meas.nccl[n])
    t_gen = time.perf_counter() - t0

    t1, c1 = time.perf_counter(), time.process_time()  # from here on: what `check` does
    b, rb = burnin.load(tmp / "burnin.csv")
    runs = [dcgm.load(f"{tmp}/dcgm-{n}.json") for n in nodes]
    logs = [nccl.load(f"{tmp}/nccl-{n}.txt") for n in nodes]
    seen, ri = ibnet.load(tmp / "ibnetdiscover.out")
    t_parse = time.perf_counter() - t1
    t2 = time.perf_counter()
    wiring = compare(designed, seen)
    imports = [rb.to_dict(), ri.to_dict()] + [r.to_dict() for _, r in runs] + [r.to_dict() for _, r in logs]
    rep = health(plan, model, Imported(b, [d for d, _ in runs], [x for x, _ in logs], wiring, imports), nodes)
    doc = check_doc(rep, plan)
    t_grade = time.perf_counter() - t2
    total = t_parse + t_grade
    cpu = time.process_time() - c1
    shutil.rmtree(tmp, ignore_errors=True)
    if quiet:
        return {"parse_s": t_parse, "grade_s": t_grade, "cpu_s": cpu, "wall_s": total}
    print(f"   {size:,} nodes, {len(b):,} GPUs, {len(designed):,} designed links (generated in {t_gen:.1f} s)")
    print(f"   parse {t_parse:.2f} s + wiring/grade/report {t_grade:.2f} s = {total:.2f} s wall, {cpu:.2f} s CPU (target < 5 s)")
    print(f"   diagnosis: drain {len(rep.drain())}, actions {len(doc['actions'])}, "
          f"links ok {wiring.ok:,} degraded {len(wiring.degraded)} missing {len(wiring.missing)} crossed {len(wiring.crossed)}")
    return {"import_10k_nodes_s": total, "import_10k_nodes_cpu_s": cpu, "parse_s": t_parse, "grade_s": t_grade}


def main() -> dict[str, float]:
    return measure(NODES)


if __name__ == "__main__":
    main()
