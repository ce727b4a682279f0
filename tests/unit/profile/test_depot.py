"""Depot resolution: embedded, depots files, inline, env; precedence; errors; secrets."""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from dbt.adapters.lakehouse.exceptions import DepotConfigError
from dbt.adapters.lakehouse.profile.depot import (
    CatalogSpec,
    Depot,
    DepotSecrets,
    LocalStorage,
    S3Storage,
    Secret,
    depots_file_candidates,
    parse_depot_address,
    resolve_depot,
)

# Distinctive fake secrets: none of these may ever appear in a message or repr.
ACCESS_KEY = "AKIAFAKEACCESS7Q2W"
SECRET_KEY = "fakeSecretKey-9f8e7d6c"
SESSION_TOKEN = "fakeSessionToken-Zx81"
APIKEY = "fakeApiKey-4455aa"
JDBC_USER = "fakeJdbcUser-u7"
JDBC_PASSWORD = "fakeJdbcPass-p9"
SECRET_VALUES = (ACCESS_KEY, SECRET_KEY, SESSION_TOKEN, APIKEY, JDBC_USER, JDBC_PASSWORD)

METASTORE = "https://metastore.example.com/iceberg/api/"
VERBATIM_METASTORE = "METASTORE_URL environment variable is required for Lakehouse destination"
VERBATIM_APIKEY = "'apikey' is required in Lakehouse depot secret."


@pytest.fixture
def cwd(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


def s3_entry(**changes: Any) -> dict[str, Any]:
    """A complete S3 + REST depot entry; `changes` replace whole top-level sections."""
    entry: dict[str, Any] = {
        "type": "lakehouse",
        "spec": {
            "storageType": "s3",
            "s3": {"bucket": "my-bucket", "relativePath": "warehouse/", "region": "eu-west-1"},
        },
        "catalog": {"type": "rest", "uri": METASTORE},
        "secrets": {"aws_access_key": ACCESS_KEY, "aws_secret_key": SECRET_KEY, "apikey": APIKEY},
    }
    entry.update(changes)
    return entry


def with_s3(entry: dict[str, Any], **s3: Any) -> dict[str, Any]:
    entry = copy.deepcopy(entry)
    entry["spec"]["s3"].update(s3)
    entry["spec"]["s3"] = {k: v for k, v in entry["spec"]["s3"].items() if v is not None}
    return entry


def write_depots(path: Path, depots: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump({"depots": depots}))
    return path


def resolve(
    depot: str | dict[str, Any] | None,
    cwd: Path,
    home: Path | None = None,
    *,
    env: dict[str, str] | None = None,
    depots_file: str | None = None,
    warehouse: str | None = None,
    aws_region: str | None = None,
    aws_endpoint: str | None = None,
) -> Depot:
    return resolve_depot(
        depot=depot,
        depots_file=depots_file,
        warehouse=warehouse,
        aws_region=aws_region,
        aws_endpoint=aws_endpoint,
        env={} if env is None else env,
        cwd=cwd,
        home=home if home is not None else cwd.parent / "nohome",
    )


def error_of(depot: Any, cwd: Path, home: Path | None = None, **kwargs: Any) -> str:
    with pytest.raises(DepotConfigError) as info:
        resolve(depot, cwd, home, **kwargs)
    return info.value.msg


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


# --- storage types ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("relative_path", "uri"),
    [
        ("warehouse/", "s3://b/warehouse"),
        ("/a//b/", "s3://b/a/b"),
        ("", "s3://b"),
        ("/", "s3://b"),
        ("x", "s3://b/x"),
    ],
)
def test_s3_storage_warehouse_uri(relative_path: str, uri: str) -> None:
    storage = S3Storage("b", relative_path, "us-east-1", None)
    assert storage.warehouse_uri == uri
    assert not storage.relative_path.startswith("/")
    assert not storage.relative_path.endswith("/")


def test_local_storage_uri_and_absolute_path() -> None:
    assert LocalStorage(Path("/data/my wh")).warehouse_uri == "file:/data/my wh"
    with pytest.raises(ValueError):
        LocalStorage(Path("relative/wh"))


