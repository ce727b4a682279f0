"""Depot secrets: never in a repr, a message or an error, whatever goes wrong."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from dbt.adapters.lakehouse.exceptions import DepotConfigError
from dbt.adapters.lakehouse.profile.depot import (
    CatalogSpec,
    Secret,
)
from unit.profile.depots import (
    ACCESS_KEY,
    APIKEY,
    JDBC_PASSWORD,
    JDBC_USER,
    SECRET_KEY,
    SECRET_VALUES,
    SESSION_TOKEN,
    resolve,
    s3_entry,
    with_s3,
    write_depots,
)

# --- Secret ----------------------------------------------------------------------------------


def test_secret_never_prints() -> None:
    secret = Secret(SECRET_KEY)
    assert str(secret) == "****"
    assert repr(secret) == "****"
    assert f"{secret}" == "****"
    assert f"{secret!r}" == "****"
    assert f"{secret:>6}" == "  ****"
    assert format(secret) == "****"
    # %-formatting is what logging does with its arguments.
    assert "%s %r" % (secret, secret) == "**** ****"  # noqa: UP031
    assert SECRET_KEY not in repr([secret, {"k": secret}])
    assert secret.reveal() == SECRET_KEY


def test_secret_truth_equality_and_hash() -> None:
    assert Secret("x")
    assert not Secret("")
    assert Secret("x") == Secret("x")
    assert Secret("x") != Secret("y")
    assert Secret("x") != "x"  # only secrets compare to secrets
    assert hash(Secret("x")) == hash(Secret("x"))
    assert len({Secret("x"), Secret("x"), Secret("y")}) == 2


def test_secret_is_immutable_and_wraps_strings_only() -> None:
    secret = Secret("x")
    with pytest.raises(AttributeError):
        secret._value = "y"  # type: ignore[misc]
    with pytest.raises(TypeError):
        Secret(123)  # type: ignore[arg-type]


def test_depot_repr_hides_secrets(cwd: Path) -> None:
    entry = s3_entry(
        catalog={
            "type": "jdbc",
            "uri": "jdbc:postgresql://db:5432/iceberg",
            "properties": {"credential": APIKEY, "client.pool-size": 2},
        },
        secrets={
            "aws_access_key": ACCESS_KEY,
            "aws_secret_key": SECRET_KEY,
            "aws_session_token": SESSION_TOKEN,
            "jdbc_user": JDBC_USER,
            "jdbc_password": JDBC_PASSWORD,
        },
    )
    depot = resolve(entry, cwd)
    text = repr(depot) + str(depot) + f"{depot}"
    for value in SECRET_VALUES:
        assert value not in text
    assert "client.pool-size" in text
    assert depot.secrets.jdbc_password == Secret(JDBC_PASSWORD)
    assert depot.catalog.properties["credential"] == APIKEY  # kept, only hidden in repr
    hash(depot)  # frozen dataclasses holding secrets and properties stay hashable


def test_catalog_repr_hides_uri_with_password() -> None:
    spec = CatalogSpec("jdbc", f"jdbc:postgresql://db/iceberg?password={JDBC_PASSWORD}", None, {})
    assert JDBC_PASSWORD not in repr(spec)


# --- no secret in any error ------------------------------------------------------------------

ALL_SECRETS = {
    "aws_access_key": ACCESS_KEY,
    "aws_secret_key": SECRET_KEY,
    "aws_session_token": SESSION_TOKEN,
    "apikey": APIKEY,
    "jdbc_user": JDBC_USER,
    "jdbc_password": JDBC_PASSWORD,
}
SECRET_ENV = {
    "AWS_ACCESS_KEY_ID": ACCESS_KEY,
    "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
    "AWS_SESSION_TOKEN": SESSION_TOKEN,
    "LAKEHOUSE_APIKEY": APIKEY,
}


def _bad_yaml(cwd: Path) -> str:
    (cwd / "depots.yml").write_text(f"depots:\n  d:\n    secrets: [{SECRET_KEY}: {APIKEY}\n")
    return "dataos://d"


def _file_depot(entry: dict[str, Any]) -> Any:
    def make(cwd: Path) -> str:
        write_depots(cwd / "depots.yml", {"d": entry, "other": s3_entry(secrets=ALL_SECRETS)})
        return "dataos://d"

    return make


ERROR_SCENARIOS: dict[str, Any] = {
    "schema": s3_entry(type="x", secrets=ALL_SECRETS, catalog={"type": "?"}),
    "unknown secret key": s3_entry(secrets={"aws_secret": SECRET_KEY, "api_key": APIKEY}),
    "secret of wrong type": s3_entry(secrets={"apikey": {"v": APIKEY}}),
    "no region": with_s3(s3_entry(secrets=ALL_SECRETS), region=None),
    "half keys": s3_entry(secrets={"aws_secret_key": SECRET_KEY, "apikey": APIKEY}),
    "uri with userinfo": s3_entry(
        catalog={"type": "rest", "uri": f"ftp://u:{JDBC_PASSWORD}@h/x"}, secrets=ALL_SECRETS
    ),
    "jdbc uri with password": s3_entry(
        catalog={"type": "jdbc", "uri": f"postgresql://h/db?password={JDBC_PASSWORD}"}
    ),
    "hadoop with uri": s3_entry(
        catalog={"type": "hadoop", "uri": f"https://u:{SECRET_KEY}@h/"}, secrets=ALL_SECRETS
    ),
    "endpoint with userinfo": with_s3(
        s3_entry(secrets=ALL_SECRETS), endpoint=f"minio://u:{SECRET_KEY}@h:9000"
    ),
    "missing apikey": s3_entry(secrets={k: v for k, v in ALL_SECRETS.items() if k != "apikey"}),
    "scheme": f"https://u:{SECRET_KEY}@host/{APIKEY}",
    "env depot": "env",
    "bad yaml": _bad_yaml,
    "missing env var": _file_depot(
        s3_entry(secrets={**ALL_SECRETS, "apikey": "{{ env_var('NOPE') }}"})
    ),
    "template error": _file_depot(s3_entry(secrets={"apikey": "{{ " + APIKEY + " }"})),
    "unknown depot": lambda cwd: (_file_depot(s3_entry())(cwd), "dataos://missing")[1],
}


@pytest.mark.parametrize("scenario", sorted(ERROR_SCENARIOS))
def test_no_secret_in_any_error(cwd: Path, scenario: str) -> None:
    depot = ERROR_SCENARIOS[scenario]
    if callable(depot):
        depot = depot(cwd)
    env = dict(SECRET_ENV, TYPE="unknown")
    if scenario == "missing apikey":
        env = {}
    with pytest.raises(DepotConfigError) as info:
        resolve(copy.deepcopy(depot), cwd, env=env)
    text = str(info.value) + repr(info.value) + info.value.msg
    for value in SECRET_VALUES:
        assert value not in text
