"""Spark Connect (profile `connect`): dbt runs against a Connect server (`sc://127.0.0.1:<port>`,
infra/connect.py) with no JVM in this process. A project with a seed, a table, a view, an
incremental merge, a snapshot and tests is built on a first run, a rerun and a
`--full-refresh`, with exact rows each time; docs stats come from the same metadata through SQL.
What needs the driver's JVM here is refused before anything is written, with the reason; the
depot's secrets, sent as session conf, stay out of the server's log and dbt's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from dbt.tests.util import run_dbt, run_dbt_and_capture

from dbt.adapters.lakehouse.engine.connect import ICEBERG_EXTENSIONS
from functional.infra.connect import ConnectServer
from functional.infra.processes import listening_addresses
from functional.lakehouse.shared.dbt_output import output_text
from functional.lakehouse.shared.tables import expect, rows, table

SEED_CSV = "id,name,amount\n1,alpha,10.5\n2,beta,20.0\n3,gamma,30.25\n"

PEOPLE_SQL = """
{{ config(materialized='table', partition_by=['bucket(2, id)']) }}
select id, upper(name) as name, amount from {{ ref('people_seed') }}
"""

BIG_SPENDERS_SQL = """
{{ config(materialized='view') }}
select id, name from {{ ref('people') }} where amount > 15
"""

# Each run merges the seed's rows by id and adds a row keyed by the number of rows already
# there: the same three ids every time, so the rows never depend on the run history.
TOTALS_SQL = """
{{ config(materialized='incremental', incremental_strategy='merge', unique_key='id') }}
select id, amount * 2 as doubled from {{ ref('people_seed') }}
"""

SNAPSHOT_SQL = """
{% snapshot people_snapshot %}
{{ config(target_schema=schema, unique_key='id', strategy='check', check_cols=['name']) }}
select id, name from {{ ref('people_seed') }}
{% endsnapshot %}
"""

SCHEMA_YML = """
version: 2
models:
  - name: people
    columns:
      - name: id
        data_tests: [unique, not_null]