# --- embedded --------------------------------------------------------------------------------


def test_embedded_default(cwd: Path) -> None:
    depot = resolve(None, cwd)
    path = cwd / "lakehouse_warehouse"
    assert depot.embedded is True
    assert depot.name == "embedded"
    assert depot.source == "embedded"
    assert depot.storage == LocalStorage(path)
    assert depot.storage.warehouse_uri == f"file:{path}"
    assert depot.catalog == CatalogSpec(
        type="jdbc",
        uri=f"jdbc:h2:file:{path}/_catalog/iceberg;AUTO_SERVER=TRUE;DATABASE_TO_LOWER=TRUE",
        warehouse=f"file:{path}",
        properties={},
    )
    assert depot.secrets == DepotSecrets()


def test_embedded_default_follows_dbt_project_dir(cwd: Path, tmp_path: Path) -> None:
    project = tmp_path / "elsewhere"
    depot = resolve(None, cwd, env={"DBT_PROJECT_DIR": str(project)})
    assert depot.storage == LocalStorage(project / "lakehouse_warehouse")


def test_dbt_project_dir_does_not_move_an_explicit_relative_warehouse(
    cwd: Path, tmp_path: Path
) -> None:
    env = {"DBT_PROJECT_DIR": str(tmp_path / "elsewhere")}
    depot = resolve(None, cwd, env=env, warehouse="data/wh")
    assert depot.storage == LocalStorage(cwd / "data" / "wh")


@pytest.mark.parametrize(
    ("warehouse", "env_warehouse", "expected"),
    [
        ("/abs/wh", None, "/abs/wh"),
        ("rel/wh", None, "{cwd}/rel/wh"),
        ("../up", None, "{cwd}/../up"),
        (None, "/from/env", "/from/env"),
        (None, "env-rel", "{cwd}/env-rel"),
        ("/profile/wins", "/from/env", "/profile/wins"),
        ("file:///uri/wh", None, "/uri/wh"),
        ("~/wh", None, "{home}/wh"),
    ],
)
def test_embedded_warehouse_override(
    cwd: Path, home: Path, warehouse: str | None, env_warehouse: str | None, expected: str
) -> None:
    env = {"LAKEHOUSE_WAREHOUSE": env_warehouse} if env_warehouse else {}
    depot = resolve(None, cwd, home, env=env, warehouse=warehouse)
    want = Path(os.path.normpath(expected.format(cwd=cwd, home=home)))
    assert depot.storage == LocalStorage(want)
    assert (
        depot.catalog.uri
        == f"jdbc:h2:file:{want}/_catalog/iceberg;AUTO_SERVER=TRUE;DATABASE_TO_LOWER=TRUE"
    )
    assert depot.catalog.warehouse == f"file:{want}"


def test_embedded_warehouse_must_be_local(cwd: Path) -> None:
    msg = error_of(None, cwd, warehouse="s3://bucket/wh")
    assert "must be a local folder" in msg
    assert "s3://" in msg
    assert "dataos://<depot-name>" in msg


# --- addresses -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("address", "name"),
    [
        ("dataos://aws-lakehouse-depot", "aws-lakehouse-depot"),
        ("  dataos://x_1.y/ ", "x_1.y"),
        ("DATAOS://Upper", "Upper"),
    ],
)
def test_parse_depot_address(address: str, name: str) -> None:
    assert parse_depot_address(address) == name


def test_unsupported_scheme_is_verbatim(cwd: Path) -> None:
    msg = error_of("s3://x", cwd)
    assert msg.splitlines()[0] == "Unsupported scheme: s3. Expected 'dataos://'"
    assert "Use depot: dataos://<depot-name>, an inline depot mapping, or env." in msg


def test_address_without_scheme(cwd: Path) -> None:
    msg = error_of("aws-lakehouse-depot", cwd)
    assert msg.splitlines()[0] == "Unsupported scheme: aws-lakehouse-depot. Expected 'dataos://'"
    assert "Use depot: dataos://<depot-name>, an inline depot mapping, or env." in msg
    assert "Did you mean dataos://aws-lakehouse-depot?" in msg


