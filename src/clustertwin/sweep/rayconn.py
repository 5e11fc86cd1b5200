"""Joining a Ray cluster from the sweep's driver.

Two things go wrong on real clusters and are handled here:

* **Several network interfaces.** Ray gives the driver the address of the interface its
  default route uses, which on a host with a management and an in-band network may not be
  one the head can reach (tasks then never return). The driver here takes the address of the
  interface the kernel would use to reach the head (a UDP socket ``connect``: no packet is
  sent) unless ``RAY_NODE_IP_ADDRESS`` names one.
* **Token authentication** (Ray >= 2.52, on by default in newer releases). Ray reads
  ``RAY_AUTH_MODE=token`` and the token (``RAY_AUTH_TOKEN``, ``RAY_AUTH_TOKEN_PATH`` or
  ``~/.ray/auth_token``) from the environment of every process: the head, each worker node
  and this driver need the same ones. A refused connection says so in one line.
"""

from __future__ import annotations

import os
import socket
from typing import Any

from clustertwin.errors import Problem, UsageError


def driver_ip(address: str) -> str | None:
    """This host's address on the interface that reaches the Ray head at ``address``
    (``HOST:PORT``); None for ``auto``, a ``ray://`` client address or an unresolvable host."""
    if os.environ.get("RAY_NODE_IP_ADDRESS"):
        return os.environ["RAY_NODE_IP_ADDRESS"]
    if address == "auto" or "://" in address:
        return None
    host, _, port = address.rpartition(":")
    host = host.strip("[]") or address
    try:
        infos = socket.getaddrinfo(host, int(port or 6379), type=socket.SOCK_DGRAM)
    except (OSError, ValueError):
        return None
    for family, kind, proto, _, sockaddr in infos:
        try:
            with socket.socket(family, kind, proto) as s:
                s.connect(sockaddr)  # UDP: picks the route and source address, sends nothing
                return str(s.getsockname()[0])
        except OSError:
            continue
    return None


def connect(ray: Any, address: str | None, workers: int | None, log: Any = None) -> bool:
    """``ray.init`` for a sweep: join ``address`` or start a local Ray with ``workers`` CPUs.
    Returns whether this call started Ray (the caller shuts it down)."""
    if ray.is_initialized():
        return False
    kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                              "configure_logging": False}
    ip = None
    if address:
        kwargs["address"] = address
        ip = driver_ip(address)
        if ip:
            kwargs["_node_ip_address"] = ip
    elif workers:
        kwargs["num_cpus"] = workers
    if log is not None:
        log.ray_address, log.driver_ip = address, ip
    try:
        ray.init(**kwargs)
    except (ConnectionError, RuntimeError, ValueError, OSError) as exc:
        why = str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__
        if address:  # Ray logs an auth refusal but raises a plain connection error
            why += ("; a cluster with token authentication needs this driver to have its "
                    "RAY_AUTH_MODE=token and RAY_AUTH_TOKEN (or RAY_AUTH_TOKEN_PATH)")
        raise UsageError([Problem("--ray-address", address or "local",
                                  f"cannot start or reach Ray: {why}")]) from None
    return True


__all__ = ["connect", "driver_ip"]
