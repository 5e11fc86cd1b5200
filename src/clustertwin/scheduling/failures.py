"""Node failures (a Poisson process over the cluster's nodes) and repairs."""

from __future__ import annotations

from clustertwin.scheduling.lifecycle import Lifecycle
from clustertwin.scheduling.simtypes import FAIL, REPAIR


class Failures(Lifecycle):
    """Failures arrive cluster-wide at ``failure_rate_per_node_day x nodes``; a failed node
    interrupts its jobs and returns after an exponential repair time."""

    def _next_failure(self) -> None:
        rate = self.cfg.failure_rate_per_node_day / 86400.0 * self.spec.nodes
        if rate <= 0:
            return
        self.push(self.now + float(self.rng.exponential(1.0 / rate)), FAIL, None)

    def _fail(self) -> None:
        node = int(self.rng.integers(self.spec.nodes))
        if self.st.up[node]:
            self.failures += 1
            assert self.on_node is not None
            for j in sorted(self.on_node.get(node, set())):
                self._interrupt(j, preempted=False)
            self.st.fail(node)
            self.push(self.now + float(self.rng.exponential(self.cfg.repair_s)), REPAIR, node)
            self.shadow = None
        self._next_failure()

    def _repair(self, node: int) -> None:
        self.st.repair(node)
        self.version += 1
        self.shadow = None  # the node's GPUs may let the head start before the cached time