def test_env_is_case_sensitive(cwd: Path) -> None:
    msg = error_of("ENV", cwd)
    assert msg.startswith("Unsupported scheme: ENV. Expected 'dataos://'")
    assert "`env` is lower case" in msg


def test_scheme_error_does_not_echo_url_credentials() -> None:
    with pytest.raises(DepotConfigError) as info:
        parse_depot_address(f"https://user:{SECRET_KEY}@host/x")
    assert info.value.msg.splitlines()[0] == "Unsupported scheme: https. Expected 'dataos://'"
    assert SECRET_KEY not in str(info.value)


@pytest.mark.parametrize("address", ["dataos://", "dataos://a/b", "dataos://a b"])
def test_invalid_depot_name(address: str) -> None:
    with pytest.raises(DepotConfigError, match="Invalid depot address"):
        parse_depot_address(address)


@pytest.mark.parametrize(("depot", "phrase"), [("", "is empty"), ("  ", "is empty")])
def test_empty_depot_is_an_error_not_embedded(cwd: Path, depot: str, phrase: str) -> None:
    assert phrase in error_of(depot, cwd)


def test_depot_of_wrong_type(cwd: Path) -> None:
    msg = error_of(42, cwd)
    assert "must be a string or a mapping" in msg
    assert "got a int" in msg


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
    assert "No depots file found for depot: dataos://prod" in msg
    for path in (cwd / "missing.yml", cwd / "depots.yml", home / ".dbt" / "depots.yml"):
        assert f"{path} (not found)" in msg
    assert "LAKEHOUSE_DEPOTS_FILE (not set)" in msg
    assert "`depots_file:`" in msg
    assert "export LAKEHOUSE_DEPOTS_FILE=" in msg


def test_unknown_depot_lists_known_names_and_files(cwd: Path, home: Path) -> None:
    used = write_depots(cwd / "depots.yml", {"alpha": s3_entry(), "beta": s3_entry()})
    write_depots(home / ".dbt" / "depots.yml", {"gamma": s3_entry()})
    msg = error_of("dataos://gama", cwd, home)
    assert "Unknown depot: dataos://gama" in msg
    assert "Known depots there: alpha, beta." in msg
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


# --- inline and env depots -------------------------------------------------------------------


def test_inline_depot(cwd: Path) -> None:
    depot = resolve(s3_entry(), cwd)
    assert depot.name == "inline"
    assert depot.source == "inline depot"
    assert depot.embedded is False
    assert depot.storage == S3Storage("my-bucket", "warehouse", "eu-west-1", None)
    assert depot.storage.warehouse_uri == "s3://my-bucket/warehouse"
    assert depot.catalog == CatalogSpec("rest", METASTORE, None, {})
    assert depot.secrets == DepotSecrets(
        aws_access_key=Secret(ACCESS_KEY), aws_secret_key=Secret(SECRET_KEY), apikey=Secret(APIKEY)
    )


def test_inline_file_depot_relative_path(cwd: Path) -> None:
    entry = {
        "spec": {"storageType": "FILE", "file": {"path": "local/wh"}},
        "catalog": {"type": "hadoop"},
    }
    depot = resolve(entry, cwd)
    assert depot.storage == LocalStorage(cwd / "local" / "wh")
    assert depot.catalog.type == "hadoop"
    assert depot.secrets == DepotSecrets()


def test_catalog_defaults_to_rest_and_properties_become_strings(cwd: Path) -> None:
    entry = s3_entry()
    del entry["catalog"]
    depot = resolve(entry, cwd, env={"METASTORE_URL": METASTORE})
    assert depot.catalog.type == "rest"
    assert depot.catalog.uri == METASTORE
    props = {"cache-enabled": False, "client.pool-size": 4, "ref": "dev"}
    depot = resolve(
        s3_entry(catalog={"type": "NESSIE", "uri": METASTORE, "properties": props}), cwd
    )
    assert depot.catalog.type == "nessie"
    assert depot.catalog.properties == {
        "cache-enabled": "false",
        "client.pool-size": "4",
        "ref": "dev",
    }