"""

TABLE_SQL = "{{ config(materialized='table') }} select 1 as id"

DUAL_SQL = """
{{ config(materialized='table', table_formats=['iceberg', 'delta']) }}
select 1 as id
"""


def _child_dbt(project, target_changes: dict, *args: str) -> subprocess.CompletedProcess[str]:
    """`dbt <args>` in a fresh process, on the test's profile target with `target_changes`."""
    data = yaml.safe_load((Path(project.profiles_dir) / "profiles.yml").read_text())
    target = data["test"]["outputs"]["default"]
    for key, value in target_changes.items():
        if isinstance(value, dict):
            target[key] = {**target.get(key, {}), **value}
        else:
            target[key] = value
    changed_dir = Path(project.project_root) / "changed_profiles"
    changed_dir.mkdir(exist_ok=True)
    (changed_dir / "profiles.yml").write_text(yaml.safe_dump(data))
    return subprocess.run(
        [str(Path(sys.executable).with_name("dbt")), *args, "--profiles-dir", str(changed_dir)],
        cwd=project.project_root,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _clones() -> bool:
    from pyspark.sql.connect.session import SparkSession as ConnectSession

    return hasattr(ConnectSession, "cloneSession")


# Whether this PySpark's Connect client clones sessions (4.1: commits carry lineage there).
CLONES = _clones()


def _no_jvm_here() -> bool:
    from pyspark import SparkContext

    return SparkContext._gateway is None and SparkContext._active_spark_context is None


@pytest.mark.only_profile("connect")
class TestConnectProject:
    @pytest.fixture(scope="class")
    def seeds(self) -> dict[str, str]:
        return {"people_seed.csv": SEED_CSV}

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {
            "people.sql": PEOPLE_SQL,
            "big_spenders.sql": BIG_SPENDERS_SQL,
            "totals.sql": TOTALS_SQL,
            "schema.yml": SCHEMA_YML,
        }

    @pytest.fixture(scope="class")
    def snapshots(self) -> dict[str, str]:
        return {"people_snapshot.sql": SNAPSHOT_SQL}

    def _check_rows(self, project) -> None:
        expect(
            rows(project, "people"),
            [(1, "ALPHA", 10.5), (2, "BETA", 20.0), (3, "GAMMA", 30.25)],
        )
        # A view: read as is (REFRESH TABLE has no plan for an Iceberg view).
        view = project.run_sql(f"select * from {table(project, 'big_spenders')}", fetch="all")
        expect(sorted((tuple(r) for r in view), key=repr), [(2, "BETA"), (3, "GAMMA")])
        expect(rows(project, "totals"), [(1, 21.0), (2, 40.0), (3, 60.5)])
        expect(
            rows(project, "people_snapshot", "id, name, dbt_valid_to is null"),
            [(1, "alpha", True), (2, "beta", True), (3, "gamma", True)],
        )

    def test_build_rerun_full_refresh_and_docs(self, project, connect_server):
        for args in (["build"], ["build"], ["build", "--full-refresh"]):
            results = run_dbt(args)
            # seed, 3 models, snapshot, 2 tests
            assert len(results) == 7, args
            self._check_rows(project)
        assert _no_jvm_here(), "a JVM was started in the dbt process under sc://"
        views = project.run_sql(
            f"show views in `{project.database}`.`{project.test_schema}`", fetch="all"
        )
        # (Temporary views of the session's other work are listed too: the third column.)
        assert [r[1] for r in views if not r[2]] == ["big_spenders"], views

        run_dbt(["docs", "generate"])
        catalog = json.loads((Path(project.project_root) / "target" / "catalog.json").read_text())
        people = next(n for k, n in catalog["nodes"].items() if k.endswith(".people"))
        stats = people["stats"]
        # The table's rows and files come from its current snapshot, read through SQL.
        count = stats.get("row_count") or stats.get("row_count_at_most")
        assert count is not None and count["value"] == 3, stats
        assert stats["has_stats"]["value"] is True

    def test_commits_name_their_run_and_node_on_four_threads(self, project):
        """Commit lineage through a clone's session conf (iceberg/lineage.py): on 4 threads,
        each table's commits name its own node, and the shared session holds none's. A client
        that cannot clone (PySpark 3.5) says once that lineage is off, and commits without."""
        from dbt.adapters.lakehouse.engine import connect
        from dbt.adapters.lakehouse.engine.lifecycle import ENGINE
        from dbt.adapters.lakehouse.iceberg import lineage

        shared = ENGINE.active
        if shared is not None:  # said once per session: this process's first time forgotten
            vars(shared).pop("_lakehouse_lineage_off", None)
        _, out = run_dbt_and_capture(["run", "--select", "people", "totals"])
        said_off = "commit lineage is off for this session" in out
        assert said_off is not CLONES, out
        for name in ("people", "totals"):
            summaries = project.run_sql(
                f"select summary['{lineage.NODE_KEY}'] from {table(project, name)}.snapshots "
                "order by committed_at desc limit 1",
                fetch="all",
            )
            assert summaries[0][0] == (f"model.test.{name}" if CLONES else None), summaries
        # The session dbt's threads share never held a node's entries: each commit ran on a
        # clone of it, which a cancel interrupts with the connection.
        shared = ENGINE.active
        assert bool(connect.commit_sessions(shared).last) is CLONES
        key = lineage.SNAPSHOT_PROPERTY_PREFIX + lineage.NODE_KEY
        assert shared.conf.get(key, None) is None

    def test_reuse_decides_from_the_servers_explain(self, project, monkeypatch):
        """A seed's record is its CSV's content, a view's its stored definition, and a query's
        inputs, determinism and digest come from the server's EXPLAIN (reuse/connect_inputs.py):
        with nothing moved, every node is reused, data tests from the store the last build wrote.
        Without clones (PySpark 3.5) no commit carries a record: only the view is reused. An
        upstream written outside dbt rebuilds its readers; tests of a moved table run again."""
        monkeypatch.setenv("LAKEHOUSE_REUSE", "on")
        run_dbt(["build"])
        run_dbt(["build"])  # the incremental model's first incremental run
        results = run_dbt(["build"])
        reasons = {r.node.name: r.adapter_response.get("reuse_reason") for r in results.results}
        statuses = {r.node.name: str(r.status) for r in results.results}
        assert statuses["big_spenders"] == "reused", reasons
        if not CLONES:
            no_record = "not reusable: this session's commits carry no record"
            for name in ("people_seed", "people", "totals", "people_snapshot"):
                assert (reasons[name] or "").startswith(no_record), reasons
            self._check_rows(project)
            return
        for name in ("people_seed", "people", "totals", "people_snapshot"):
            assert statuses[name] == "reused", reasons
        tests = [n for n in statuses if n.startswith(("unique_", "not_null_"))]
        # A reused data test passes as its recorded result did, its response saying reused.
        reused = {r.node.name: r.adapter_response.get("reused") for r in results.results}
        assert tests and all(reused[n] is True and statuses[n] == "pass" for n in tests), reasons
        # A comment and layout edit is no change: the digest takes the SQL without them.
        model = Path(project.project_root) / "models" / "totals.sql"
        model.write_text(TOTALS_SQL.replace("select ", "-- doubled\nselect  ", 1) + "/* ok */\n")
        try:
            edited = run_dbt(["run", "--select", "totals"]).results[0]
            assert str(edited.status) == "reused", edited.adapter_response
        finally:
            model.write_text(TOTALS_SQL)
        self._check_rows(project)
        project.run_sql(f"insert into {table(project, 'people_seed')} values (9, 'z', 1.0)")
        moved = run_dbt(["run", "--select", "people"]).results[0]
        assert "people_seed moved" in moved.adapter_response["reuse_reason"], moved
        assert (9, "Z", 1.0) in rows(project, "people")
        built = run_dbt(["build"]).results  # the seed's table holds a commit not its build's
        # `people` was built again since: its tests run again, and pass.
        ran = {r.node.name: (r.adapter_response.get("reused"), str(r.status)) for r in built}
        assert all(ran[n][0] is not True and ran[n][1] == "pass" for n in tests), ran
        self._check_rows(project)
        # A column dropped and added again under the same name and type: a new field, no new
        # snapshot, no change in the plan's text. The scan's schema id tells it: built again.
        seed_table = table(project, "people_seed")
        [kind] = [
            r[1] for r in project.run_sql(f"describe {seed_table}", fetch="all") if r[0] == "amount"
        ]
        project.run_sql(f"alter table {seed_table} drop column amount")
        project.run_sql(f"alter table {seed_table} add column amount {kind}")
        altered = run_dbt(["run", "--select", "people"]).results[0]
        assert str(altered.status) == "success", altered.adapter_response
        expect(rows(project, "people", "id, amount"), [(1, None), (2, None), (3, None)])
        run_dbt(["seed", "--full-refresh"])
        run_dbt(["build"])
        self._check_rows(project)
        # A seed whose CSV changed is built again.
        seed = Path(project.project_root) / "seeds" / "people_seed.csv"
        seed.write_text(SEED_CSV.replace("gamma", "delta"))
        try:
            again = run_dbt(["seed"])
            assert str(again.results[0].status) == "success", again.results[0].adapter_response
            expect(
                rows(project, "people_seed", "id, name"),
                [(1, "alpha"), (2, "beta"), (3, "delta")],
            )
        finally:
            seed.write_text(SEED_CSV)
            run_dbt(["seed"])


MV_SQL = """
{{ config(materialized='materialized_view') }}
select id % 2 as odd, sum(amount) as total from {{ ref('people_seed') }} group by 1
"""


@pytest.mark.only_profile("connect")
class TestConnectMaterializedView:
    """Under Spark Connect a view's record is read through the metadata tables: nothing moved,
    nothing refreshed; an upstream moved, a full refresh with the new rows (no plan to check an
    incremental one here)."""

    @pytest.fixture(scope="class")
    def seeds(self) -> dict[str, str]:
        return {"people_seed.csv": SEED_CSV}

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"totals_mv.sql": MV_SQL}

    def test_nothing_moved_then_an_upstream_moved(self, project):
        run_dbt(["build"])
        expect(rows(project, "totals_mv"), [(0, 20.0), (1, 40.75)])
        _, out = run_dbt_and_capture(["run"])
        assert "nothing refreshed" in output_text(out)
        project.run_sql(f"insert into {table(project, 'people_seed')} values (4, 'd', 1.0)")
        results = run_dbt(["run"])
        assert results.results[0].adapter_response["code"] == "REFRESH"
        expect(rows(project, "totals_mv"), [(0, 21.0), (1, 40.75)])


