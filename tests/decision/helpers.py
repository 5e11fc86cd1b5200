"""The decision tests' shared scenario: the default cluster training Llama-3-405B on 15.6T
tokens, starting 2027-01-05 with a 2028-06-30 target."""

from __future__ import annotations

import copy
import datetime as dt

START, TARGET = dt.date(2027, 1, 5), dt.date(2028, 6, 30)


def decision_doc(default_doc: dict, **decision) -> dict:
    """The default scenario document with the 405B token count, START and TARGET, and
    ``decision`` keys added."""
    d = copy.deepcopy(default_doc)
    d["training"]["tokens"] = 15.6e12
    d["buildout"] = {**d.get("buildout", {}), "start_date": START.isoformat()}
    d["decision"] = {"target_date": TARGET.isoformat(), **decision}
    return d