ENV_DEPOT = {
    "TYPE": "S3",
    "DESTINATION_BUCKET": "s3://env-bucket/some/prefix/",
    "AWS_ACCESS_KEY_ID": ACCESS_KEY,
    "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
    "AWS_SESSION_TOKEN": SESSION_TOKEN,
    "AWS_REGION": "us-west-2",
    "AWS_ENDPOINT": "http://minio:9000/",
    "METASTORE_URL": METASTORE,
    "LAKEHOUSE_APIKEY": APIKEY,
}


def test_env_depot(cwd: Path) -> None:
    depot = resolve("env", cwd, env=ENV_DEPOT)
    assert depot.name == "env"
    assert depot.source == "environment (DataOS variables)"
    assert depot.embedded is False
    assert depot.storage == S3Storage("env-bucket", "some/prefix", "us-west-2", "http://minio:9000")
    assert depot.catalog == CatalogSpec("rest", METASTORE, None, {})
    assert depot.secrets == DepotSecrets(
        aws_access_key=Secret(ACCESS_KEY),
        aws_secret_key=Secret(SECRET_KEY),
        aws_session_token=Secret(SESSION_TOKEN),
        apikey=Secret(APIKEY),
    )


@pytest.mark.parametrize(
    ("kind", "destination"),
    [
        ("lakehouse", "s3a://env-bucket"),
        ("LakeHouse", "s3://env-bucket/"),
        ("s3", "s3://env-bucket"),
    ],
)
def test_env_depot_accepts(cwd: Path, kind: str, destination: str) -> None:
    env = {**ENV_DEPOT, "TYPE": kind, "DESTINATION_BUCKET": destination}
    depot = resolve("env", cwd, env=env)
    assert depot.storage.warehouse_uri == "s3://env-bucket"


@pytest.mark.parametrize(
    ("changes", "phrases"),
    [
        ({"TYPE": "postgres"}, ["TYPE environment variable is 'postgres'", "S3, LAKEHOUSE"]),
        ({"TYPE": None}, ["TYPE environment variable is not set", "S3, LAKEHOUSE"]),
        (
            {"DESTINATION_BUCKET": None},
            ["DESTINATION_BUCKET environment variable is required", "s3://<bucket>/<prefix>"],
        ),
        (
            {"DESTINATION_BUCKET": "gs://b/p"},
            ["DESTINATION_BUCKET must be an S3 location; got gs://...", "(or s3a://)"],
        ),
        ({"DESTINATION_BUCKET": "s3:///p"}, ["DESTINATION_BUCKET must be a bare bucket name"]),
        ({"METASTORE_URL": None}, [VERBATIM_METASTORE]),
        ({"LAKEHOUSE_APIKEY": None}, [VERBATIM_APIKEY]),
    ],
)
def test_env_depot_errors(cwd: Path, changes: dict[str, str | None], phrases: list[str]) -> None:
    env = {k: v for k, v in {**ENV_DEPOT, **changes}.items() if v is not None}
    msg = error_of("env", cwd, env=env)
    for phrase in phrases:
        assert phrase in msg
    assert "the environment depot (DataOS variables)" in msg
    for value in SECRET_VALUES:
        assert value not in msg


# --- schema validation -----------------------------------------------------------------------


