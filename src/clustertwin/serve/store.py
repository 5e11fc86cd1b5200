"""Scenarios and plans remembered between server runs: one SQLite file (stdlib ``sqlite3``).

- ``scenarios``: one row per saved scenario, a stable random id (the share link ``/s/<id>``),
  its name, unique within a project folder (the folder ``serve`` runs in).
- ``versions``: every save of a scenario: the YAML as written (comments kept), the plan JSON
  when it planned, who saved it (the local user) and when (UTC, ISO 8601).
- ``drafts``: the editor's unsaved form per browser (a random cookie id) and page, so a reload
  keeps an edit; the oldest beyond :data:`MAX_DRAFTS` are dropped.

The default file is ``$XDG_DATA_HOME/clustertwin/serve.sqlite3`` (``~/.local/share/...``);
``serve --db PATH`` names another, ``:memory:`` keeps nothing (the tests' app).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import sqlite3
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

MAX_DRAFTS = 500  #: unsaved forms kept (the most recent)
MAX_DRAFT_CHARS = 256_000  #: a larger form is not kept as a draft
MAX_SCENARIOS = 2000  #: saved scenarios per project folder
MAX_VERSIONS = 500  #: versions of one scenario
MAX_TEXT_CHARS = 512_000  #: one saved YAML
MAX_VERSIONS_SHOWN = 50
ID_RE = re.compile(r"[A-Za-z0-9_-]{8,32}")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS scenarios (
  id TEXT PRIMARY KEY, project TEXT NOT NULL, name TEXT NOT NULL, created TEXT NOT NULL,
  UNIQUE (project, name));
CREATE TABLE IF NOT EXISTS versions (
  scenario_id TEXT NOT NULL REFERENCES scenarios(id), version INTEGER NOT NULL,
  yaml TEXT NOT NULL, plan_json TEXT, who TEXT NOT NULL, at TEXT NOT NULL,
  PRIMARY KEY (scenario_id, version));
CREATE TABLE IF NOT EXISTS drafts (
  client TEXT NOT NULL, place TEXT NOT NULL, form TEXT NOT NULL, at TEXT NOT NULL,
  PRIMARY KEY (client, place));
"""


def default_db() -> Path:
    """``$XDG_DATA_HOME/clustertwin/serve.sqlite3`` (``~/.local/share`` when unset)."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "clustertwin" / "serve.sqlite3"


def local_user() -> str:
    import getpass

    try:
        return getpass.getuser()[:64] or "unknown"
    except (KeyError, OSError):  # no name for this uid (a container)
        return f"uid {os.getuid()}" if hasattr(os, "getuid") else "unknown"


def _now() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat()


@dataclass(frozen=True)
class Version:
    scenario_id: str
    name: str
    version: int
    yaml: str
    who: str
    at: str
    plan_json: str | None = None


class StoreFull(Exception):
    """A save past one of the store's bounds (the message says which)."""


class NameTaken(Exception):
    """A save under a name the project already has, without saying overwrite or rename."""

    def __init__(self, name: str, suggested: str) -> None:
        super().__init__(name)
        self.name, self.suggested = name, suggested


