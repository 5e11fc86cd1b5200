"""Speed of the perf stage: plans evaluated per second, a full 405B / 16,384-GPU search, and
``estimate`` on the default scenario. Prints figures; asserts nothing."""

from __future__ import annotations

import time


def _best_of(fn, repeat: int = 5) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    import numpy as np

    from clustertwin.catalog import load_catalog
    from clustertwin.perf.costmodel import evaluate
    from clustertwin.perf.search import enumerate_plans, search
    from clustertwin.perf.stage import estimate, job_of, system_of
    from clustertwin.scenario import load_scenario, with_updates

    cat = load_catalog()
    scen = load_scenario(None, cat)
    scen16k = with_updates(scen, cluster={"gpus": 16384})
    job, sys = job_of(scen16k), system_of(scen16k, cat)
    plans, _ = enumerate_plans(job, sys, 16384)
    n = plans["tp"].shape[0]
    big = {k: np.tile(v, max(1, 200_000 // n)) for k, v in plans.items()}
    nb = big["tp"].shape[0]
    t_eval = _best_of(lambda: evaluate(job, sys, big), 3)
    t_search = _best_of(lambda: search(job, sys, 16384), 5)
    t_est = _best_of(lambda: estimate(scen, cat), 5)
    print(f"perf: evaluate {nb:,} plans in {t_eval * 1e3:.0f} ms = {nb / t_eval:,.0f} plans/s")
    print(
        f"perf: full search {scen.model.name} on 16,384 GPUs: {n:,} plans built and evaluated "
        f"in {t_search * 1e3:.0f} ms ({n / t_search:,.0f} plans/s end to end)"
    )
    print(f"perf: estimate(default scenario) {t_est * 1e3:.0f} ms")
    # the same search under other software stacks (training.stack): FSDP prefetch, eager
    # element-wise costs and no interleaving change the arithmetic, not the speed
    from dataclasses import replace

    from clustertwin.perf.stacks import profile_of

    for sid in ("torchtitan", "fsdp", "deepspeed"):
        j2 = replace(job, stack=profile_of(cat, sid, sys.generation))
        t = _best_of(lambda j2=j2: evaluate(j2, sys, big), 3)
        print(f"perf: evaluate {nb:,} plans, stack {sid}: {nb / t:,.0f} plans/s")


if __name__ == "__main__":
    main()