def test_all_schema_problems_in_one_message(cwd: Path) -> None:
    entry = {
        "type": "postgres",
        "spek": {},
        "spec": {"storageType": "hdfs"},
        "catalog": {"type": "hive", "url": "x"},
        "secrets": {"aws_secret": SECRET_KEY},
    }
    msg = error_of(entry, cwd)
    assert msg.startswith("The inline depot in the profile has 6 problems:")
    assert (
        "Unknown depot key 'spek'. Did you mean 'spec'? Accepted: catalog, secrets, spec, type."
        in msg
    )
    assert "Depot type 'postgres' is not supported. Accepted: lakehouse." in msg
    assert "spec.storageType 'hdfs' is not supported. Accepted: s3, file, abfss, gcs." in msg
    assert "Unknown catalog key 'url'. Did you mean 'uri'? Accepted: properties, type, uri," in msg
    assert "catalog.properties" in msg
    assert (
        "catalog.type 'hive' is not supported. Accepted: rest, hadoop, jdbc, glue, nessie." in msg
    )
    assert "Unknown secrets key 'aws_secret'. Did you mean 'aws_secret_key'? Accepted:" in msg
    assert SECRET_KEY not in msg


@pytest.mark.parametrize(
    ("spec", "phrase"),
    [
        (None, "Depot `spec` must be a mapping; it is missing"),
        ("s3", "Depot `spec` must be a mapping; got a str"),
        ({"s3": {"bucket": "b"}}, "spec.storageType is missing. Accepted: s3, file, abfss, gcs."),
        ({"storageType": "s3"}, "storageType s3 needs a `spec.s3` mapping; it is missing"),
        ({"storageType": "s3", "s3": {"region": "x"}}, "spec.s3.bucket is missing"),
        (
            {"storageType": "s3", "s3": {"bucket": "s3://b/p", "region": "x"}},
            "spec.s3.bucket must be a bare bucket name; got 's3://b/p'",
        ),
        (
            {"storageType": "s3", "s3": {"bucket": "b", "region": "x", "prefix": "p"}},
            "Unknown spec.s3 key 'prefix'. Accepted: bucket, endpoint, region, relativePath.",
        ),
        ({"storageType": "s3", "s3": {"bucket": ["b"]}}, "spec.s3.bucket must be a string"),
        ({"storageType": "file", "file": {}}, "spec.file.path is missing"),
        (
            {"storageType": "file", "file": {"path": "/x", "p": 1}},
            "Unknown spec.file key 'p'. Accepted: path.",
        ),
        (
            {"storageType": "s3", "bucket": "b"},
            "Unknown spec key 'bucket'. Accepted: abfss, file, formatVersion, gcs, s3, "
            "storageType, tableFormats.",
        ),
        (
            {"storageType": "s3", "s3": {"bucket": "b", "region": "x", "regoin": "y"}},
            "Unknown spec.s3 key 'regoin'. Did you mean 'region'? Accepted: bucket, endpoint,",
        ),
    ],
)
def test_spec_validation(cwd: Path, spec: Any, phrase: str) -> None:
    entry = s3_entry(spec=spec)
    assert phrase in error_of(entry, cwd)


def test_secrets_of_wrong_shape_are_not_echoed(cwd: Path) -> None:
    msg = error_of(s3_entry(secrets={"apikey": [APIKEY]}), cwd)
    assert "secrets.apikey must be a string; got a list." in msg
    assert APIKEY not in msg


def test_catalog_properties_must_be_scalars(cwd: Path) -> None:
    entry = s3_entry(catalog={"type": "rest", "uri": METASTORE, "properties": {"x": {"y": 1}}})
    assert "catalog.properties.x must be a string, number or boolean" in error_of(entry, cwd)


# --- region and endpoint precedence ----------------------------------------------------------


@pytest.mark.parametrize(
    ("profile", "depot", "aws_region", "aws_default_region", "expected"),
    [
        ("p-1", "d-1", "e-1", "f-1", "p-1"),
        (None, "d-1", "e-1", "f-1", "d-1"),
        (None, None, "e-1", "f-1", "e-1"),
        (None, None, None, "f-1", "f-1"),
        ("p-1", None, "e-1", None, "p-1"),
        ("", "d-1", "", "", "d-1"),  # empty means unset
        (None, None, "  ", "f-1", "f-1"),
    ],
)
def test_region_precedence(
    cwd: Path,
    profile: str | None,
    depot: str | None,
    aws_region: str | None,
    aws_default_region: str | None,
    expected: str,
) -> None:
    env = {"AWS_REGION": aws_region, "AWS_DEFAULT_REGION": aws_default_region}
    entry = with_s3(s3_entry(), region=depot)
    resolved = resolve(
        entry, cwd, env={k: v for k, v in env.items() if v is not None}, aws_region=profile
    )
    assert isinstance(resolved.storage, S3Storage)
    assert resolved.storage.region == expected


