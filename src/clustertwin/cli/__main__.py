"""``python -m clustertwin.cli``: the console entry point."""

from clustertwin.cli.main import entry

entry()
