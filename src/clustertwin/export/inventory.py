"""Moved to :mod:`clustertwin.design.site.inventory`; this path re-exports it for existing imports."""

from clustertwin.design.site import inventory as _moved

globals().update({k: v for k, v in vars(_moved).items() if not k.startswith("__")})
