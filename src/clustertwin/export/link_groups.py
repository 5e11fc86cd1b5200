"""Moved to :mod:`clustertwin.design.site.link_groups`; this path re-exports it for existing imports."""

from clustertwin.design.site import link_groups as _moved

globals().update({k: v for k, v in vars(_moved).items() if not k.startswith("__")})
