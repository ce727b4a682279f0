"""Running `lakehouse_maintain` and reading its output, for the maintenance tests
(test_maintenance*.py)."""

from __future__ import annotations

import json
import re
from typing import Any

from dbt.tests.util import run_dbt_and_capture

from functional.lakehouse.shared.dbt_output import output_text
from functional.lakehouse.shared.tables import table


def messages(out: str) -> str:
    return "\n".join(
        re.sub(r"^(?:\x1b\[0m)?\d\d:\d\d:\d\d  ", "", line)
        for line in output_text(out).splitlines()
    )


def maintain(args: dict[str, Any], expect_pass: bool = True, dbt_vars: str = "") -> str:
    _, out = run_dbt_and_capture(
        ["run-operation", "lakehouse_maintain", "--args", json.dumps(args)]
        + (["--vars", dbt_vars] if dbt_vars else []),
        expect_pass=expect_pass,
    )
    return messages(out)


def one(project, sql: str) -> tuple:
    return tuple(project.run_sql(sql, fetch="one"))


def snapshot_summary(project, name: str, snapshot: str) -> tuple[int, int, str, str | None]:
    """A snapshot (`main` for main's head): its id, its parent, its operation and the dbt
    invocation that made it (none for a procedure's commit, such as compaction)."""
    ref = f"(select snapshot_id from {table(project, name)}.refs where name = 'main')"
    return one(
        project,
        "select snapshot_id, parent_id, operation, summary['dbt.invocation_id'] "
        f"from {table(project, name)}.snapshots where snapshot_id = "
        + (ref if snapshot == "main" else snapshot),
    )
