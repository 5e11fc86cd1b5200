"""Property: any document, however mangled, is either accepted or rejected with a ScenarioError."""

from __future__ import annotations

import copy

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clustertwin.errors import ScenarioError
from clustertwin.scenario import scenario_from_dict

scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**14), st.floats(allow_nan=True),
                    st.text(max_size=12), st.sampled_from(["auto", "bf16", "h100-sxm-80gb", "1e12", "-1"]))
values = st.recursive(scalars, lambda c: st.one_of(st.lists(c, max_size=3), st.dictionaries(st.text(max_size=8), c, max_size=3)),
                      max_leaves=6)


def _paths(d, prefix=()):
    if isinstance(d, dict):
        for k, v in d.items():
            yield (*prefix, k)
            yield from _paths(v, (*prefix, k))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_mutated_documents_never_crash(default_doc, catalog, data):
    doc = copy.deepcopy(default_doc)
    paths = list(_paths(doc))
    for _ in range(data.draw(st.integers(1, 4))):
        path = data.draw(st.sampled_from(paths))
        parent = doc
        for k in path[:-1]:
            parent = parent.get(k) if isinstance(parent, dict) else None
            if parent is None:
                break
        if not isinstance(parent, dict):
            continue
        action = data.draw(st.sampled_from(["set", "delete", "add"]))
        if action == "set":
            parent[path[-1]] = data.draw(values)
        elif action == "delete":
            parent.pop(path[-1], None)
        else:
            parent[data.draw(st.text(max_size=6))] = data.draw(values)
    try:
        scenario_from_dict(doc, "fuzz.yaml", catalog)
    except ScenarioError as exc:
        assert exc.lines() and all(line.startswith("fuzz.yaml") for line in exc.lines())


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(doc=values)
def test_random_documents_never_crash(catalog, doc):
    try:
        scenario_from_dict(doc, "rand.yaml", catalog)
    except ScenarioError:
        pass


@settings(max_examples=150, deadline=None)
@given(text=st.text(max_size=200))
def test_random_yaml_text_never_crashes(text):
    from clustertwin.io import parse_text

    try:
        parse_text(text, "t.yaml")
    except ScenarioError as exc:
        assert len(exc.lines()) == 1 and exc.lines()[0].startswith("t.yaml")


# --------------------------------------------------------------------------- every reader, raw bytes
# (issue 15) whatever the bytes, a reader returns or raises a UserError whose lines each name the
# file and fit on one line: never another exception, never a hang.

def _one_line_errors(exc, name: str) -> None:
    lines = exc.lines()
    assert lines
    for line in lines:
        assert "\n" not in line and name in line


HOSTILE_FRAGMENTS = st.sampled_from([
    "a: 1\n", "a: 1\na: 2\n", "x: !!timestamp foo\n", "x: !!float abc\n", "x: !!int 0x1g\n",
    "x: " + "9" * 4400 + "\n", "x: 1e-320\n", "x: .nan\n", "x: -.inf\n", "d: 2027-02-30\n",
    "[" * 100 + "]" * 100 + "\n", "- " * 100 + "x\n", "a: &a [*a]\n", "? [a]\n: 1\n", "x: yes\n",
    "cluster:\n  gpus: 9223372036854775807\n", "\t", "%YAML 1.1\n---\n", "--- a\n--- b\n", "\x00",
    "x: !!python/object/apply:os.system [ls]\n", "x: !!binary xx\n", "x: *nope\n",
])


@settings(max_examples=150, deadline=None)
@given(raw=st.binary(max_size=300), toml=st.booleans())
def test_read_document_raw_bytes(tmp_path_factory, raw: bytes, toml: bool) -> None:
    from clustertwin.io import read_document

    p = tmp_path_factory.mktemp("raw") / ("f.toml" if toml else "f.yaml")
    p.write_bytes(raw)
    try:
        read_document(p)
    except ScenarioError as exc:
        _one_line_errors(exc, str(p))


