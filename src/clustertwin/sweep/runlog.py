"""What a sweep ran on: ``run.json`` in every sweep output folder.

The executor, the Ray address (if any), every node that computed points and how many, the
wall-clock and CPU seconds (the driver's own and the workers' summed per batch) and each batch
that failed for a reason outside the plan (a worker or node that died) and was run again.
Rows never depend on where they were computed; this file is the only place that says.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any


@dataclass
class RunLog:
    executor: str
    ray_address: str | None = None
    driver_ip: str | None = None
    points_by_node: dict[str, int] = field(default_factory=dict)
    node_addresses: dict[str, str] = field(default_factory=dict)
    worker_cpu_s: float = 0.0
    retried: list[dict[str, Any]] = field(default_factory=list)
    skipped_invalid: int = 0
    resumed: int = 0
    _t0: float = field(default_factory=time.perf_counter)
    _cpu0: float = field(default_factory=time.process_time)
    wall_s: float = 0.0
    driver_cpu_s: float = 0.0

    def batch_done(self, node: str, address: str, cpu_s: float, points: int) -> None:
        """Count a finished batch of ``points`` computed on ``node`` (reachable at ``address``)."""
        self.points_by_node[node] = self.points_by_node.get(node, 0) + points
        self.node_addresses.setdefault(node, address)
        self.worker_cpu_s += cpu_s

    def retry(self, first_point: int, points: int, attempt: int, error: str) -> None:
        self.retried.append({"first_point": first_point, "points": points, "attempt": attempt,
                             "error": error})

    def finish(self) -> None:
        self.wall_s = time.perf_counter() - self._t0
        self.driver_cpu_s = time.process_time() - self._cpu0

    def to_dict(self) -> dict[str, Any]:
        nodes = [{"node": n, "address": self.node_addresses.get(n, ""), "points": c}
                 for n, c in sorted(self.points_by_node.items())]
        return {"executor": self.executor, "ray_address": self.ray_address,
                "driver_ip": self.driver_ip, "nodes_used": len(nodes), "nodes": nodes,
                "points_computed": sum(self.points_by_node.values()),
                "points_invalid": self.skipped_invalid, "points_resumed": self.resumed,
                "wall_s": round(self.wall_s, 3), "driver_cpu_s": round(self.driver_cpu_s, 3),
                "worker_cpu_s": round(self.worker_cpu_s, 3),
                "cpu_s": round(self.driver_cpu_s + self.worker_cpu_s, 3),
                "failures_retried": len(self.retried), "retries": self.retried}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2) + "\n"


__all__ = ["RunLog"]
