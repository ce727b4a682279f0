"""A `grants:` config is reported once per run and catalog, never applied (models/grants.py)."""

from __future__ import annotations

from dbt.adapters.lakehouse.engine.diagnosis import CatalogContext
from dbt.adapters.lakehouse.engine.spec import CatalogMount
from dbt.adapters.lakehouse.models.grants import grants_warning

CATALOGS = (
    CatalogMount(
        "lakehouse", "'prod' (depots file)", context=CatalogContext("lakehouse", "rest", "prod")
    ),
    CatalogMount("raw", "'raw' (depots file)", context=CatalogContext("raw", "glue", "raw")),
)


def test_once_per_run_and_catalog_naming_the_catalog_and_where_access_lives():
    first = grants_warning(
        "run-1", "`lakehouse`.`s`.`a`", "lakehouse", {"select": ["x", "y"]}, CATALOGS
    )
    assert first is not None
    assert first.startswith("grants (select to x, y) on `lakehouse`.`s`.`a` were not applied: ")
    assert "catalog `lakehouse` (rest, depot 'prod' (depots file)) takes no grants" in first
    assert "the REST catalog server's own roles and privileges" in first
    assert (
        grants_warning("run-1", "`lakehouse`.`s`.`b`", "lakehouse", {"select": ["x"]}, CATALOGS)
        is None
    )
    other = grants_warning("run-1", "`raw`.`s`.`c`", "raw", {"select": "x"}, CATALOGS)
    assert other is not None and "AWS Lake Formation" in other and "(select to x)" in other
    assert grants_warning("run-2", "`lakehouse`.`s`.`a`", "lakehouse", {"select": ["x"]}, CATALOGS)


def test_no_grants_no_warning_and_an_unknown_catalog_is_still_named():
    assert grants_warning("run-3", "t", "lakehouse", {}, CATALOGS) is None
    assert grants_warning("run-3", "t", "lakehouse", None, CATALOGS) is None
    text = grants_warning("run-3", "`elsewhere`.`s`.`t`", "elsewhere", {"select": ["x"]}, CATALOGS)
    assert text is not None and "catalog `elsewhere` takes no grants" in text
