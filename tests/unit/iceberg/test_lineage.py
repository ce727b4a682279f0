"""Commit lineage, its pure parts: which statements can commit, what a commit carries, the
history rows `dbt-lakehouse history` prints, and how it picks the user's profile."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
import yaml

from dbt.adapters.lakehouse.iceberg.history import (
    Commit,
    history_rows,
    main_ancestors,
    render_table,
    table_name,
)
from dbt.adapters.lakehouse.iceberg.lineage import commit_properties, commit_target, is_node_id
from dbt.adapters.lakehouse.profile.user_profile import (
    ProfileError,
    choose_profile,
    default_profiles_dir,
    load_profile,
)
from dbt.adapters.lakehouse.report.response import LakehouseAdapterResponse

QUERY_COMMENT = '/* {"app": "dbt", "node_id": "model.p.m"} */\n'


@pytest.mark.parametrize(
    "statement, target",
    [
        ("insert into `c`.`s`.`t` select 1", "`c`.`s`.`t`"),
        ("INSERT OVERWRITE TABLE s.t select 1", "s.t"),
        ("merge into `c`.`s`.`t` as DBT_INTERNAL_DEST using v on true", "`c`.`s`.`t`"),
        ("delete from c.s.t where id = 1", "c.s.t"),
        ("update c.s.t set a = 1", "c.s.t"),
        ("truncate table c.s.t", "c.s.t"),
        ("create or replace table `c`.`s`.`t`\n  using iceberg as select 1", "`c`.`s`.`t`"),
        ("create table if not exists c.s.t using iceberg as select 1", "c.s.t"),
        ("replace table c.s.t as select 1", "c.s.t"),
        # dbt's query comment and statement-scoped conf lines come first
        (QUERY_COMMENT + "insert into c.s.t select 1", "c.s.t"),
        (
            "-- lakehouse:conf spark.sql.sources.partitionOverwriteMode=dynamic\n"
            "  insert overwrite table `c` . `s` . `t` select 1",
            "`c`.`s`.`t`",
        ),
        (
            "/* a */ /* b */ -- c\n merge into `we``ird`.`s`.`t` using v on true",
            "`we``ird`.`s`.`t`",
        ),
        # nothing an Iceberg table commits a snapshot for
        ("select * from c.s.t", None),
        ("create or replace temporary view v as select 1", None),
        ("create or replace view c.s.v as select 1", None),
        ("alter table c.s.t add column x int", None),
        ("call c.system.fast_forward('s.t', 'main', 'b')", None),
        ("create schema if not exists c.s", None),
        ("drop table c.s.t", None),
        ("-- insert into c.s.t\nselect 1", None),
        ("/* insert into c.s.t */ select 1", None),
        ("/* unterminated insert into c.s.t", None),
        ("", None),
    ],
)
def test_commit_target(statement: str, target: str | None) -> None:
    assert commit_target(statement) == target


def test_commit_target_reads_only_the_start_of_a_large_statement() -> None:
    huge = "insert into c.s.t select " + " union all select ".join(["1"] * 200_000)
    assert commit_target(huge) == "c.s.t"
    assert commit_target("select " + " + ".join(["1"] * 200_000)) is None


@pytest.mark.parametrize(
    "name, expected",
    [
        ("model.pkg.orders", True),
        ("seed.pkg.raw", True),
        ("snapshot.pkg.snap", True),
        ("test.pkg.not_null_orders_id.abc123", True),
        ("unit_test.pkg.orders.t1", True),
        ("master", False),
        ("macro_my_op", False),
        ("model.pkg", False),
        ("source.pkg.raw.orders", False),
        ("model..orders", False),
        (None, False),
    ],
)
def test_is_node_id(name: str | None, expected: bool) -> None:
    assert is_node_id(name) is expected


def test_commit_properties_name_the_node_only_for_nodes() -> None:
    assert commit_properties("inv-1", "model.pkg.orders") == {
        "dbt.invocation_id": "inv-1",
        "dbt.node": "model.pkg.orders",
    }
    assert commit_properties("inv-1", "master") == {"dbt.invocation_id": "inv-1"}
    assert commit_properties("inv-1", None) == {"dbt.invocation_id": "inv-1"}


def test_lineage_off_never_fails_a_statement() -> None:
    from types import SimpleNamespace

    from dbt.adapters.lakehouse.iceberg.lineage import commit_lineage, committed_snapshot

    # A gateway without pinned threads: properties could reach another thread's commit.
    spark = SimpleNamespace(sparkContext=SimpleNamespace(_gateway=object()))
    with commit_lineage(spark, "model.p.m") as (properties, session):
        assert properties is None
        assert session is spark
    assert committed_snapshot(spark, "c.s.t", {"dbt.invocation_id": "x"}) is None


def test_adapter_response_carries_the_snapshot_id() -> None:
    response = LakehouseAdapterResponse(_message="OK", snapshot_id=4112162936215688036)
    assert response.to_dict(omit_none=True) == {
        "_message": "OK",
        "snapshot_id": 4112162936215688036,
    }
    assert "snapshot_id" not in LakehouseAdapterResponse(_message="OK").to_dict(omit_none=True)
    assert str(response) == "OK"


# --- history -------------------------------------------------------------------------------
def _commit(when: str, snapshot_id: int, parent: int | None, operation: str, **summary) -> Commit:
    at = dt.datetime.fromisoformat(when).replace(tzinfo=dt.timezone.utc)
    return Commit(at, snapshot_id, parent, operation, summary)


COMMITS = [
    _commit(
        "2024-05-01 10:00:00",
        1,
        None,
        "append",
        **{"added-records": "3", "added-data-files": "1", "dbt.invocation_id": "inv-a"},
        **{"dbt.node": "model.p.orders"},
    ),
    _commit(
        "2024-05-02 10:00:00",
        2,
        1,
        "overwrite",
        **{"added-records": "2", "deleted-records": "1", "added-data-files": "1"},
        **{"deleted-data-files": "1", "dbt.invocation_id": "inv-b", "dbt.node": "model.p.orders"},
    ),
    # on a branch never published: not an ancestor of main
    _commit("2024-05-03 10:00:00", 3, 2, "append", **{"added-records": "9"}),
    # merge-on-read: position deletes count as rows deleted, delete files as files
    _commit(
        "2024-05-02 12:00:00",
        4,
        2,
        "overwrite",
        **{"added-position-deletes": "2", "added-delete-files": "1", "removed-delete-files": "1"},
    ),
]


def test_main_ancestors_follow_parent_links_from_mains_head() -> None:
    assert main_ancestors(COMMITS, 4) == {4, 2, 1}
    assert main_ancestors(COMMITS, None) == set()
    # a parent expired away ends the chain
    assert main_ancestors(COMMITS[1:], 2) == {2, 1}


def test_history_rows_newest_first_with_counts_lineage_and_main() -> None:
    rows = history_rows(COMMITS, main_ancestors(COMMITS, 4))
    assert rows == [
        ("2024-05-03 10:00:00", "3", "append", "+9/-0", "+0/-0", "no", "-", "-"),
        ("2024-05-02 12:00:00", "4", "overwrite", "+0/-2", "+1/-1", "yes", "-", "-"),
        (
            "2024-05-02 10:00:00",
            "2",
            "overwrite",
            "+2/-1",
            "+1/-1",
            "yes",
            "inv-b",
            "model.p.orders",
        ),
        ("2024-05-01 10:00:00", "1", "append", "+3/-0", "+1/-0", "yes", "inv-a", "model.p.orders"),
    ]
    assert [row[1] for row in history_rows(COMMITS, set(), limit=2)] == ["3", "4"]


def test_render_table_aligns_columns() -> None:
    text = render_table([("a", "bb"), ("ccc", "d")], header=("h1", "h2"))
    assert text.splitlines() == ["h1   h2", "a    bb", "ccc  d"]


@pytest.mark.parametrize(
    "given, expected",
    [
        ("lakehouse.jaffle.orders", "`lakehouse`.`jaffle`.`orders`"),
        ("jaffle.orders", "`dflt`.`jaffle`.`orders`"),
        ("`raw`.`my.schema`.`t`", "`raw`.`my.schema`.`t`"),
        ("c.s.`we``ird`", "`c`.`s`.`we``ird`"),
    ],
)
def test_table_name(given: str, expected: str) -> None:
    assert table_name(given, "dflt") == expected


@pytest.mark.parametrize("given", ["orders", "a.b.c.d", "a..b", "a.b.", "a.b c", ""])
def test_table_name_refuses_other_shapes(given: str) -> None:
    with pytest.raises(ValueError, match="is not catalog.schema.table"):
        table_name(given, "dflt")


# --- which profile ---------------------------------------------------------------------------
LAKEHOUSE = {"target": "dev", "outputs": {"dev": {"type": "lakehouse", "schema": "a"}}}
OTHER = {"target": "dev", "outputs": {"dev": {"type": "postgres"}}}


def test_default_profiles_dir_follows_dbt(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert default_profiles_dir({}, tmp_path, home) == home / ".dbt"
    (tmp_path / "profiles.yml").write_text("{}")
    assert default_profiles_dir({}, tmp_path, home) == tmp_path
    assert default_profiles_dir({"DBT_PROFILES_DIR": "/x"}, tmp_path, home) == Path("/x")


def test_choose_profile_order() -> None:
    profiles = {"lake": LAKEHOUSE, "pg": OTHER, "config": {"send_anonymous_usage_stats": False}}
    path = Path("p/profiles.yml")
    assert choose_profile(profiles, None, None, path) == "lake"
    assert choose_profile(profiles, "pg", "lake", path) == "pg"
    assert choose_profile(profiles, None, "pg", path) == "pg"
    with pytest.raises(ProfileError, match=r"Profile 'nope' \(from --profile\) is not in"):
        choose_profile(profiles, "nope", None, path)
    with pytest.raises(ProfileError, match=r"\(from ./dbt_project.yml\).*Profiles there: lake, pg"):
        choose_profile(profiles, None, "gone", path)


@pytest.mark.parametrize(
    "profiles, says",
    [
        ({"pg": OTHER}, "no profile with a `type: lakehouse` target"),
        ({"a": LAKEHOUSE, "b": LAKEHOUSE}, "2 profiles with a `type: lakehouse` target"),
    ],
)
def test_choose_profile_without_a_single_candidate(profiles: dict, says: str) -> None:
    with pytest.raises(ProfileError, match=says) as raised:
        choose_profile(profiles, None, None, Path("profiles.yml"))
    assert "Fix: pass --profile" in str(raised.value)


def _write_profiles(folder: Path, profiles: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "profiles.yml").write_text(yaml.safe_dump(profiles))
    return folder


def test_load_profile_renders_env_vars_and_takes_the_project_profile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LINEAGE_TEST_SCHEMA", "from_env")
    monkeypatch.setenv("LINEAGE_TEST_TARGET", "prod")
    profiles = {
        "lake": {
            "target": "{{ env_var('LINEAGE_TEST_TARGET') }}",
            "outputs": {
                "dev": {"type": "lakehouse", "schema": "dev_schema"},
                "prod": {
                    "type": "lakehouse",
                    "schema": "{{ env_var('LINEAGE_TEST_SCHEMA') }}",
                    "catalog": "prodcat",
                    "threads": 4,
                },
            },
        },
        "other_lake": LAKEHOUSE,
    }
    folder = _write_profiles(tmp_path / "profiles", profiles)
    project = tmp_path / "project"
    project.mkdir()
    (project / "dbt_project.yml").write_text("name: p\nprofile: lake\n")
    chosen = load_profile(folder, project_dir=project)
    assert (chosen.profile, chosen.target) == ("lake", "prod")
    assert (chosen.credentials.schema, chosen.credentials.database) == ("from_env", "prodcat")
    chosen = load_profile(folder, profile="lake", target="dev", project_dir=project)
    assert (chosen.target, chosen.credentials.schema) == ("dev", "dev_schema")


@pytest.mark.parametrize(
    "profiles, kwargs, says",
    [
        ({"lake": LAKEHOUSE}, {"target": "prod"}, "Profile 'lake' in .*: The profile 'lake' does"),
        ({"pg": OTHER}, {"profile": "pg"}, "has type 'postgres'; this command reads `type: lakeh"),
        (
            {"lake": {"outputs": {"dev": {"type": "lakehouse", "schema": "a", "aws_regon": "x"}}}},
            {"target": "dev"},
            "is invalid: .*Unknown profile key 'aws_regon'. Did you mean 'aws_region'",
        ),
    ],
)
def test_load_profile_errors_are_one_line(
    tmp_path: Path, profiles: dict, kwargs: dict, says: str
) -> None:
    folder = _write_profiles(tmp_path, profiles)
    with pytest.raises(ProfileError, match=says) as raised:
        load_profile(folder, project_dir=tmp_path, **kwargs)
    assert "\n" not in str(raised.value)


def test_load_profile_without_profiles_file(tmp_path: Path) -> None:
    with pytest.raises(ProfileError, match=r"No profiles.yml in .*Fix: pass --profiles-dir"):
        load_profile(tmp_path, project_dir=tmp_path)
