"""Depots files: which one is read, its errors, and env_var rendering in it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dbt.adapters.lakehouse.profile.depot import (
    S3Storage,
    Secret,
    depots_file_candidates,
)
from unit.profile.depots import (
    ACCESS_KEY,
    APIKEY,
    METASTORE,
    SECRET_KEY,
    SECRET_VALUES,
    error_of,
    resolve,
    s3_entry,
    with_s3,
    write_depots,
)

# --- depots files ----------------------------------------------------------------------------


def test_depots_file_candidates_order(cwd: Path, home: Path) -> None:
    env = {"LAKEHOUSE_DEPOTS_FILE": "~/env/depots.yml"}
    assert depots_file_candidates("conf/depots.yml", env, cwd, home) == [
        cwd / "conf" / "depots.yml",
        home / "env" / "depots.yml",
        cwd / "depots.yml",
        home / ".dbt" / "depots.yml",
    ]
    assert depots_file_candidates(None, {}, cwd, home) == [
        cwd / "depots.yml",
        home / ".dbt" / "depots.yml",
    ]


def _four_places(cwd: Path, home: Path, tmp_path: Path) -> list[Path]:
    return [
        tmp_path / "profile" / "depots.yml",
        tmp_path / "envvar" / "depots.yml",
        cwd / "depots.yml",
        home / ".dbt" / "depots.yml",
    ]


@pytest.mark.parametrize("first", [0, 1, 2, 3])
def test_first_existing_depots_file_wins(cwd: Path, home: Path, tmp_path: Path, first: int) -> None:
    places = _four_places(cwd, home, tmp_path)
    for index in range(first, 4):
        entry = with_s3(s3_entry(), bucket=f"bucket-{index}")
        write_depots(places[index], {"prod": entry})
    depot = resolve(
        "dataos://prod",
        cwd,
        home,
        depots_file=str(places[0]),
        env={"LAKEHOUSE_DEPOTS_FILE": str(places[1])},
    )
    assert isinstance(depot.storage, S3Storage)
    assert depot.storage.bucket == f"bucket-{first}"
    assert depot.source == f"depots file {places[first]}"
    assert depot.name == "prod"
    assert depot.embedded is False


@pytest.mark.parametrize("place", [0, 1, 2, 3])
def test_each_depots_file_place_alone(cwd: Path, home: Path, tmp_path: Path, place: int) -> None:
    places = _four_places(cwd, home, tmp_path)
    write_depots(places[place], {"prod": s3_entry()})
    depots_file = str(places[0]) if place == 0 else None
    env = {"LAKEHOUSE_DEPOTS_FILE": str(places[1])} if place == 1 else {}
    depot = resolve("dataos://prod", cwd, home, depots_file=depots_file, env=env)
    assert depot.source == f"depots file {places[place]}"


def test_relative_depots_file_is_resolved_against_cwd(cwd: Path, home: Path) -> None:
    write_depots(cwd / "conf" / "mine.yml", {"prod": s3_entry()})
    depot = resolve("dataos://prod", cwd, home, depots_file="conf/mine.yml")
    assert depot.source == f"depots file {cwd / 'conf' / 'mine.yml'}"


def test_no_depots_file(cwd: Path, home: Path) -> None:
    msg = error_of("dataos://prod", cwd, home, depots_file="missing.yml")
    assert msg.startswith("Unknown depot dataos://prod: no resolver knows it.")
    assert "1. depots file: none found" in msg
    for path in (cwd / "missing.yml", cwd / "depots.yml", home / ".dbt" / "depots.yml"):
        assert f"{path} (not found)" in msg
    assert "LAKEHOUSE_DEPOTS_FILE (not set)" in msg
    assert "`depots_file:`" in msg
    assert "export LAKEHOUSE_DEPOTS_FILE=" in msg


def test_unknown_depot_lists_known_names_and_files(cwd: Path, home: Path) -> None:
    used = write_depots(cwd / "depots.yml", {"alpha": s3_entry(), "beta": s3_entry()})
    write_depots(home / ".dbt" / "depots.yml", {"gamma": s3_entry()})
    msg = error_of("dataos://gama", cwd, home)
    assert msg.startswith("Unknown depot dataos://gama: no resolver knows it.")
    assert f"1. depots file: {used} defines only alpha, beta (searched" in msg
    assert f"{used} (used)" in msg
    assert f"{home / '.dbt' / 'depots.yml'} (exists)" in msg
    assert "profile depots_file (not set)" in msg
    for value in SECRET_VALUES:
        assert value not in msg


def test_depots_file_without_depots_mapping(cwd: Path) -> None:
    (cwd / "depots.yml").write_text("prod:\n  type: lakehouse\n")
    msg = error_of("dataos://prod", cwd)
    assert "has no `depots:` mapping" in msg
    assert "Accepted: `depots: {<name>:" in msg


def test_invalid_yaml_does_not_quote_the_file(cwd: Path) -> None:
    (cwd / "depots.yml").write_text(f"depots:\n  prod:\n    secrets: {{apikey: {APIKEY}\n")
    msg = error_of("dataos://prod", cwd)
    assert "is not valid YAML" in msg
    assert "line " in msg
    assert APIKEY not in msg


# --- env_var rendering -----------------------------------------------------------------------


def _templated_entry() -> dict[str, Any]:
    return s3_entry(
        spec={
            "storageType": "s3",
            "s3": {
                "bucket": "{{ env_var('BUCKET') }}",
                "region": "{{ env_var('REGION', 'us-east-1') }}",
                "relativePath": "{{ env_var('PREFIX', 'default/prefix') }}",
            },
        },
        catalog={"type": "rest", "uri": "{{ env_var('METASTORE_URL') }}"},
        secrets={
            "aws_access_key": "{{ env_var('AWS_ACCESS_KEY_ID') }}",
            "aws_secret_key": "{{ env_var('AWS_SECRET_ACCESS_KEY') }}",
            "aws_session_token": "{{ env_var('AWS_SESSION_TOKEN', '') }}",
            "apikey": "{{ env_var('LAKEHOUSE_APIKEY') }}",
        },
    )


TEMPLATE_ENV = {
    "BUCKET": "rendered-bucket",
    "PREFIX": "from/env",
    "METASTORE_URL": METASTORE,
    "AWS_ACCESS_KEY_ID": ACCESS_KEY,
    "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
    "LAKEHOUSE_APIKEY": APIKEY,
}


def test_env_var_rendering_with_defaults(cwd: Path) -> None:
    write_depots(cwd / "depots.yml", {"prod": _templated_entry()})
    depot = resolve("dataos://prod", cwd, env=TEMPLATE_ENV)
    assert depot.storage == S3Storage("rendered-bucket", "from/env", "us-east-1", None)
    assert depot.catalog.uri == METASTORE
    assert depot.secrets.aws_access_key == Secret(ACCESS_KEY)
    assert depot.secrets.aws_secret_key == Secret(SECRET_KEY)
    assert depot.secrets.aws_session_token is None  # '' default means unset
    assert depot.secrets.apikey == Secret(APIKEY)


def test_env_var_set_beats_its_default(cwd: Path) -> None:
    write_depots(cwd / "depots.yml", {"prod": _templated_entry()})
    depot = resolve("dataos://prod", cwd, env={**TEMPLATE_ENV, "REGION": "ap-south-1"})
    assert isinstance(depot.storage, S3Storage)
    assert depot.storage.region == "ap-south-1"


def test_missing_env_var_names_variable_depot_and_file(cwd: Path) -> None:
    path = write_depots(cwd / "depots.yml", {"prod": _templated_entry()})
    env = {k: v for k, v in TEMPLATE_ENV.items() if k != "LAKEHOUSE_APIKEY"}
    msg = error_of("dataos://prod", cwd, env=env)
    assert "Environment variable LAKEHOUSE_APIKEY is not set" in msg
    assert "depot 'prod'" in msg
    assert str(path) in msg
    assert "secrets.apikey" in msg
    assert "{{ env_var('LAKEHOUSE_APIKEY', '<default>') }}" in msg
    for value in SECRET_VALUES:
        assert value not in msg


def test_only_the_chosen_depot_is_rendered(cwd: Path) -> None:
    broken = s3_entry(catalog={"type": "rest", "uri": "{{ env_var('NOT_SET_ANYWHERE') }}"})
    write_depots(cwd / "depots.yml", {"prod": _templated_entry(), "other": broken})
    assert resolve("dataos://prod", cwd, env=TEMPLATE_ENV).name == "prod"


@pytest.mark.parametrize(
    "template",
    [
        "{{ range(3) | list }}",
        "{{ ''.__class__.__mro__ }}",
        "{{ var('x') }}",
        "{{ env_var('BUCKET' }}",
    ],
)
def test_only_env_var_is_available(cwd: Path, template: str) -> None:
    entry = with_s3(s3_entry(), bucket=template)
    write_depots(cwd / "depots.yml", {"prod": entry})
    msg = error_of("dataos://prod", cwd, env=TEMPLATE_ENV)
    assert "template error at spec.s3.bucket" in msg
    assert "env_var is the only function available" in msg


@pytest.mark.parametrize(
    ("where", "template"),
    [
        ("secrets", "{{ fakeIdentSecret }}"),
        ("secrets", "{{ env_var('X') fakeIdentSecret }}"),
        ("properties", "{{ fakeIdentSecret }}"),
    ],
)
def test_template_errors_in_secrets_do_not_quote_names(
    cwd: Path, where: str, template: str
) -> None:
    # Jinja's own messages quote names ("'x' is undefined", "got 'x'"); at a secret, withhold.
    if where == "secrets":
        entry = s3_entry(secrets={"apikey": template})
    else:
        entry = s3_entry(
            catalog={"type": "rest", "uri": METASTORE, "properties": {"credential": template}}
        )
    write_depots(cwd / "depots.yml", {"prod": entry})
    msg = error_of("dataos://prod", cwd, env=TEMPLATE_ENV)
    assert "template error at" in msg
    assert "details withheld" in msg
    assert "fakeIdentSecret" not in msg


def test_template_errors_elsewhere_keep_jinja_detail(cwd: Path) -> None:
    write_depots(cwd / "depots.yml", {"prod": with_s3(s3_entry(), bucket="{{ buckett }}")})
    assert "'buckett' is undefined" in error_of("dataos://prod", cwd, env=TEMPLATE_ENV)


def test_inline_depot_is_not_rendered_again(cwd: Path) -> None:
    # dbt renders profiles.yml itself; a literal '{{' left in a secret must survive.
    entry = s3_entry(secrets={"apikey": "{{ not-a-template"})
    depot = resolve(entry, cwd)
    assert depot.secrets.apikey == Secret("{{ not-a-template")
