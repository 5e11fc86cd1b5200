"""``clustertwin track SCENARIO --log FILE... [--sacct FILE] [--as-of DATETIME] [--json] [--out DIR]``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from clustertwin.cli.common import CatalogOpt, ScenarioArg, handle_user_errors

if TYPE_CHECKING:
    from clustertwin.track.core import TrackResult

OUT_FILES = ["track.json", "track.html", "measured.json"]


# a command: one parameter per command-line option (typer reads this signature)
def track_cmd(
    scenario: ScenarioArg = None,
    log: Annotated[Optional[list[Path]], typer.Option("--log", help="training log: Megatron-LM/NeMo, torchtitan, HF Trainer (trainer_state.json or logged dicts) or CSV time,step,tokens[,loss]; repeatable")] = None,  # noqa: UP045
    sacct: Annotated[Optional[Path], typer.Option("--sacct", help="the job's 'sacct --duplicates --parsable2' export (State, Start, End, NodeList)")] = None,  # noqa: UP045
    as_of: Annotated[Optional[str], typer.Option("--as-of", help="replay the history up to this date/time (ISO 8601, UTC)")] = None,  # noqa: UP045
    json_out: Annotated[bool, typer.Option("--json", help="print the track document as JSON on stdout")] = False,
    out: Annotated[Optional[Path], typer.Option("--out", help="write track.json, track.html and measured.json (for plan --measured) here")] = None,  # noqa: UP045
    force: Annotated[bool, typer.Option("--force", help="overwrite files in --out that clustertwin did not write")] = False,
    catalog: CatalogOpt = None,
) -> None:
    """Follow the real run: progress, speed, interruptions and their cost against the plan; a
    trained-by forecast that learns the interruption rate; drift flags with the action to take."""
    from clustertwin.cli.common import OutputDir, emit_json, load_inputs, print_rows, to_json
    from clustertwin.errors import Problem, UsageError

    if not log:
        raise UsageError([Problem("--log", "--log", "at least one training log file")])
    from clustertwin.track.records import as_of_time

    when = as_of_time(as_of, "--as-of")
    from clustertwin.track.detect import open_log

    problems = []
    for path in log:  # refuse an unreadable or unknown log before planning
        try:
            open_log(path)
        except UsageError as exc:
            problems += exc.problems
    if sacct is not None:
        from clustertwin.track.slurm import read_sacct

        try:
            read_sacct(sacct)
        except UsageError as exc:
            problems += exc.problems
    if problems:
        raise UsageError(problems)
    folder = OutputDir(out, OUT_FILES, force) if out is not None else None
    scen, cat = load_inputs(scenario, catalog)
    from clustertwin.report import views
    from clustertwin.track.core import track
    from clustertwin.track.report import measured_doc, to_doc

    res = track(scen, cat, list(log), sacct, when)
    doc = to_doc(res)
    from clustertwin.quoting import terminal_text

    skipped = doc["lines"]["skipped"]
    for line in doc["lines"]["bad"][:5]:  # named, never fatal
        typer.echo(f"warning: skipped {terminal_text(line)}", err=True)
    if skipped > 5:
        typer.echo(f"warning: {skipped} lines skipped in all (track.json lines.bad names the first 20 per file)", err=True)
    if folder is not None:
        folder.write_all({"track.json": to_json(doc) + "\n", "track.html": track_page(res),
                          "measured.json": to_json(measured_doc(res, scen, cat)) + "\n"})
    if json_out:
        emit_json(doc)
        return
    # log, sacct and scenario text reaches the terminal as data (no markup, no escape sequences)
    print_rows(f"Tracking {scen.name}", [(k, terminal_text(v, 2000)) for k, v in views.rows(res)])
    if out is not None:
        typer.echo(f"wrote {out / 'track.json'}, {out / 'track.html'} and {out / 'measured.json'}")


def register(app: typer.Typer) -> None:
    app.command("track")(handle_user_errors(track_cmd))


def track_page(res: TrackResult) -> str:
    """track.html: the run's tiles and sections (:mod:`clustertwin.report.views.track`) with the
    drift flags as warnings, offline (plotly.js embedded by ``render_page``)."""
    from clustertwin.report.html import render_page
    from clustertwin.report.views import track as view
    from clustertwin.track.report import to_doc

    doc = to_doc(res)
    headline = {"title": f"Observed vs planned, as of {doc['as_of']}", "tiles": view.tiles(res, doc), "options": None}
    return render_page(f"Tracking: {res.scenario_name or 'training run'}", view.sections(res, doc),
                       subtitle="clustertwin track: the real run against its plan",
                       warnings=[f"{d['metric']}: {d['evidence']}" for d in doc["drift"]], headline=headline)
