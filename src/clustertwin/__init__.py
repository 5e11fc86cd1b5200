"""clustertwin: a digital twin of an AI training cluster.

The pipeline (see README): scenario -> perf -> design -> reliability -> economics -> buildout,
composed by :func:`clustertwin.plan.make_plan`. Stages are pure functions returning frozen
result objects; only the CLI and the report layer do I/O.
"""

__version__ = "0.1.0"

from clustertwin._lazy import lazy_exports  # noqa: E402

# clustertwin.sweep(base, grid, executor=...) -> pyarrow.Table; the sweep package is callable too
__getattr__ = lazy_exports(__name__, {"sweep": "clustertwin.sweep.api"})