@pytest.mark.parametrize(
    ("profile", "depot", "env_endpoint", "expected"),
    [
        ("http://p:9000", "http://d:9000", "http://e:9000", "http://p:9000"),
        (None, "https://d.example.com/", "http://e:9000", "https://d.example.com"),
        (None, None, "http://e:9000", "http://e:9000"),
        (None, None, None, None),
        ("http://p:9000", None, None, "http://p:9000"),
    ],
)
def test_endpoint_precedence(
    cwd: Path,
    profile: str | None,
    depot: str | None,
    env_endpoint: str | None,
    expected: str | None,
) -> None:
    env = {"AWS_ENDPOINT": env_endpoint} if env_endpoint else {}
    entry = with_s3(s3_entry(), endpoint=depot)
    resolved = resolve(entry, cwd, env=env, aws_endpoint=profile)
    assert isinstance(resolved.storage, S3Storage)
    assert resolved.storage.endpoint == expected


def test_missing_region(cwd: Path) -> None:
    msg = error_of(with_s3(s3_entry(), region=None), cwd)
    assert msg.startswith("S3 storage needs an AWS region, and none is set.")
    for place in ("aws_region", "spec.s3.region", "AWS_REGION", "us-east-1", "MinIO"):
        assert place in msg


def test_endpoint_must_be_http(cwd: Path) -> None:
    msg = error_of(s3_entry(), cwd, aws_endpoint="minio:9000")
    assert "The S3 endpoint from profile aws_endpoint is not an http(s) URL" in msg
    assert "Accepted: http://host:port or https://host." in msg


# --- catalogs and credentials ----------------------------------------------------------------


def test_rest_uri_precedence(cwd: Path) -> None:
    env = {"METASTORE_URL": "https://from-env/"}
    assert resolve(s3_entry(), cwd, env=env).catalog.uri == METASTORE
    entry = s3_entry(catalog={"type": "rest"})
    assert resolve(entry, cwd, env=env).catalog.uri == "https://from-env/"


def test_rest_without_uri_is_verbatim(cwd: Path) -> None:
    msg = error_of(s3_entry(catalog={"type": "rest"}), cwd)
    assert msg.splitlines()[0] == VERBATIM_METASTORE
    assert "catalog.uri" in msg


def test_rest_apikey_precedence(cwd: Path) -> None:
    env = {"LAKEHOUSE_APIKEY": "other-key"}
    assert resolve(s3_entry(), cwd, env=env).secrets.apikey == Secret(APIKEY)
    entry = s3_entry(secrets={})
    assert resolve(entry, cwd, env=env).secrets.apikey == Secret("other-key")


def test_rest_without_apikey_is_verbatim(cwd: Path) -> None:
    msg = error_of(
        s3_entry(secrets={"aws_access_key": ACCESS_KEY, "aws_secret_key": SECRET_KEY}), cwd
    )
    assert msg.splitlines()[0] == VERBATIM_APIKEY
    assert "LAKEHOUSE_APIKEY" in msg
    assert ACCESS_KEY not in msg and SECRET_KEY not in msg


def test_aws_keys_default_from_env_only_when_depot_has_none(cwd: Path) -> None:
    env = {
        "AWS_ACCESS_KEY_ID": "ENVACCESS",
        "AWS_SECRET_ACCESS_KEY": "ENVSECRET",
        "AWS_SESSION_TOKEN": "ENVTOKEN",
    }
    depot = resolve(s3_entry(), cwd, env=env)
    assert depot.secrets.aws_access_key == Secret(ACCESS_KEY)
    assert depot.secrets.aws_session_token is None  # never mixed with the depot's own keys
    depot = resolve(s3_entry(secrets={"apikey": APIKEY}), cwd, env=env)
    assert depot.secrets.aws_access_key == Secret("ENVACCESS")
    assert depot.secrets.aws_secret_key == Secret("ENVSECRET")
    assert depot.secrets.aws_session_token == Secret("ENVTOKEN")


