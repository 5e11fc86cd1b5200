"""What the imported results cover, against the design: nodes, GPUs, scalable units, rails
and fabric links, and which acceptance tests have no result yet (``check.json`` ``coverage``).

A node is covered by a test when its name appears in that test's results: burn-in rows, a
DCGM run, or the hosts of an nccl-tests run. A rail is covered when the ibnetdiscover output
shows at least one of its designed node links up (rail = the node adapter's index in the node
model's compute-adapter order). A test of the plan has a result when a file of its kind was
imported: GEMM and burn-in from the burn-in CSV, DCGM from DCGM runs, NVLink from single-node
nccl-tests runs, network from multi-node ones; HBM bandwidth has no importer yet.
"""

from __future__ import annotations

from typing import Any

MAX_LISTED = 50


def _nodes_by_test(rep: Any) -> dict[str, set[str]]:
    out = {"burnin": set(rep.gpus.node.tolist()) if rep.gpus is not None else set(),
           "dcgm": {d["node"] for d in rep.dcgm},
           "nccl": {h for r in rep.nccl for h in r["hosts"]}}
    return {k: {str(x) for x in v} for k, v in out.items()}


def _tests_without_result(rep: Any, plan: Any) -> list[str]:
    single = any(len(r["hosts"]) <= 1 and r["grade"] != "untested" for r in rep.nccl)
    multi = any(len(r["hosts"]) > 1 and r["grade"] != "untested" for r in rep.nccl)
    have = {"gemm": rep.gpus is not None, "burnin": rep.gpus is not None,
            "dcgm": bool(rep.dcgm), "nvlink": single, "network": multi, "hbm": False}
    return [c.id for c in plan.checks if not have.get(c.kind, False)]


def _rails(designed: list, wiring: Any, node_names: set[str]) -> dict[str, Any]:
    from clustertwin.acceptance.importers.ibnet import link_key

    missing = set(wiring.missing) | {k for k, *_ in wiring.degraded}
    rails: dict[str, list[int]] = {}
    for a, ap, b, bp, _ in designed:
        if str(a) not in node_names:
            continue
        key = link_key(f"{str(a).lower()}:{ap}", f"{str(b).lower()}:{bp}")
        ok = rails.setdefault(str(ap), [0, 0])
        ok[0] += 1
        ok[1] += key not in missing
    return {"designed": len(rails), "covered": sum(1 for v in rails.values() if v[1]),
            "by_adapter": {k: {"links": v[0], "up": v[1]} for k, v in sorted(rails.items())}}


def coverage(rep: Any, plan: Any, inventory: Any, designed_links: list | None = None) -> dict:
    nodes = [n.name for n in inventory.nodes]
    names = set(nodes)
    by_test = _nodes_by_test(rep)
    covered = set().union(*by_test.values()) & names
    su_of = {n.name: n.su for n in inventory.nodes}
    sus = sorted(set(su_of.values()))
    su_hit = {su_of[n] for n in covered}
    gpus_designed = sum(n.gpus for n in inventory.nodes)
    gpu_seen = set()
    if rep.gpus is not None:
        gpu_seen |= set(zip(rep.gpus.node.tolist(), rep.gpus.gpu.tolist(), strict=True))
    gpu_seen |= {(d["node"], int(g)) for d in rep.dcgm for g in d["gpus"]}
    gpu_seen = {k for k in gpu_seen if str(k[0]) in names}
    missing = [n for n in nodes if n not in covered]
    out = {
        "nodes": {"designed": len(nodes), "covered": len(covered),
                  "by_test": {k: len(v & names) for k, v in by_test.items()},
                  "not_covered": missing[:MAX_LISTED], "not_covered_count": len(missing),
                  "unknown": sorted(set().union(*by_test.values()) - names)[:MAX_LISTED]},
        "gpus": {"designed": gpus_designed, "covered": len(gpu_seen)},
        "scalable_units": {"designed": len(sus), "covered": len(su_hit),
                           "not_covered": [s for s in sus if s not in su_hit][:MAX_LISTED]},
        "tests_without_result": _tests_without_result(rep, plan),
    }
    if rep.wiring is not None and designed_links is not None:
        w = rep.wiring
        out["links"] = {"designed": w.designed, "seen": w.seen, "ok": w.ok}
        out["rails"] = _rails(designed_links, w, names)
    else:
        out["links"] = out["rails"] = None
    return out
