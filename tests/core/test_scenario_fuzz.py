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
