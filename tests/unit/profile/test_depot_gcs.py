"""GCS depots: the `gcs` section, where project and endpoint come from, the service-account key's
checks, and that no part of the key is ever shown."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dbt.adapters.lakehouse.exceptions import DepotConfigError
from dbt.adapters.lakehouse.profile.depot import GcsStorage, resolve_depot
from unit.profile.gcs_key import service_account_key


def gcs_entry(catalog: dict[str, Any] | None = None, **gcs: Any) -> dict[str, Any]:
    section = {"bucket": "lake-bucket", "relativePath": "/warehouse//", **gcs}
    return {
        "type": "lakehouse",
        "spec": {"storageType": "gcs", "gcs": section},
        "catalog": catalog or {"type": "hadoop"},
    }


def resolve(entry: Any, tmp_path: Path, env: dict[str, str] | None = None) -> Any:
    return resolve_depot(
        depot=entry,
        depots_file=None,
        warehouse=None,
        aws_region="eu-west-1",  # a profile's AWS overrides never reach a GCS depot
        aws_endpoint="http://s3.example",
        env=env or {},
        cwd=tmp_path,
        home=tmp_path / "nohome",
    )


def error_of(entry: Any, tmp_path: Path, env: dict[str, str] | None = None) -> str:
    with pytest.raises(DepotConfigError) as info:
        resolve(entry, tmp_path, env)
    return str(info.value.msg)


def test_gcs_storage_from_the_section(tmp_path: Path) -> None:
    depot = resolve(gcs_entry(project="lake-project"), tmp_path)
    assert depot.storage == GcsStorage("lake-bucket", "warehouse", "lake-project", None)
    assert depot.storage.warehouse_uri == "gs://lake-bucket/warehouse"
    assert depot.secrets.gcs_key_json is None  # the default Google chain


def test_project_and_emulator_from_the_environment(tmp_path: Path) -> None:
    env = {"GOOGLE_CLOUD_PROJECT": "env-project", "STORAGE_EMULATOR_HOST": "http://127.0.0.1:9/"}
    storage = resolve(gcs_entry(), tmp_path, env).storage
    assert (storage.project, storage.endpoint) == ("env-project", "http://127.0.0.1:9")
    # The depot's own values win.
    own = gcs_entry(project="own", endpoint="http://127.0.0.1:8")
    storage = resolve(own, tmp_path, env).storage
    assert (storage.project, storage.endpoint) == ("own", "http://127.0.0.1:8")


def test_every_problem_of_a_gcs_depot_at_once(tmp_path: Path) -> None:
    entry = gcs_entry(bucket="gs://lake/x", region="us", endpoint="127.0.0.1:4443")
    entry["catalog"] = {"type": "glue"}
    entry["secrets"] = {"aws_access_key": "AKIAFAKE0000", "aws_secret_key": "s3cr3t-value"}
    msg = error_of(entry, tmp_path)
    assert msg.startswith("The inline depot in the profile has 5 problems:"), msg
    assert "Unknown spec.gcs key 'region'. Accepted: bucket, endpoint, project, relativePath" in msg
    assert "spec.gcs.bucket must be a bare bucket name; got 'gs://lake/x'" in msg
    assert "The GCS endpoint from depot spec.gcs.endpoint is not an http(s) URL" in msg
    assert "The glue catalog needs S3 storage; got storageType gcs." in msg
    assert (
        "A GCS depot takes no AWS keys; got secrets.aws_access_key, secrets.aws_secret_key" in msg
    )
    assert "s3cr3t-value" not in msg and "AKIAFAKE0000" not in msg


def test_missing_bucket_says_what_is_accepted(tmp_path: Path) -> None:
    entry = gcs_entry()
    del entry["spec"]["gcs"]["bucket"]
    assert "spec.gcs.bucket is missing. Accepted: a bucket name" in error_of(entry, tmp_path)
    entry["spec"] = {"storageType": "gcs"}
    msg = error_of(entry, tmp_path)
    assert "storageType gcs needs a `spec.gcs` mapping; it is missing." in msg
    assert "spec: {storageType: gcs, gcs: {bucket: <bucket>" in msg


def test_a_whole_key_is_accepted_and_never_shown(tmp_path: Path) -> None:
    key = service_account_key()
    entry = {**gcs_entry(), "secrets": {"gcs_key_json": key}}
    depot = resolve(entry, tmp_path)
    assert depot.secrets.gcs_key_json.reveal() == key
    private = json.loads(key)["private_key"]
    for text in (repr(depot), str(depot.secrets), repr(depot.storage)):
        assert "PRIVATE KEY" not in text and "0123456789abcdef" not in text
    # Masking covers the key as a whole, its private key, and each line of the PEM body.
    hidden = depot.secret_values()
    assert key in hidden and private in hidden
    assert all(line in hidden for line in private.splitlines() if "-----" not in line)


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("/home/me/key.json", "looks like a file path (value not shown). It must be the key file"),
        ('{"type": "service_account", ', "looks like broken JSON"),
        ('["a"]', "must be a JSON object"),
        (
            '{"type": "authorized_user", "client_email": "a", "private_key": "b", '
            '"private_key_id": "c"}',
            "is not a service-account key: its type is 'authorized_user'",
        ),
        ('{"type": "service_account", "client_email": "a"}', "lacks private_key, private_key_id"),
    ],
)
def test_a_broken_key_is_described_never_echoed(tmp_path: Path, key: str, expected: str) -> None:
    msg = error_of({**gcs_entry(), "secrets": {"gcs_key_json": key}}, tmp_path)
    assert expected in msg, msg
    assert "GOOGLE_APPLICATION_CREDENTIALS" in msg or "key file" in msg
    assert "/home/me" not in msg


def test_a_gcs_key_on_an_s3_depot_is_refused(tmp_path: Path) -> None:
    entry = {
        "type": "lakehouse",
        "spec": {"storageType": "s3", "s3": {"bucket": "b", "region": "us-east-1"}},
        "catalog": {"type": "hadoop"},
        "secrets": {"gcs_key_json": service_account_key()},
    }
    msg = error_of(entry, tmp_path)
    assert "secrets.gcs_key_json is for storageType gcs; this depot's storageType is s3" in msg
    assert "PRIVATE" not in msg


def test_the_delta_mirror_is_refused_on_gcs(tmp_path: Path) -> None:
    entry = gcs_entry()
    entry["spec"]["tableFormats"] = ["iceberg", "delta"]
    msg = error_of(entry, tmp_path)
    assert "the Delta log beside Iceberg is not available on GCS depots yet" in msg
    # ...and where a model asks for it, before delta-rs is given a gs:// path.
    from dbt.adapters.lakehouse.delta_mirror.storage import storage_options
    from dbt.adapters.lakehouse.profile.depot.table_defaults import DeltaConfigError

    with pytest.raises(DeltaConfigError) as info:
        storage_options(resolve(gcs_entry(), tmp_path))
    assert "not available on GCS depots yet; depot 'inline' is on gs://lake-bucket" in str(
        info.value.msg
    )
