"""``python -m clustertwin``: the command line, as the ``clustertwin`` console script runs it."""

from clustertwin.cli.main import entry

entry()
