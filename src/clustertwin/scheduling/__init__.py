"""Multi-tenant scheduler simulator: replays job traces on a cluster under several policies.

Entry point: :func:`schedule` (the CLI command ``clustertwin schedule`` wraps it)."""

from clustertwin._lazy import lazy_exports

__all__ = ['ClusterSpec', 'Reservation', 'ScheduleResult', 'SimConfig', 'Workload', 'load_cluster', 'make_workload', 'parse_policy', 'pooled', 'schedule', 'simulate', 'uniform', 'with_time_limits']
__getattr__ = lazy_exports(__name__, {'schedule': 'clustertwin.scheduling.replay', 'simulate': 'clustertwin.scheduling.engine', 'SimConfig': 'clustertwin.scheduling.engine', 'Reservation': 'clustertwin.scheduling.engine', 'ClusterSpec': 'clustertwin.scheduling.cluster', 'load_cluster': 'clustertwin.scheduling.cluster', 'uniform': 'clustertwin.scheduling.cluster', 'pooled': 'clustertwin.scheduling.cluster', 'Workload': 'clustertwin.scheduling.jobs', 'make_workload': 'clustertwin.scheduling.jobs', 'with_time_limits': 'clustertwin.scheduling.jobs', 'parse_policy': 'clustertwin.scheduling.policies', 'ScheduleResult': 'clustertwin.scheduling.result'})
