"""docs/contract.md lists plan-JSON keys scripts rely on; each one it names must be in the plan
the default scenario makes (a key renamed in the code, or mistyped in the document, fails)."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "contract.md"
BLOCKS = ("training", "design", "reliability", "economics", "buildout", "decision")


def _expand(cell: str) -> list[str]:
    """`a.b.c`, `.d`, `_p5` shorthand of a table cell -> full dotted keys."""
    names = re.findall(r"`([a-z0-9_.]+)`", cell)
    if not names or not names[0].startswith(BLOCKS):
        return []
    first, out = names[0], [names[0]]
    for n in names[1:]:
        if n.startswith("."):
            out.append(first.rsplit(".", 1)[0] + n)
        elif n.startswith("_"):
            out.append(first.rsplit("_", 1)[0] + n)
        elif n.startswith(BLOCKS):
            out.append(n)
    return out


def plan_keys_in_doc() -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    part = text[text.index("## 2."):text.index("## 3.")]
    keys: list[str] = []
    for line in part.splitlines():
        if line.startswith("| `"):
            keys += _expand(line.split("|")[1])
    return keys


@lru_cache(maxsize=1)
def _plan() -> dict:
    from clustertwin.catalog import load_catalog
    from clustertwin.plan import make_plan
    from clustertwin.scenario import DEFAULT_SCENARIO, load_scenario

    cat = load_catalog()
    return make_plan(load_scenario(DEFAULT_SCENARIO, cat), cat).to_dict()


def _has(doc: dict, key: str) -> bool:
    node = doc
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


def test_the_document_names_the_keys() -> None:
    keys = plan_keys_in_doc()
    assert len(keys) > 50 and "training.days" in keys and "design.fabric.spine" in keys
    assert "reliability.interruptions_p95" in keys and "buildout.go_live_days_p90" in keys


@pytest.mark.parametrize("key", plan_keys_in_doc())
def test_key_is_in_the_default_plan(key) -> None:
    assert _has(_plan(), key), f"docs/contract.md names {key}, the plan has no such key"


def test_decision_option_keys() -> None:
    text = DOC.read_text(encoding="utf-8")
    row = next(ln for ln in text.splitlines() if ln.startswith("| `decision.options` |"))
    listed = re.search(r"per route: `([^`]+)`", row).group(1).replace(" ", "").split(",")
    assert len(listed) >= 10
    for option in _plan()["decision"]["options"]:
        assert set(listed) <= set(option), set(listed) - set(option)
