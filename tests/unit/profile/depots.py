"""What the depot unit tests share: distinctive fake secrets, a complete S3 + REST depot entry,
and resolve_depot called the way the tests call it."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from dbt.adapters.lakehouse.exceptions import DepotConfigError
from dbt.adapters.lakehouse.profile.depot import Depot, resolve_depot

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


def secret_dir(tmp_path: Path, name: str, connection: dict[str, Any]) -> Path:
    """A DataOS secret directory holding `<name>_config.yaml` with `connection`."""
    folder = tmp_path / "secret"
    folder.mkdir(exist_ok=True)
    (folder / f"{name}_config.yaml").write_text(yaml.safe_dump({"connection": connection}))
    return folder


def resolve_named(tmp_path: Path, name: str, **env: str) -> Any:
    """`dataos://<name>` resolved with only `env` (and AWS_REGION) around it."""
    return resolve_depot(depot=f"dataos://{name}", depots_file=None, warehouse=None,
                         aws_region=None, aws_endpoint=None, env={"AWS_REGION": "us-east-1",
                         **env}, cwd=tmp_path, home=tmp_path)  # fmt: skip
