"""The package's own YAML files, parsed once per content (cold start, issue 25).

Every command reads the built-in catalog, design rules and build-out step book: about 200 KB of
YAML whose Python-level construction is a tenth of a cold ``plan``. :func:`load` keeps each
file's parsed document as JSON in a cache folder, one entry per file (a new content replaces
the old entry), keyed by a hash of the file's bytes and of the parser
(:func:`clustertwin.io.read_packaged` passes its module's source and the PyYAML version), so an
edited file, a changed number rule or another PyYAML parses afresh. JSON, not pickle: reading
an entry runs no code. A document JSON cannot hold exactly is checked on the way in and simply
not cached. Dates are held as ``{"$date": "YYYY-MM-DD"}``, a mapping with other than text keys
(step numbers) as ``{"$map": [[key, value], ...]}``.

The folder is ``$CLUSTERTWIN_CACHE_DIR`` (``off`` or empty: no cache), else
``$XDG_CACHE_HOME/clustertwin`` or ``~/.cache/clustertwin``. A folder that cannot be written
is no error: the file is parsed as it would be without a cache. Only packaged files go through
here; a user's scenario or catalog is always read afresh with every check of
:func:`clustertwin.io.read_document`.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: bumped when the entries' form changes
FORMAT = b"clustertwin-datacache-1"
ENV = "CLUSTERTWIN_CACHE_DIR"
#: an entry's name: the parsed file's stem, then its key
_ENTRY = re.compile(r"([A-Za-z0-9_.]+)-[0-9a-f]{32}\.json")


def cache_dir() -> Path | None:
    """The cache folder, or None when caching is off."""
    value = os.environ.get(ENV)
    if value is not None:
        return None if value.strip().lower() in ("", "off", "0", "none") else Path(value)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "clustertwin"


def load(path: Path, parse: Callable[[str], Any], parser_id: bytes) -> Any:
    """``parse(text)`` of the file at ``path``, from the cache when this content was parsed
    before by the parser ``parser_id`` names (its source, its library's version)."""
    raw = path.read_bytes()
    folder = cache_dir()
    if folder is None:
        return parse(raw.decode("utf-8"))
    key = hashlib.sha256(FORMAT + hashlib.sha256(parser_id).digest() + raw).hexdigest()[:32]
    entry = folder / f"{path.stem}-{key}.json"
    try:
        return _decode(json.loads(entry.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError, KeyError):
        pass
    doc = parse(raw.decode("utf-8"))
    _store(entry, doc)
    return doc


def _store(entry: Path, doc: Any) -> None:
    """Write ``doc`` to ``entry`` atomically when JSON holds it exactly; never raise."""
    try:
        text = json.dumps(_encode(doc), separators=(",", ":"), allow_nan=False)
        if _decode(json.loads(text)) != doc:
            return
    except (ValueError, TypeError):
        return
    save_entry(entry, text, _ENTRY)


def save_entry(entry: Path, text: str, names: re.Pattern[str]) -> None:
    """Write ``text`` to ``entry`` atomically (a temporary file, then a rename), then remove
    the entries the same source's earlier contents left: the folder's names that ``names``
    matches whole with the same first group (the part before the key). Never raises: a folder
    that cannot be written only costs the next run the parse. :mod:`clustertwin.modelcache`
    keeps its entries through here too."""
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        tmp = entry.with_name(f".{entry.name}.{os.getpid()}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, entry)
    except OSError:
        return
    mine = names.fullmatch(entry.name)
    stem = mine.group(1) if mine else None
    for old in entry.parent.glob(f"{stem}-*") if stem else ():
        same = names.fullmatch(old.name)
        if old != entry and same and same.group(1) == stem:
            try:
                old.unlink()
            except OSError:
                pass


def _encode(o: Any) -> Any:
    if isinstance(o, dict):
        if all(isinstance(k, str) and not k.startswith("$") for k in o):
            return {k: _encode(v) for k, v in o.items()}
        return {"$map": [[_encode(k), _encode(v)] for k, v in o.items()]}
    if isinstance(o, list):
        return [_encode(v) for v in o]
    if isinstance(o, dt.datetime):
        raise TypeError("a timestamp")
    if isinstance(o, dt.date):
        return {"$date": o.isoformat()}
    if o is None or isinstance(o, str | bool | int | float):
        return o
    raise TypeError(type(o).__name__)


def _decode(o: Any) -> Any:
    if isinstance(o, dict):
        if len(o) == 1 and "$date" in o:
            return dt.date.fromisoformat(o["$date"])
        if len(o) == 1 and "$map" in o:
            return {_decode(k): _decode(v) for k, v in o["$map"]}
        return {k: _decode(v) for k, v in o.items()}
    if isinstance(o, list):
        return [_decode(v) for v in o]
    return o