def test_no_aws_keys_anywhere_means_default_chain(cwd: Path) -> None:
    depot = resolve(s3_entry(secrets={"apikey": APIKEY}), cwd)
    assert depot.secrets == DepotSecrets(apikey=Secret(APIKEY))


def test_local_storage_ignores_aws_env_keys(cwd: Path) -> None:
    env = {"AWS_ACCESS_KEY_ID": "ENVACCESS", "AWS_SECRET_ACCESS_KEY": "ENVSECRET"}
    entry = {
        "spec": {"storageType": "file", "file": {"path": "/wh"}},
        "catalog": {"type": "hadoop"},
    }
    assert resolve(entry, cwd, env=env).secrets == DepotSecrets()


@pytest.mark.parametrize(
    ("secrets", "env", "phrases"),
    [
        (
            {"aws_secret_key": SECRET_KEY},
            {},
            ["AWS credentials in depot secrets are incomplete, missing aws_access_key"],
        ),
        (
            {"aws_access_key": ACCESS_KEY},
            {},
            ["in depot secrets are incomplete, missing aws_secret_key", "Given: aws_access_key"],
        ),
        (
            {"aws_session_token": SESSION_TOKEN},
            {},
            ["missing aws_access_key and aws_secret_key", "Given: aws_session_token"],
        ),
        (
            {},
            {"AWS_ACCESS_KEY_ID": ACCESS_KEY},
            ["AWS credentials in the environment are incomplete, missing AWS_SECRET_ACCESS_KEY"],
        ),
        (
            {},
            {"AWS_SECRET_ACCESS_KEY": SECRET_KEY},
            ["in the environment are incomplete, missing AWS_ACCESS_KEY_ID"],
        ),
    ],
)
def test_incomplete_aws_keys(
    cwd: Path, secrets: dict[str, str], env: dict[str, str], phrases: list[str]
) -> None:
    msg = error_of(s3_entry(secrets={**secrets, "apikey": APIKEY}), cwd, env=env)
    for phrase in phrases:
        assert phrase in msg
    assert "or none of them to use the default AWS credential chain" in msg
    for value in SECRET_VALUES:
        assert value not in msg


def test_nessie(cwd: Path) -> None:
    depot = resolve(
        s3_entry(catalog={"type": "nessie", "uri": "http://nessie:19120/api/v2"}, secrets={}), cwd
    )
    assert depot.catalog == CatalogSpec("nessie", "http://nessie:19120/api/v2", None, {})
    assert depot.secrets.apikey is None  # optional: no env fallback, no error
    msg = error_of(s3_entry(catalog={"type": "nessie"}), cwd, env={"METASTORE_URL": METASTORE})
    assert "The nessie catalog needs catalog.uri; it is not set." in msg


def test_jdbc_catalog(cwd: Path) -> None:
    catalog = {"type": "jdbc", "uri": "jdbc:postgresql://db:5432/iceberg"}
    secrets = {"jdbc_user": JDBC_USER, "jdbc_password": JDBC_PASSWORD}
    depot = resolve(s3_entry(catalog=catalog, secrets=secrets), cwd)
    assert depot.catalog.uri == "jdbc:postgresql://db:5432/iceberg"
    assert depot.secrets.jdbc_user == Secret(JDBC_USER)
    assert depot.secrets.jdbc_password == Secret(JDBC_PASSWORD)
    assert depot.secrets.apikey is None
    for uri, given in [(None, "it is not set"), ("postgresql://db/x", "got 'postgresql://db/x'")]:
        msg = error_of(s3_entry(catalog={"type": "jdbc", "uri": uri}), cwd)
        assert "The jdbc catalog needs catalog.uri, a JDBC URL" in msg
        assert given in msg


