"""The command line: one module per command (``plan``, ``design``, ``export``, ...), the options
they share (:mod:`clustertwin.cli.common`) and the app with its entry point
(:mod:`clustertwin.cli.main`). The stages below never import it."""

from clustertwin.cli.main import app, entry, main

__all__ = ["app", "entry", "main"]