@settings(max_examples=150, deadline=None)
@given(parts=st.lists(HOSTILE_FRAGMENTS, min_size=1, max_size=4))
def test_hostile_yaml_documents(parts: list[str]) -> None:
    from clustertwin.io import parse_text

    try:
        parse_text("".join(parts), "h.yaml")
    except ScenarioError as exc:
        _one_line_errors(exc, "h.yaml")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=st.one_of(st.binary(max_size=300), st.lists(HOSTILE_FRAGMENTS, max_size=3).map(lambda x: "".join(x).encode())))
def test_catalog_file_raw_bytes(tmp_path_factory, raw: bytes) -> None:
    from clustertwin.catalog import load_catalog

    d = tmp_path_factory.mktemp("cat")
    (d / "x.yaml").write_bytes(raw)
    try:
        load_catalog([d])
    except ScenarioError as exc:
        _one_line_errors(exc, str(d))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_catalog_entries_with_hostile_values(tmp_path_factory, catalog, data) -> None:
    """A built-in entry with fields replaced by NaN, inf, negatives, booleans, huge numbers:
    refused with the key, or accepted only with finite values."""
    import math

    import yaml

    from clustertwin.catalog import load_catalog

    kind = data.draw(st.sampled_from(["gpu", "node", "switch", "costs", "failure_profile"]))
    entry = data.draw(st.sampled_from(catalog.all(kind))).model_dump(mode="json", exclude_none=True)
    for key in data.draw(st.lists(st.sampled_from(sorted(entry)), min_size=1, max_size=3)):
        entry[key] = data.draw(st.sampled_from([math.nan, math.inf, -1, 0, True, 2**70, 1e-320, "x", None]))
    d = tmp_path_factory.mktemp("cat")
    (d / "x.yaml").write_text(yaml.safe_dump({kind: [entry]}))
    try:
        got = load_catalog([d]).get(kind, str(entry["id"]))
    except ScenarioError as exc:
        _one_line_errors(exc, str(d))
        return
    for v in got.model_dump().values():
        if isinstance(v, float):
            assert math.isfinite(v)


@settings(max_examples=100, deadline=None)
@given(text=st.text(alphabet=st.characters(codec="utf-8"), max_size=400),
       kind=st.sampled_from(["nccl", "dcgm", "burnin", "ibnet"]))
def test_measured_result_readers_raw_text(text: str, kind: str) -> None:
    """The measured-result importers of ``check`` (nccl-tests, DCGM, burn-in, ibnetdiscover)."""
    import importlib

    from clustertwin.errors import UserError

    mod = importlib.import_module(f"clustertwin.acceptance.importers.{kind}")
    parse = mod.parse_text if kind == "nccl" else mod.parse
    try:
        parse(text, "m.log")
    except UserError as exc:
        _one_line_errors(exc, "m.log")


HOSTILE = ["\n", "\r", "\u2028", "\u2029", "\x85", "\x00", "\x1b[31m", "$(id)", "`id`", "'", '"',
           "SlurmctldHost=evil", "<script>", "\u202e", "\ud800", "a", "-"]
hostile_text = st.lists(st.sampled_from(HOSTILE), min_size=1, max_size=8).map("".join)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_hostile_text_in_any_string_field_is_accepted_or_one_clean_line(default_doc, catalog, data):
    """issue 19: a name, id or choice holding line breaks, escapes or shell syntax is either a
    valid value (free text: the name) or an error whose every line is one printable line."""
    doc = copy.deepcopy(default_doc)
    strings = [p for p in _paths(doc) if isinstance(_get(doc, p), str)]
    path = data.draw(st.sampled_from(strings))
    _get(doc, path[:-1])[path[-1]] = data.draw(hostile_text)
    try:
        s = scenario_from_dict(doc, "fuzz.yaml", catalog)
    except ScenarioError as exc:
        for line in exc.lines():
            assert line.isprintable() and len(line.splitlines()) == 1, line
        return
    assert path == ("name",), f"{path} accepted {_get(doc, path)!r}"
    assert s.name == doc["name"]


def _get(doc, path):
    for k in path:
        doc = doc[k]
    return doc
