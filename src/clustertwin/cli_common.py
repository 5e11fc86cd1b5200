"""Helpers shared by the CLI commands: loading inputs, printing JSON, safe output folders."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

from clustertwin.errors import Problem, UsageError

MANIFEST = ".clustertwin-outputs"


def load_inputs(scenario_path: str | Path | None, catalog_dirs: list[Path] | None = None):  # noqa: ANN201
    """Load the catalog (built-in + user dirs) and the scenario (None = built-in default).

    Returns ``(scenario, catalog)``; raises ScenarioError for the user to fix."""
    from clustertwin.catalog import load_catalog
    from clustertwin.scenario import load_scenario

    catalog = load_catalog(catalog_dirs or [])
    return load_scenario(scenario_path, catalog), catalog


def _clean(o: Any) -> Any:
    """Make an object strict-JSON safe: NaN/inf -> None, tuples -> lists, dates -> ISO."""
    if isinstance(o, float):
        return o if math.isfinite(o) else None
    if isinstance(o, dict):
        return {str(k): _clean(v) for k, v in o.items()}
    if isinstance(o, list | tuple):
        return [_clean(v) for v in o]
    if hasattr(o, "isoformat"):
        return o.isoformat()
    if hasattr(o, "item"):  # numpy scalars
        return _clean(o.item())
    return o


def to_json(obj: Any) -> str:
    return json.dumps(_clean(obj), indent=2, allow_nan=False)


def emit_json(obj: Any) -> None:
    sys.stdout.write(to_json(obj) + "\n")


def safe_out_dir(out: Path, names: list[str], force: bool) -> Path:
    """Create ``out`` and check that writing ``names`` there clobbers nothing we did not write.

    Files we wrote before are listed in a manifest inside the folder; overwriting any other
    existing file needs ``--force``."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise UsageError([Problem(str(out), "--out", "exists and is not a folder")])
    ours: set[str] = set()
    manifest = out / MANIFEST
    if manifest.is_file():
        ours = set(manifest.read_text(encoding="utf-8").split())
    clash = [n for n in names if (out / n).exists() and n not in ours]
    if clash and not force:
        raise UsageError([Problem(str(out / n), "--out", "exists and was not written by clustertwin; "
                                  "pass --force to overwrite or choose another folder") for n in clash])
    out.mkdir(parents=True, exist_ok=True)
    manifest.write_text("\n".join(sorted(ours | set(names))) + "\n", encoding="utf-8")
    return out


def handle_user_errors(func):  # noqa: ANN001, ANN201
    """Decorator for commands: a UserError becomes one stderr line per problem and exit 2."""
    import functools

    @functools.wraps(func)
    def wrapper(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        from clustertwin.errors import UserError

        try:
            return func(*args, **kwargs)
        except UserError as exc:
            import typer

            for line in exc.lines():
                typer.echo(f"error: {line}", err=True)
            raise typer.Exit(2) from None

    return wrapper
