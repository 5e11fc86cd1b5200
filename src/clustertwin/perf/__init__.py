"""Training-time model: FLOPs, memory, parallelism search and step time.

Until the full model lands this package exposes a labelled 6·N·D placeholder.
"""

from clustertwin.perf.estimate import TrainingEstimate, estimate

__all__ = ["TrainingEstimate", "estimate"]
