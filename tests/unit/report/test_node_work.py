"""A node's commits summed for its adapter_response: rows per statement kind as Iceberg's
snapshot summaries tell them (unknown stays unknown), files and bytes, the console's code and
rows, and the attribution tags."""

from __future__ import annotations

import pytest

from dbt.adapters.lakehouse.iceberg.lineage import commit_kind
from dbt.adapters.lakehouse.report import work
from dbt.adapters.lakehouse.report.response import response_fields
from dbt.adapters.lakehouse.report.spark_jobs import JobsDone
from dbt.adapters.lakehouse.report.tags import job_description, query_tags, tag_problems
from dbt.adapters.lakehouse.report.timing import StatementTime
from dbt.adapters.lakehouse.report.work import Commit, NodeWork


def commit(kind: str, operation: str = "overwrite", **summary: int) -> Commit:
    figures = {k.replace("_", "-").replace("spark-merge-into-", "spark.merge-into."): str(v)
               for k, v in summary.items()}  # fmt: skip
    return Commit("`c`.`s`.`t`", 7, operation, kind, figures)


MERGED = {"spark_merge_into_num_target_rows_inserted": 2,
          "spark_merge_into_num_target_rows_updated": 3,
          "spark_merge_into_num_target_rows_deleted": 1}  # fmt: skip


@pytest.mark.parametrize(
    "made, rows",
    [
        (commit("create", "append", added_records=10), (10, 0, 0)),
        (commit("insert", "append", added_records=4), (4, 0, 0)),
        (commit("overwrite", added_records=3, deleted_records=8), (3, 0, 8)),
        # copy-on-write: the rows kept are rewritten, counted both ways
        (commit("delete", added_records=5, deleted_records=7), (0, 0, 2)),
        (commit("delete", "delete", added_position_deletes=3), (0, 0, 3)),  # merge-on-read
        (commit("delete", "delete", deleted_records=6), (0, 0, 6)),  # whole files
        (commit("merge", added_records=9, deleted_records=4, **MERGED), (2, 3, 1)),
        (commit("merge", added_records=9, deleted_records=4), (None, None, None)),  # Spark 3.5
        (commit("update", added_records=2, added_position_deletes=2), (0, 2, 0)),
        (commit("update", added_records=9, deleted_data_files=1), (None, None, None)),
    ],
)
def test_rows_per_statement_kind(made: Commit, rows: tuple) -> None:
    found = made.rows()
    assert (found["inserted"], found["updated"], found["deleted"]) == rows


def test_a_nodes_commits_add_up_and_an_unknown_stays_unknown() -> None:
    delete_insert = NodeWork([commit("delete", added_records=5, deleted_records=7,
                                     added_data_files=1, deleted_data_files=1,
                                     added_files_size=100),
                              commit("insert", "append", added_records=4, added_data_files=2,
                                     added_files_size=50)])  # fmt: skip
    assert delete_insert.rows() == {"inserted": 4, "updated": 0, "deleted": 2}
    assert delete_insert.files() == {"files_added": 3, "files_removed": 1, "bytes_written": 150}
    unknown = NodeWork([commit("merge"), commit("insert", "append", added_records=1)])
    assert unknown.rows() == {"inserted": None, "updated": None, "deleted": None}


