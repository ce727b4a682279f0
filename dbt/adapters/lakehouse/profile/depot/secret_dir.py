"""The DataOS secret directory resolver: `$DATAOS_SECRET_DIR/<depot>_config.yaml`.

DataOS 2.0 resolves `dataos://<depot>?purpose=...` when it deploys a resource and writes one
file per declared depot into the secret directory (default `/etc/dataos/secret`); its own
clients read the file's `connection:` mapping and make no HTTP call. We do the same. What a
lakehouse depot's `connection:` holds is not public, so any shape dataos_shapes.py accepts is
taken, with its secrets under `connection.secrets` (either spelling) or `secrets:` beside it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import yaml

from dbt.adapters.lakehouse.exceptions import DepotConfigError
from dbt.adapters.lakehouse.profile.depot.dataos_secrets import our_secret_keys
from dbt.adapters.lakehouse.profile.depot.dataos_shapes import Spelled, run_as_token, spelled_entry
from dbt.adapters.lakehouse.profile.depot.model import _Context

DEFAULT_SECRET_DIR = "/etc/dataos/secret"


@dataclass(frozen=True)
class SecretDirHit:
    path: Path
    spelled: Spelled


def secret_dir_path(name: str, ctx: _Context) -> Path:
    """Where DataOS would have written the depot's file (whether or not it is there)."""
    folder = ctx.getenv("DATAOS_SECRET_DIR") or DEFAULT_SECRET_DIR
    return Path(folder) / f"{name}_config.yaml"


def describe_secret_dir(name: str, ctx: _Context) -> str:
    """The place looked, for the 'none answered' report."""
    path = secret_dir_path(name, ctx)
    source = "DATAOS_SECRET_DIR" if ctx.getenv("DATAOS_SECRET_DIR") else "the default folder"
    return f"DataOS secret dir ({source}): {path} {'exists' if path.is_file() else 'not found'}"


def from_secret_dir(name: str, ctx: _Context) -> SecretDirHit | None:
    """The depot's entry from its secret-dir file, None when there is no file."""
    path = secret_dir_path(name, ctx)
    if not path.is_file():
        return None
    where = f"DataOS secret file {path}"
    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise DepotConfigError(f"Cannot read {where}: {exc.strerror}.") from None
    except yaml.YAMLError as exc:
        # Only the position: YAML's own message quotes the line, and this file holds secrets.
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark else ""
        raise DepotConfigError(
            f"{where} is not valid YAML{at} (contents not shown: it holds secrets)."
        ) from None
    connection = document.get("connection") if isinstance(document, Mapping) else None
    if not isinstance(connection, Mapping):
        raise DepotConfigError(
            f"{where} has no `connection:` mapping; DataOS writes each depot's settings "
            "there. Accepted: `connection: {type: lakehouse, spec: {...}, ...}`."
        )
    secrets: dict[str, str] = {}
    for held in (document.get("secrets"), connection.get("secrets")):
        if isinstance(held, Mapping):
            secrets.update(our_secret_keys(held, where))
    body = {k: v for k, v in connection.items() if k != "secrets"}
    spelled = spelled_entry(body, secrets, where)
    run_as_token(spelled.entry, where, ctx)
    return SecretDirHit(path, spelled)