CHANGES_SQL = """
{{ config(materialized='incremental', unique_key='id') }}
select * from {{ lakehouse.changes(ref('plain')) }}
"""


@pytest.mark.only_profile("connect")
class TestConnectRefusals:
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"dual.sql": DUAL_SQL, "plain.sql": TABLE_SQL, "changes.sql": CHANGES_SQL}

    def test_dual_format_refused_before_writing(self, project):
        _, out = run_dbt_and_capture(["run", "--select", "dual"], expect_pass=False)
        text = output_text(out)
        assert "not available under Spark Connect" in text
        assert "dual-format" in text
        listed = project.run_sql(
            f"show tables in `{project.database}`.`{project.test_schema}` like 'dual'",
            fetch="all",
        )
        assert listed == [], "the refused model wrote a table"

    def test_audited_run_refused_before_writing(self, project):
        # write_audit_publish is a profile key: a child dbt runs with it set.
        done = _child_dbt(project, {"write_audit_publish": True}, "run", "--select", "plain")
        assert done.returncode != 0, done.stdout
        assert "not available under Spark Connect" in done.stdout, done.stdout[-3000:]
        listed = project.run_sql(
            f"show tables in `{project.database}`.`{project.test_schema}` like 'plain'",
            fetch="all",
        )
        assert listed == [], "the refused audited model wrote a table"

    def test_reading_upstream_changes_refused_before_writing(self, project):
        # After the audited refusal, which needs `plain` absent.
        run_dbt(["run", "--select", "plain"])
        _, out = run_dbt_and_capture(["run", "--select", "changes"], expect_pass=False)
        text = output_text(out)
        assert "is not available under Spark Connect yet" in text
        listed = project.run_sql(
            f"show tables in `{project.database}`.`{project.test_schema}` like 'changes'",
            fetch="all",
        )
        assert listed == [], "the refused model wrote a table"