@pytest.mark.parametrize("kind", ["glue", "hadoop"])
def test_glue_and_hadoop_take_no_uri(cwd: Path, kind: str) -> None:
    depot = resolve(s3_entry(catalog={"type": kind}, secrets={}), cwd)
    assert depot.catalog == CatalogSpec(kind, None, None, {})
    msg = error_of(s3_entry(catalog={"type": kind, "uri": "http://x"}), cwd)
    assert f"The {kind} catalog takes no catalog.uri; got 'http://x'" in msg


def test_glue_needs_s3(cwd: Path) -> None:
    entry = {"spec": {"storageType": "file", "file": {"path": "/wh"}}, "catalog": {"type": "glue"}}
    assert "The glue catalog needs S3 storage; got storageType file" in error_of(entry, cwd)


def test_rest_uri_must_be_http(cwd: Path) -> None:
    msg = error_of(s3_entry(catalog={"type": "rest", "uri": "thrift://hms:9083"}), cwd)
    assert "The rest catalog uri must be an http(s) URL; got 'thrift://hms:9083'" in msg


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


# --- spec.tableFormats: the depot's default table_formats ----------------------------------------


def test_table_formats_default_of_a_depot(cwd: Path) -> None:
    entry = s3_entry()
    entry["spec"]["tableFormats"] = ["iceberg", "delta"]
    assert resolve(entry, cwd).table_formats == ("iceberg", "delta")
    assert resolve(s3_entry(), cwd).table_formats is None


def test_bad_table_formats_of_a_depot_is_a_depot_error(cwd: Path) -> None:
    entry = s3_entry()
    entry["spec"]["tableFormats"] = ["delta"]
    assert "spec.tableFormats lacks iceberg" in error_of(entry, cwd)


# --- spec.formatVersion: the depot's default format_version --------------------------------------


def test_format_version_default_of_a_depot(cwd: Path) -> None:
    entry = s3_entry()
    entry["spec"]["formatVersion"] = 3
    assert resolve(entry, cwd).format_version == 3
    entry["spec"]["formatVersion"] = "2"
    assert resolve(entry, cwd).format_version == 2
    assert resolve(s3_entry(), cwd).format_version is None


@pytest.mark.parametrize("value", [4, "v3", True, 2.5])
def test_bad_format_version_of_a_depot_is_a_depot_error(cwd: Path, value: object) -> None:
    entry = s3_entry()
    entry["spec"]["formatVersion"] = value
    message = error_of(entry, cwd)
    assert "spec.formatVersion is" in message and "Accepted: 1, 2 or 3" in message


# ---- a file depot's folder -------------------------------------------------------------------


def test_a_file_depots_missing_folder_is_created(tmp_path: Path) -> None:
    from dbt.adapters.lakehouse.profile.depot.paths import prepare_local_folder

    folder = tmp_path / "new" / "warehouse"
    prepare_local_folder(LocalStorage(folder), "'lake' (inline)")
    assert folder.is_dir()
    prepare_local_folder(LocalStorage(folder), "'lake' (inline)")  # existing: left as it is
    assert folder.is_dir()


def test_a_read_only_depots_missing_folder_is_named_not_created(tmp_path: Path) -> None:
    from dbt.adapters.lakehouse.profile.depot.paths import prepare_local_folder

    folder = tmp_path / "raw"
    with pytest.raises(DepotConfigError) as raised:
        prepare_local_folder(LocalStorage(folder), "'rawlake' (inline)", read_only=True)
    assert str(folder) in raised.value.msg
    assert "read_only" in raised.value.msg and "not created" in raised.value.msg
    assert not folder.exists()


def test_a_file_where_the_folder_should_be_is_refused(tmp_path: Path) -> None:
    from dbt.adapters.lakehouse.profile.depot.paths import prepare_local_folder

    path = tmp_path / "wh"
    path.write_text("not a folder")
    with pytest.raises(DepotConfigError) as raised:
        prepare_local_folder(LocalStorage(path), "'lake' (inline)")
    assert "is a file, not a folder" in raised.value.msg
