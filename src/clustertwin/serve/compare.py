"""The compare page: pick saved scenarios, see their plans side by side, differences highlighted.

Rows are the plan documents flattened with dots (the keys ``sweep.csv`` uses). The headline keys
come first; then every key whose values differ (highlighted); ``all=1`` adds the equal ones.
"""

from __future__ import annotations

from typing import Any

from clustertwin.errors import UserError

MAX_PICKS = 6


def _shown(v: Any) -> str:
    from clustertwin.serve.answer import fmt

    if isinstance(v, float):
        return fmt(v, "")
    return "" if v is None else str(v)


def compare_rows(docs: list[dict[str, Any]], show_all: bool) -> list[dict[str, Any]]:
    """``[{key, cells, diff}]``: headline keys, then differing keys (then the rest if asked)."""
    from clustertwin.serve.answer import HEADLINE, label_for
    from clustertwin.sweep.table import flatten

    flat = [flatten(d) for d in docs]
    keys: list[str] = []
    for f in flat:
        keys += [k for k in f if k not in keys]
    heads = [k for k, _, _ in HEADLINE if any(k in f for f in flat)]
    rows = []
    for key in heads + [k for k in keys if k not in heads]:
        values = [f.get(key) for f in flat]
        diff = len({repr(v) for v in values}) > 1
        if key in heads or diff or show_all:
            rows.append({"key": key, "label": label_for(key, ""), "cells": [_shown(v) for v in values],
                         "diff": diff})
    return rows


async def _plan_all(runner: Any, texts: list[tuple[str, str]]) -> tuple[list[dict[str, Any]], list[str]]:
    from clustertwin.serve.engine import doc_from_yaml

    docs, errors = [], []
    for name, text in texts:
        try:
            answer, problems = await runner.plan_or_problems(doc_from_yaml(text, name), name)
        except UserError as exc:
            answer, problems = None, list(exc.problems)
        errors += [str(p) for p in problems]
        docs.append(answer.doc if answer is not None else {})
    return docs, errors


async def compare(request: Any) -> Any:
    """GET /compare?pick=NAME&pick=NAME[&all=1]: names from the saved scenarios only."""
    from clustertwin.serve.render import html

    st = request.app.state
    picks = [n for n in request.query_params.getlist("pick") if st.library.get(n)][:MAX_PICKS]
    show_all = request.query_params.get("all") == "1"
    rows, errors = [], []
    if picks:
        texts = [(n, st.library.get(n).text) for n in picks]
        docs, errors = await _plan_all(st.runner, texts)
        rows = compare_rows(docs, show_all)
    return html("compare.html.j2", title="clustertwin compare", saved=st.library.items.values(),
                picks=picks, rows=rows, errors=errors, show_all=show_all,
                ndiff=sum(r["diff"] for r in rows))