def test_the_console_code_counts_what_the_user_would_call_changed() -> None:
    merged = NodeWork([commit("merge", **MERGED)])
    fields = response_fields("MERGE", merged, JobsDone(3, 1.23456))
    assert fields["_message"] == "MERGE 6" and fields["rows_affected"] == 6
    assert (fields["rows_inserted"], fields["rows_updated"], fields["rows_deleted"]) == (2, 3, 1)
    assert fields["spark_jobs"] == 3 and fields["spark_seconds"] == 1.235
    # No statement timed, no job span: the engine took none of the node's wall time.
    assert (fields["planning_seconds"], fields["jobs_seconds"], fields["catalog_seconds"]) == (
        0.0, 0.0, 0.0,
    )  # fmt: skip
    merged.statements.append(StatementTime(0, 3_000, commits=True, phases=((0, 1_000),)))
    timed = response_fields("MERGE", merged, JobsDone(3, 1.2, ((2_000, 2_500),)))
    assert (timed["planning_seconds"], timed["jobs_seconds"], timed["catalog_seconds"]) == (
        2.0, 0.5, 0.5,
    )  # fmt: skip
    assert fields["snapshots"] == [
        {"table": "`c`.`s`.`t`", "snapshot_id": 7, "operation": "overwrite", "statement": "merge"}
    ]
    big = NodeWork([commit("overwrite", added_records=1234, deleted_records=99)])
    assert response_fields("OVERWRITE", big, None)["_message"] == "OVERWRITE 1,234"
    assert "spark_jobs" not in response_fields("OVERWRITE", big, None)  # Connect: absent
    assert "planning_seconds" not in response_fields("OVERWRITE", big, None)  # nor the split
    unknown = response_fields("MERGE", NodeWork([commit("merge")]), None)
    assert unknown["_message"] == "MERGE" and unknown["rows_affected"] is None
    # A seed counts its own rows; nothing committed: no commit figures at all.
    seed = response_fields("INSERT", NodeWork(), JobsDone(1, 0.5), rows_given=12)
    assert seed["_message"] == "INSERT 12" and "rows_inserted" not in seed
    assert response_fields("CLONE", NodeWork(), None, message="CLONE copy")["_message"] == (
        "CLONE copy"
    )


def test_a_merge_that_rewrites_its_target_counts_replaced_rows_as_updated() -> None:
    # A materialized view's 1,000 groups regrouped with 40 new ones by INSERT OVERWRITE.
    folded = NodeWork([commit("overwrite", added_records=1040, deleted_records=1000)])
    fields = response_fields("MERGE", folded, None)
    assert fields["_message"] == "MERGE 1,040"
    assert (fields["rows_inserted"], fields["rows_updated"], fields["rows_deleted"]) == (
        40,
        1000,
        0,
    )
    # The same commit under any other code is what it is: rows inserted and rows deleted.
    assert response_fields("OVERWRITE", folded, None)["rows_deleted"] == 1000


def test_work_is_kept_per_invocation_and_node_and_taken_once() -> None:
    work.record("inv-1", "model.p.a", commit("insert", "append", added_records=1))
    work.record("inv-2", "model.p.a", commit("insert", "append", added_records=2))
    assert work.take("inv-1", "model.p.a").rows()["inserted"] == 1
    assert work.take("inv-1", "model.p.a").commits == []
    assert work.take("inv-2", "model.p.a").rows()["inserted"] == 2


@pytest.mark.parametrize(
    "statement, kind",
    [
        ("/* dbt */ insert overwrite table `c`.`s`.`t` select 1", "overwrite"),
        ("-- q\ninsert into `c`.`s`.`t` select 1", "insert"),
        ("create or replace table t as select 1", "create"),
        ("merge into t using s on t.id = s.id when matched then delete", "merge"),
        ("delete from t where x", "delete"),
    ],
)
def test_the_kind_of_a_committing_statement(statement: str, kind: str) -> None:
    assert commit_kind(statement) == kind


def test_tags_from_the_profile_and_the_environment() -> None:
    env = {"LAKEHOUSE_QUERY_TAGS": "team=ops, job=nightly,bad"}
    assert query_tags({"team": "finance", "cost_center": 42}, env) == (
        "cost_center=42,job=nightly,team=ops"
    )
    assert query_tags(None, {}) is None
    assert job_description("model.p.m", "abc", "team=ops") == (
        "dbt model.p.m (invocation abc) [team=ops]"
    )
    assert tag_problems({"team": "x"}) == []
    assert tag_problems(["team"]) and tag_problems({"a=b": "x"})
