"""dbt-tests-adapter `hooks/` suite: pre- and post-hooks on models, seeds and snapshots, and
on-run-start/end hooks.

Overrides are data only, each for the same reason: the suite is written for Postgres.
- Its hook tables (`data/seed_model.sql`, `data/seed_run.sql`, read from beside the suite) are
  created with TEXT columns: `spark_sql` (test_snapshot.py) spells them STRING.
- It reads them back selecting `"test_state", ...`: in Spark SQL a double-quoted word is a
  string literal, not a column, so the same columns are named with backquotes.
- It expects the Postgres target's values (`dbname` dbt, `type` postgres, `user` root): this
  adapter's target has no dbname, host or user, which hooks render as empty strings, and its
  type is lakehouse. Every other assertion (state, name, schema, threads, run_started_at,
  invocation_id, thread_id, row counts) is the suite's own.
- Its transaction-less hooks run Postgres's `vacuum`: Spark SQL has no VACUUM for Iceberg
  tables; `refresh table` on the same table is Spark's statement that likewise touches the
  table without changing its rows.
- `select null::int` (a seed hook) is spelled `cast(null as int)`; `create table ... (schema
  text)` (a run hook) is spelled with STRING.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from dbt.tests.adapter.hooks import fixtures
from dbt.tests.adapter.hooks.test_model_hooks import (
    MODEL_POST_HOOK,
    MODEL_PRE_HOOK,
    BaseDuplicateHooksInConfigs,
    BaseHookRefs,
    BaseHooksRefsOnSeeds,
    BasePrePostModelHooks,
    BasePrePostModelHooksInConfig,
    BasePrePostModelHooksInConfigKwargs,
    BasePrePostModelHooksInConfigWithCount,
    BasePrePostModelHooksOnSeeds,
    BasePrePostModelHooksOnSeedsPlusPrefixed,
    BasePrePostModelHooksOnSeedsPlusPrefixedWhitespace,
    BasePrePostModelHooksOnSnapshots,
    BasePrePostSnapshotHooksInConfigKwargs,
)
from dbt.tests.adapter.hooks.test_run_hooks import BaseAfterRunHooks, BasePrePostRunHooks

from functional.adapter.test_snapshot import spark_sql

# SQL semantics, the same on every catalog and store: `local` only (docs/tests.md).
pytestmark = pytest.mark.only_profile("local")

_SUITE_DATA = Path(fixtures.__file__).parent / "data"
_FIELDS = [
    "test_state",
    "target_dbname",
    "target_host",
    "target_name",
    "target_schema",
    "target_threads",
    "target_type",
    "target_user",
    "target_pass",
    "run_started_at",
    "invocation_id",
    "thread_id",
]
# Spark's statement for the suite's transaction-less `vacuum` of the hook table.
_NO_TRANSACTION_HOOK = {
    "sql": "refresh table {{ this.schema }}.on_model_hook",
    "transaction": False,
}


def _suite_sql(name: str) -> str:
    return spark_sql((_SUITE_DATA / name).read_text())


def _select_hook_rows(project, table: str, state: str) -> list[dict]:
    columns = ", ".join(f"`{f}`" for f in _FIELDS)
    query = f"select {columns} from {project.test_schema}.{table} where test_state = '{state}'"
    return [dict(zip(_FIELDS, row, strict=True)) for row in project.run_sql(query, fetch="all")]


def _check_target(ctx: dict, state: str, project) -> None:
    assert ctx["test_state"] == state
    # This adapter's target has no dbname, host or user: hooks render them empty.
    assert ctx["target_dbname"] == ""
    assert ctx["target_host"] == ""
    assert ctx["target_name"] == "default"
    assert ctx["target_schema"] == project.test_schema
    assert ctx["target_threads"] == 4
    assert ctx["target_type"] == "lakehouse"
    assert ctx["target_user"] == ""
    assert ctx["target_pass"] == ""
    assert ctx["run_started_at"] is not None and len(ctx["run_started_at"]) > 0
    assert ctx["invocation_id"] is not None and len(ctx["invocation_id"]) > 0


class _SparkModelHookTable:
    @pytest.fixture(scope="class", autouse=True)
    def setUp(self, project):
        project.run_sql(_suite_sql("seed_model.sql"))

    def get_ctx_vars(self, state, count, project):
        vals = _select_hook_rows(project, "on_model_hook", state)
        assert len(vals) != 0, "nothing inserted into hooks table"
        assert len(vals) >= count, "too few rows in hooks table"
        assert len(vals) <= count, "too many rows in hooks table"
        return vals

    def check_hooks(self, state, project, host, count=1):
        for ctx in self.get_ctx_vars(state, count=count, project=project):
            _check_target(ctx, state, project)
            assert ctx["thread_id"].startswith("Thread-")


def _model_hooks_config(pre: str, post: str) -> dict:
    return {
        "models": {
            "test": {
                pre: [MODEL_PRE_HOOK, _NO_TRANSACTION_HOOK],
                post: [_NO_TRANSACTION_HOOK, MODEL_POST_HOOK],
            }
        }
    }


class TestPrePostModelHooks(_SparkModelHookTable, BasePrePostModelHooks):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return _model_hooks_config("pre-hook", "post-hook")


class TestPrePostModelHooksUnderscores(_SparkModelHookTable, BasePrePostModelHooks):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return _model_hooks_config("pre_hook", "post_hook")


class TestHookRefs(_SparkModelHookTable, BaseHookRefs):
    pass


_SEED_HOOKS = [
    "alter table {{ this }} add column new_col int",
    "update {{ this }} set new_col = 1",
    # call any macro to track dependency: https://github.com/dbt-labs/dbt-core/issues/6806
    "select cast(null as {{ dbt.type_int() }}) as id",
]


class TestPrePostModelHooksOnSeeds(BasePrePostModelHooksOnSeeds):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {
            "seed-paths": ["seeds"],
            "models": {},
            "seeds": {"post-hook": _SEED_HOOKS, "quote_columns": False},
        }


class TestHooksRefsOnSeeds(BaseHooksRefsOnSeeds):
    pass


class TestPrePostModelHooksOnSeedsPlusPrefixed(BasePrePostModelHooksOnSeedsPlusPrefixed):
    pass


class TestPrePostModelHooksOnSeedsPlusPrefixedWhitespace(
    BasePrePostModelHooksOnSeedsPlusPrefixedWhitespace
):
    pass


class TestPrePostModelHooksOnSnapshots(BasePrePostModelHooksOnSnapshots):
    pass


class TestPrePostModelHooksInConfig(_SparkModelHookTable, BasePrePostModelHooksInConfig):
    pass


class TestPrePostModelHooksInConfigWithCount(
    _SparkModelHookTable, BasePrePostModelHooksInConfigWithCount
):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return _model_hooks_config("pre-hook", "post-hook")


class TestPrePostModelHooksInConfigKwargs(
    _SparkModelHookTable, BasePrePostModelHooksInConfigKwargs
):
    pass


class TestPrePostSnapshotHooksInConfigKwargs(BasePrePostSnapshotHooksInConfigKwargs):
    pass


class TestDuplicateHooksInConfigs(BaseDuplicateHooksInConfigs):
    pass


class TestPrePostRunHooks(BasePrePostRunHooks):
    @pytest.fixture(scope="function")
    def setUp(self, project):
        project.run_sql(_suite_sql("seed_run.sql"))
        project.run_sql(f"drop table if exists {project.test_schema}.schemas")
        project.run_sql(f"drop table if exists {project.test_schema}.db_schemas")
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("TERM_TEST", "TESTING")
            yield

    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {
            "on-run-start": [
                "{{ custom_run_hook('start', target, run_started_at, invocation_id) }}",
                "create table {{ target.schema }}.start_hook_order_test ( id int )",
                "drop table {{ target.schema }}.start_hook_order_test",
                "{{ log(env_var('TERM_TEST'), info=True) }}",
            ],
            "on-run-end": [
                "{{ custom_run_hook('end', target, run_started_at, invocation_id) }}",
                "create table {{ target.schema }}.end_hook_order_test ( id int )",
                "drop table {{ target.schema }}.end_hook_order_test",
                "create table {{ target.schema }}.schemas ( schema string )",
                "insert into {{ target.schema }}.schemas (schema) values {% for schema in schemas %}( '{{ schema }}' ){% if not loop.last %},{% endif %}{% endfor %}",  # noqa: E501
                "create table {{ target.schema }}.db_schemas ( db string, schema string )",
                "insert into {{ target.schema }}.db_schemas (db, schema) values {% for db, schema in database_schemas %}('{{ db }}', '{{ schema }}' ){% if not loop.last %},{% endif %}{% endfor %}",  # noqa: E501
            ],
            "seeds": {"quote_columns": False},
        }

    def get_ctx_vars(self, state, project):
        vals = _select_hook_rows(project, "on_run_hook", state)
        assert len(vals) != 0, "nothing inserted into on_run_hook table"
        assert len(vals) == 1, "too many rows in hooks table"
        return vals[0]

    def check_hooks(self, state, project, host):
        ctx = self.get_ctx_vars(state, project)
        _check_target(ctx, state, project)
        assert ctx["thread_id"].startswith("Thread-") or ctx["thread_id"] == "MainThread"


class TestAfterRunHooks(BaseAfterRunHooks):
    pass
