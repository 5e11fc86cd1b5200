"""Training-time model: FLOPs, memory, collectives, pipeline schedules, a vectorized
parallelism search and the ``estimate`` stage entry point (see ``estimate.py``)."""

from clustertwin.perf.estimate import TrainingEstimate, estimate

__all__ = ["TrainingEstimate", "estimate"]