class Store:
    def __init__(self, path: str | Path = ":memory:", project: str | None = None, user: str | None = None) -> None:
        self.path = str(path)
        self.project = project or str(Path.cwd().resolve())
        self.user = user or local_user()
        self._lock = threading.Lock()
        try:
            if self.path != ":memory:":
                Path(path).parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            self._db.executescript(_SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            from clustertwin.errors import Problem, UsageError

            raise UsageError([Problem("--db", self.path[:200], f"cannot open it as the server's SQLite "
                                      f"database ({exc}); give another --db PATH")]) from None

    def _q(self, sql: str, args: tuple[Any, ...] = ()) -> list[Any]:
        with self._lock:
            return self._db.execute(sql, args).fetchall()

    def _id_of(self, name: str) -> str | None:
        rows = self._q("SELECT id FROM scenarios WHERE project=? AND name=?", (self.project, name))
        return rows[0][0] if rows else None

    def free_name(self, name: str) -> str:
        """``name`` or the first of ``name-2``, ``name-3``, ... that this project lacks."""
        n, out = 2, name
        while self._id_of(out) is not None and n < 10_000:
            out, n = f"{name}-{n}", n + 1
        return out

    def save(self, name: str, text: str, plan: dict[str, Any] | None = None,
             on_conflict: str = "ask") -> Version:
        """A new version of ``name`` (a new scenario when the project has none by that name).
        ``on_conflict``: ``ask`` raises :class:`NameTaken` when the name exists, ``overwrite``
        adds a version to it, ``rename`` saves under the first free ``name-N``."""
        sid = self._id_of(name)
        if sid is not None and on_conflict == "rename":
            name, sid = self.free_name(name), None
        elif sid is not None and on_conflict != "overwrite":
            raise NameTaken(name, self.free_name(name))
        body = json.dumps(plan, sort_keys=True) if plan is not None else None
        if len(text) > MAX_TEXT_CHARS:
            raise StoreFull(f"the scenario's YAML has {len(text):,} characters; at most {MAX_TEXT_CHARS:,} are saved")
        if sid is None and self._q("SELECT COUNT(*) FROM scenarios WHERE project=?", (self.project,))[0][0] >= MAX_SCENARIOS:
            raise StoreFull(f"this project has {MAX_SCENARIOS:,} saved scenarios, the most kept")
        at = _now()
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                if sid is None:
                    sid = secrets.token_urlsafe(12)
                    self._db.execute("INSERT INTO scenarios VALUES (?,?,?,?)", (sid, self.project, name, at))
                n = self._db.execute("SELECT COALESCE(MAX(version),0)+1 FROM versions WHERE scenario_id=?",
                                     (sid,)).fetchone()[0]
                if n > MAX_VERSIONS:
                    raise StoreFull(f"{name!r} has {MAX_VERSIONS} versions, the most kept; save it under a new name")
                self._db.execute("INSERT INTO versions VALUES (?,?,?,?,?,?)", (sid, n, text, body, self.user, at))
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        return Version(sid, name, n, text, self.user, at, body)

    def get(self, sid: str, version: int | None = None) -> Version | None:
        """The latest (or the given) version of the scenario with id ``sid``."""
        if not ID_RE.fullmatch(sid):
            return None
        sql = ("SELECT s.id, s.name, v.version, v.yaml, v.who, v.at, v.plan_json FROM scenarios s "
               "JOIN versions v ON v.scenario_id = s.id WHERE s.id=?")
        args: tuple[Any, ...] = (sid,)
        if version is not None:
            sql, args = sql + " AND v.version=?", (sid, version)
        rows = self._q(sql + " ORDER BY v.version DESC LIMIT 1", args)
        return Version(*rows[0]) if rows else None

    def history(self, sid: str) -> list[Version]:
        """The scenario's versions, newest first (without their YAML)."""
        rows = self._q("SELECT s.id, s.name, v.version, '', v.who, v.at FROM scenarios s JOIN versions v "
                       "ON v.scenario_id = s.id WHERE s.id=? ORDER BY v.version DESC LIMIT ?",
                       (sid, MAX_VERSIONS_SHOWN))
        return [Version(*r) for r in rows]

    def latest(self) -> list[Version]:
        """Every scenario of this project at its latest version, by name."""
        rows = self._q("SELECT s.id, s.name, v.version, v.yaml, v.who, v.at FROM scenarios s JOIN versions v "
                       "ON v.scenario_id = s.id WHERE s.project=? AND v.version = (SELECT MAX(version) "
                       "FROM versions WHERE scenario_id = s.id) ORDER BY s.name", (self.project,))
        return [Version(*r) for r in rows]

    def put_draft(self, client: str, place: str, form: dict[str, str]) -> None:
        if sum(len(k) + len(v) for k, v in form.items()) > MAX_DRAFT_CHARS:
            return  # too large to keep: the reload shows the page as saved
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO drafts VALUES (?,?,?,?)",
                             (client, place, json.dumps(form), _now()))
            self._db.execute("DELETE FROM drafts WHERE rowid NOT IN (SELECT rowid FROM drafts "
                             "ORDER BY rowid DESC LIMIT ?)", (MAX_DRAFTS,))

    def draft(self, client: str, place: str) -> dict[str, str] | None:
        rows = self._q("SELECT form FROM drafts WHERE client=? AND place=?", (client, place))
        return json.loads(rows[0][0]) if rows else None

    def drop_draft(self, client: str, place: str) -> None:
        self._q("DELETE FROM drafts WHERE client=? AND place=?", (client, place))

    def close(self) -> None:
        with self._lock:
            self._db.close()
