"""dbt clone's mode and a zero-copy clone's statements (models/clone.py)."""

from __future__ import annotations

import pytest

from dbt.adapters.lakehouse.models.clone import (
    COPY,
    ZERO_COPY,
    choose_mode,
    is_zero_copy_clone,
    latest_metadata,
    zero_copy_statements,
)

KINDS = {"lakehouse": "rest", "files": "hadoop", "prod": "jdbc"}


def test_zero_copy_within_one_catalog_that_registers_tables():
    mode = choose_mode("lakehouse", "lakehouse", KINDS, {})
    assert mode.mode == ZERO_COPY
    assert choose_mode("prod", "prod", KINDS, {}).mode == ZERO_COPY
    # The embedded lakehouse's catalog has no depot kind recorded: it registers tables (jdbc).
    assert choose_mode("lakehouse", "lakehouse", {}, {}).mode == ZERO_COPY


@pytest.mark.parametrize(
    ("target", "source", "read_only", "why"),
    [
        ("files", "files", {}, "hadoop catalog cannot register"),
        ("lakehouse", "prod", {}, "in catalog `prod` and the clone in `lakehouse`"),
        ("lakehouse", "prod", {"prod": "dataos://prod"}, "dataos://prod is mounted read_only"),
    ],
)
def test_a_copy_where_zero_copy_cannot_be_safe(target, source, read_only, why):
    mode = choose_mode(target, source, KINDS, read_only)
    assert mode.mode == COPY
    assert why in mode.reason


def test_zero_copy_statements_pin_the_source_first_then_own_the_clone():
    statements = zero_copy_statements(
        catalog="lakehouse",
        clone_in_catalog="dev.orders",
        clone_name="`lakehouse`.`dev`.`orders`",
        source_name="`lakehouse`.`prod`.`orders`",
        metadata_file="s3://b/wh/prod/orders/metadata/00003-a.metadata.json",
        snapshot_id=42,
        location="s3://b/wh/dev/orders/",
    )
    assert statements == [
        "alter table `lakehouse`.`prod`.`orders` create or replace tag "
        "`dbt-clone:lakehouse.dev.orders` as of version 42",
        "call `lakehouse`.system.register_table(table => 'dev.orders', metadata_file => "
        "'s3://b/wh/prod/orders/metadata/00003-a.metadata.json')",
        "alter table `lakehouse`.`dev`.`orders` set tblproperties ("
        "'write.metadata.path' = 's3://b/wh/dev/orders/metadata', "
        "'write.data.path' = 's3://b/wh/dev/orders/data', 'gc.enabled' = 'false', "
        "'write.metadata.delete-after-commit.enabled' = 'false', "
        "'dbt-lakehouse.clone-of' = '`lakehouse`.`prod`.`orders`@42')",
        "alter table `lakehouse`.`dev`.`orders` set location 's3://b/wh/dev/orders'",
    ]


def test_an_empty_source_needs_no_tag():
    statements = zero_copy_statements("c", "s.t", "`c`.`s`.`t`", "`c`.`p`.`t`", "m.json", None, "l")
    assert not any("tag" in sql for sql in statements)
    assert "'dbt-lakehouse.clone-of' = '`c`.`p`.`t`'" in statements[1]


def test_latest_metadata_and_shared_files():
    assert latest_metadata([("m2.json", 9), ("m1.json", 8)]) == ("m2.json", 9)
    assert latest_metadata([("m0.json", None)]) == ("m0.json", None)
    with pytest.raises(ValueError):
        latest_metadata([])
    assert is_zero_copy_clone({"dbt-lakehouse.clone-of": "x@1"})
    assert is_zero_copy_clone({"gc.enabled": "false"})
    assert not is_zero_copy_clone({"gc.enabled": "true"})
