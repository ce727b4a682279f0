"""Engine errors read against where their SQL came from: the config a column Spark cannot
resolve was written in, and Spark's logical plans kept off the console.

The engine texts are Spark 3.5's own, captured from a merge with a mistyped column in
`incremental_predicates` and a snapshot with one in `check_cols`.
"""

from __future__ import annotations

from dbt.adapters.lakehouse.engine.diagnosis import CatalogContext, explain_engine_error
from dbt.adapters.lakehouse.engine.sql_origin import (
    config_sql,
    explain_config_column,
    unresolved_column,
    without_plans,
)

MERGE_ERROR = (
    "[UNRESOLVED_COLUMN.WITH_SUGGESTION] A column or function parameter with name "
    "`DBT_INTERNAL_DEST`.`updatd_at` cannot be resolved. Did you mean one of the following? "
    "[`DBT_INTERNAL_DEST`.`updated_at`, `DBT_INTERNAL_DEST`.`amount`].; line 7 pos 9;\n"
    "'MergeIntoTable (((amount#84 > 0) AND ('DBT_INTERNAL_DEST.updatd_at > 2020-01-01))), []\n"
    ":- SubqueryAlias DBT_INTERNAL_DEST\n"
    ":  +- RelationV2[id#83, amount#84] lakehouse.s.inc lakehouse.s.inc\n"
    "+- SubqueryAlias DBT_INTERNAL_SOURCE\n"
    "   +- View (`s__inc__dbt_tmp`, [id#59,amount#60])\n"
    "      +- LogicalRDD [id#59, amount#60], false"
)
SNAPSHOT_ERROR = (
    "[UNRESOLVED_COLUMN.WITH_SUGGESTION] A column or function parameter with name `amout` "
    "cannot be resolved. Did you mean one of the following? [`amount`, `id`].; line 3 pos 23;\n"
    "'GlobalLimit 0\n"
    "+- 'LocalLimit 0\n"
    "   +- 'Project [*]\n"
    "      +- 'Filter false\n"
    "  caused by: java.lang.RuntimeException: after the plan"
)


def test_the_plan_leaves_the_message_and_the_causes_stay() -> None:
    shown = without_plans(SNAPSHOT_ERROR)
    assert "GlobalLimit" not in shown and "Project [*]" not in shown
    assert shown.splitlines()[0] == SNAPSHOT_ERROR.splitlines()[0]
    assert shown.endswith("caused by: java.lang.RuntimeException: after the plan")
    merge = without_plans(MERGE_ERROR)
    assert merge == MERGE_ERROR.splitlines()[0]


def test_text_without_a_plan_is_unchanged() -> None:
    text = "Some error; with a semicolon;\nFix: do this.\n  caused by: x"
    assert without_plans(text) == text


def test_unresolved_column_parts_and_suggestions() -> None:
    parts, suggestions = unresolved_column(MERGE_ERROR)  # type: ignore[misc]
    assert parts == ["DBT_INTERNAL_DEST", "updatd_at"]
    assert suggestions is not None and "`DBT_INTERNAL_DEST`.`updated_at`" in suggestions
    assert unresolved_column("[TABLE_OR_VIEW_NOT_FOUND] nope") is None


def test_the_config_holding_the_column_is_named() -> None:
    noted = config_sql(
        {
            "unique_key": "id",
            "incremental_predicates": [
                "DBT_INTERNAL_DEST.amount > 0",
                "DBT_INTERNAL_DEST.updatd_at > '2020-01-01'",
            ],
            "latest_by": None,
        }
    )
    assert "latest_by" not in noted
    message = explain_config_column(MERGE_ERROR, noted)
    assert message is not None
    assert "config `incremental_predicates`" in message
    assert "DBT_INTERNAL_DEST.updatd_at > '2020-01-01'" in message
    assert "`DBT_INTERNAL_DEST`.`updated_at`" in message
    check_cols = config_sql({"check_cols": ["amount", "amout"]})
    snapshot = explain_config_column(SNAPSHOT_ERROR, check_cols)
    assert snapshot is not None and "config `check_cols`" in snapshot and "'amout'" in snapshot


def test_a_column_no_config_names_is_left_to_spark() -> None:
    # `amount` is a prefix of nothing here and `amout` is in no config: no attribution.
    assert explain_config_column(SNAPSHOT_ERROR, config_sql({"check_cols": ["amount"]})) is None
    # Qualified by another alias: not this config's column.
    assert explain_config_column(MERGE_ERROR, config_sql({"p": "src.updatd_at > 1"})) is None
    assert explain_config_column(MERGE_ERROR, {}) is None


def test_a_missing_hadoop_warehouse_is_not_an_empty_namespace_name() -> None:
    text = "org.apache.iceberg.exceptions.NoSuchNamespaceException: Namespace does not exist: "
    catalogs = {"lakehouse": CatalogContext("lakehouse", "hadoop", "filelake", default=True)}
    message = explain_engine_error(text, None, catalogs)
    assert message is not None
    assert "hadoop catalog `lakehouse` of depot 'filelake'" in message
    assert "warehouse folder does not exist" in message
    named = "org.apache.iceberg.exceptions.NoSuchNamespaceException: Namespace does not exist: s"
    assert explain_engine_error(named, None, catalogs) is None
