"""Preemption: requeue the fewest lower-ranked running jobs that let a blocked job start."""

from __future__ import annotations

from clustertwin.scheduling.lifecycle import Lifecycle
from clustertwin.scheduling.reservations import Reservations
from clustertwin.scheduling.state import copy_state


class Preemption(Lifecycle, Reservations):
    """Preemption of lower-ranked running jobs for a blocked job."""

    def _try_preempt(self, h: int) -> bool:
        if self.preempt_tried == (h, self.version):
            return False
        self.preempt_tried = (h, self.version)
        rank = self.rank[h]
        if not any(rk < rank for rk in self.rank_count):
            return False
        victims = sorted((self.rank[j], -self.run_start[j], j) for j in self.running
                         if self.rank[j] < rank and self.resv_of[j] < 0)
        if not victims:
            return False
        m = self.milli[h]
        hyp = copy_state(self.st)
        mask = self._mask(h)
        chosen: list[int] = []
        for _, _, j in victims:
            alloc = self.alloc[j]
            assert alloc is not None
            hyp.give(alloc)
            chosen.append(j)
            if hyp.free_milli >= m and self.placer.place(hyp, m, mask) is not None:
                break
        else:
            return False
        # drop victims that turned out not to be needed (latest first)
        for j in list(reversed(chosen[:-1])):
            test = copy_state(self.st)
            for v in chosen:
                if v != j:
                    test.give(self.alloc[v])  # type: ignore[arg-type]
            if self.placer.place(test, m, mask) is not None:
                chosen.remove(j)
        for j in chosen:
            self._interrupt(j, preempted=True)
        alloc = self.placer.place(self.st, m, mask)
        assert alloc is not None  # same state as the hypothetical one
        self._start(h, alloc)
        return True
