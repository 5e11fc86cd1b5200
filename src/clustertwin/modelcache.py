"""The package's own data, validated once per content (cold start, issue 36).

Building the pydantic validators of the catalog's 27 entry kinds costs more than everything a
cold ``plan`` then does with the catalog (~0.1 s of ~0.75 s). Those validators only ever check
files that ship with the package (the built-in catalog, the build-out step book and profiles,
the design rules) besides a user's own ``--catalog`` folder. :func:`load` keeps the validated
result of such a file set in the cache folder of :mod:`clustertwin.datacache`, keyed by

* the bytes of the files it was built from,
* the source of the modules the result's classes come from, and of every ``clustertwin``
  module those modules reach through their globals (the validators and what they call),
* the Python and pydantic versions,

so an edited file, a changed validator or another pydantic builds afresh. The models are
declared with ``defer_build`` (:mod:`clustertwin.checked`), so a class whose instances come
from here never builds its validator at all; a user's file still goes through it.

An entry is JSON, read with a hook that rebuilds tuples, dates, mappings with other than text
keys and models (through pydantic's own ``__setstate__``, as unpickling does); a model class is
looked up only among ``clustertwin`` modules already imported. Reading an entry runs no code,
unlike a pickle. A value holding any other type (an enum, a set, a model with private
attributes) is not cached; each stored entry is checked to decode equal to what was built
(type for type: ``==`` tells a tuple from a list, JSON an int from a float). A folder that
cannot be written is no error: the result is built as it would be without a cache.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

from clustertwin.datacache import cache_dir, save_entry

T = TypeVar("T")
#: bumped when the entries' form changes
FORMAT = b"clustertwin-modelcache-1"
_PACKAGE = "clustertwin"
#: an entry's name: the name given to :func:`load`, then its key
_ENTRY = re.compile(r"([A-Za-z0-9_]+)-[0-9a-f]{32}\.models\.json")


def load(name: str, files: Sequence[Path], build: Callable[[], T], code: Iterable[Any]) -> T:
    """``build()``, from the cache when the same ``files`` were validated before by the same
    code; ``code`` names it: the model classes the result holds and the function that builds
    it (the key covers their modules and every ``clustertwin`` module those reach)."""
    folder = cache_dir()
    if folder is None:
        return build()
    try:
        raws = [Path(p).read_bytes() for p in files]
    except OSError:
        return build()
    entry = folder / f"{name}-{_key(raws, code)}.models.json"
    try:
        return json.loads(entry.read_text(encoding="utf-8"), object_hook=_decode)
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        pass
    value = build()
    _store(entry, value)
    return value


def _key(raws: list[bytes], code: Iterable[Any]) -> str:
    import pydantic

    h = hashlib.sha256(FORMAT)
    h.update(f"{sys.version}\0{pydantic.VERSION}\0".encode())
    for raw in raws:
        h.update(hashlib.sha256(raw).digest())
    for mod in sorted(code_modules(code), key=lambda m: m.__name__):
        h.update(mod.__name__.encode() + b"\0")
        h.update(hashlib.sha256(Path(mod.__file__ or "").read_bytes()).digest())
    return h.hexdigest()[:32]


def code_modules(code: Iterable[Any]) -> set[ModuleType]:
    """The modules of ``code`` (classes, functions) and every ``clustertwin`` module reachable
    from them through module globals (imported modules, and the modules of imported functions
    and classes)."""
    seen: set[str] = set()
    todo = [c.__module__ for c in code]
    while todo:
        name = todo.pop()
        if name in seen or not (name == _PACKAGE or name.startswith(_PACKAGE + ".")):
            continue
        mod = sys.modules.get(name)
        if mod is None:
            continue
        seen.add(name)
        for value in vars(mod).values():
            ref = value.__name__ if isinstance(value, ModuleType) else getattr(value, "__module__", None)
            if isinstance(ref, str) and ref not in seen:
                todo.append(ref)
    return {sys.modules[n] for n in seen}


def _store(entry: Path, value: Any) -> None:
    """Write ``value`` to ``entry`` when it round-trips exactly; never raise."""
    try:
        text = json.dumps(_encode(value), separators=(",", ":"), allow_nan=False)
        if json.loads(text, object_hook=_decode) != value:
            return
    except (ValueError, TypeError, KeyError, AttributeError, RecursionError):
        return
    save_entry(entry, text, _ENTRY)


def _encode(o: Any) -> Any:
    from pydantic import BaseModel

    t = type(o)
    if o is None or t in (str, int, float, bool):
        return o
    if t is list:
        return [_encode(v) for v in o]
    if t is tuple:
        return {"$t": [_encode(v) for v in o]}
    if t is dict:
        if all(type(k) is str and not k.startswith("$") for k in o):
            return {k: _encode(v) for k, v in o.items()}
        return {"$d": [[_encode(k), _encode(v)] for k, v in o.items()]}
    if t is dt.date:
        return {"$date": o.isoformat()}
    if isinstance(o, BaseModel) and o.__pydantic_private__ is None and o.__pydantic_extra__ is None:
        if not t.__module__.startswith(_PACKAGE + "."):
            raise TypeError(f"a model from {t.__module__}")
        return {"$m": f"{t.__module__}:{t.__qualname__}", "f": _encode(dict(o.__dict__)),
                "s": sorted(o.__pydantic_fields_set__)}
    raise TypeError(t.__name__)


def _decode(d: dict) -> Any:
    if len(d) == 1:
        if "$t" in d:
            return tuple(d["$t"])
        if "$d" in d:
            return {k: v for k, v in d["$d"]}
        if "$date" in d:
            return dt.date.fromisoformat(d["$date"])
    if "$m" in d and len(d) == 3:
        cls = _model_class(d["$m"])
        obj = cls.__new__(cls)
        obj.__setstate__({"__dict__": d["f"], "__pydantic_fields_set__": set(d["s"]),
                          "__pydantic_extra__": None, "__pydantic_private__": None})
        return obj
    return d


def _model_class(ref: str) -> type:
    """The model class ``module:qualname`` names: a pydantic model of an already imported
    ``clustertwin`` module (never an import)."""
    from pydantic import BaseModel

    module, _, qualname = ref.partition(":")
    mod = sys.modules.get(module) if module.startswith(_PACKAGE + ".") else None
    if mod is None:
        raise KeyError(ref)
    obj: Any = mod
    for part in qualname.split("."):
        obj = getattr(obj, part)
    if not (isinstance(obj, type) and issubclass(obj, BaseModel)):
        raise TypeError(ref)
    return obj
