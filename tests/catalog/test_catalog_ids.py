"""Catalog files are validated like scenarios (issue 19): every id, and every field that names
another entry, is an identifier (clustertwin.quoting.IDENT_RE); a bad one is one error line."""

from __future__ import annotations

import pytest
import yaml

from clustertwin.catalog import load_catalog
from clustertwin.errors import ScenarioError

EVIL = ["h100\nSlurmctldHost=evil", "h100\u2028x", "h100$(id)", "h\u0430100", "", "-x",
        "a" * 65, "x y"]


@pytest.fixture(scope="module")
def builtin():
    return load_catalog()


@pytest.mark.parametrize("bad", EVIL)
def test_a_user_catalog_id_outside_the_pattern_is_one_error_line(bad, tmp_path, builtin):
    gpu = builtin.gpu("h100-sxm-80gb").model_dump(mode="json", exclude_none=True)
    gpu["id"] = bad
    (tmp_path / "g.yaml").write_text(yaml.safe_dump({"gpu": [gpu]}))
    with pytest.raises(ScenarioError) as info:
        load_catalog([tmp_path])
    (line,) = info.value.lines()
    assert "g.yaml" in line and ".id" in line and "catalog id" in line


@pytest.mark.parametrize("field", ["switch", "fiber_cable"])
def test_a_reference_to_another_entry_must_be_an_identifier(field, tmp_path, builtin):
    fab = builtin.fabric("ib-ndr").model_dump(mode="json", exclude_none=True)
    fab[field] = "cable,1\nx"
    (tmp_path / "f.yaml").write_text(yaml.safe_dump({"fabric": [fab]}))
    with pytest.raises(ScenarioError) as info:
        load_catalog([tmp_path])
    assert any(field in ln for ln in info.value.lines())


def test_every_builtin_id_is_an_identifier(builtin):
    from clustertwin.quoting import IDENT_RE

    ids = [i for k in builtin.kinds() for i in builtin.ids(k)]
    assert ids and all(IDENT_RE.fullmatch(i) for i in ids)
