"""A reused dual-format table (docs/reuse.md, docs/delta.md): its Delta log still
follows `main` when an earlier mirror failed, so Delta readers are not left behind while the
node is reused."""

from __future__ import annotations

from typing import Any

import pytest
from dbt.tests.util import run_dbt

from dbt.adapters.lakehouse.delta_mirror import sync as deltasync
from functional.lakehouse.shared.delta_readers import APP_ID, DeltaReaders, describe, main_snapshot

MODEL_SQL = (
    "{{ config(materialized='table', table_formats=['iceberg', 'delta']) }}\n"
    "select id, name from values (1, 'a'), (2, 'b') as t(id, name)"
)


# The mirror's logic is the same on every storage (test_delta_format.py runs it on both).
@pytest.mark.only_profile("local")
class TestReusedTableCatchesUpItsDeltaLog:
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"dual.sql": MODEL_SQL}

    def test_failed_mirror_then_reused_run_catches_up(
        self, project: Any, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        def always_fail(*args: Any, **kwargs: Any) -> int:
            raise OSError("injected: the object store went away")

        # The build commits to Iceberg; its mirror fails (a warning: the run stays green).
        monkeypatch.setattr(deltasync, "commit", always_fail)
        run_dbt(["run"])
        built = main_snapshot(project, "dual")
        uri = describe(project, "dual")[1]
        readers = DeltaReaders(None)
        monkeypatch.undo()

        results = run_dbt(["run"])
        assert [r.status for r in results] == ["reused"], [r.message for r in results]
        assert main_snapshot(project, "dual") == built  # no Iceberg commit
        # ... and yet the Delta log now mirrors the snapshot the table stands at.
        assert readers.handle(uri).transaction_version(APP_ID) == built
        assert readers.delta_rs_rows(uri, ["id", "name"]) == [(1, "a"), (2, "b")]