@pytest.mark.only_profile("connect")
class TestConnectSecrets:
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"one.sql": TABLE_SQL}

    def test_secrets_stay_out_of_logs(self, project, connect_server, s3_server, rest_catalog):
        run_dbt(["run"])
        assert rows(project, "one") == [(1,)]
        secrets = [s3_server.secret_key, rest_catalog.token]
        server_log = connect_server.log_path.read_text(errors="replace")
        dbt_log = Path(project.project_root) / "logs" / "dbt.log"
        dbt_text = dbt_log.read_text(errors="replace") if dbt_log.exists() else ""
        for secret in secrets:
            assert secret not in server_log
            assert secret not in dbt_text

    def test_the_server_listens_on_loopback_only(self, connect_server):
        assert connect_server.process is not None
        addresses = listening_addresses(connect_server.process.pid)
        assert addresses == {"127.0.0.1"}, addresses


@pytest.mark.only_profile("connect")
class TestMisconfiguredConnectServer:
    """Servers started without what only their launch can give: the start fails, naming it."""

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"one.sql": TABLE_SQL}

    @pytest.mark.parametrize(
        ("jars", "conf", "expected"),
        [
            # The Iceberg jar, but no extensions: MERGE and the procedures would fail later.
            ("iceberg", {}, "runs without Iceberg's SQL extensions"),
            # The extensions named, but no Iceberg jar: the catalog's class is not there.
            (
                "none",
                {"spark.sql.extensions": ICEBERG_EXTENSIONS},
                "is not on the server's classpath",
            ),
        ],
    )
    def test_start_fails_naming_what_is_missing(
        self, project, lakehouse_root, jars, conf, expected
    ):
        from dbt.adapters.lakehouse.engine.jars import ICEBERG_JARS

        server = ConnectServer(
            lakehouse_root / "servers" / f"connect-{jars}",
            jars=(ICEBERG_JARS.locate() or []) if jars == "iceberg" else [],
            conf=conf,
            heap="768m",
        ).start()
        try:
            done = _child_dbt(project, {"spark": {"master": server.url}}, "run")
        finally:
            server.stop()
        assert done.returncode != 0, done.stdout
        text = " ".join(done.stdout.split())
        assert expected in text, done.stdout[-3000:]
        assert "Fix:" in text
