"""Training-time model: FLOPs, memory, collectives, pipeline schedules, a vectorized
parallelism search and the ``estimate`` stage entry point (see ``stage.py``)."""

from clustertwin._lazy import lazy_exports

__all__ = ["TrainingEstimate", "estimate"]
__getattr__ = lazy_exports(__name__, {"TrainingEstimate": "clustertwin.perf.stage",
                                      "estimate": "clustertwin.perf.stage"})
