"""Depot resolution: a profile target's `depot` turned into one typed, validated `Depot`.

This module owns the user's depot vocabulary (docs/architecture.md, "Depots"): the embedded
local lakehouse, `dataos://<name>` looked up in a depots file, an inline depot mapping, and the
DataOS / Nilus environment variables; the precedence of region, endpoint and credentials; and
the depot types, whose reprs never show a secret (secrets.py owns what a secret is). Spark is
not its business (see sparkconf.py).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, NoReturn
from urllib.parse import unquote, urlsplit

import yaml
from jinja2 import StrictUndefined
from jinja2.sandbox import ImmutableSandboxedEnvironment

from dbt.adapters.lakehouse.credentials import DEFAULT_WAREHOUSE_DIR
from dbt.adapters.lakehouse.exceptions import DepotConfigError
from dbt.adapters.lakehouse.secrets import Secret, is_secret_key, safe_url, uri_has_secret

DEPOT_SCHEME = "dataos"
ENV_DEPOT = "env"
CATALOG_TYPES = ("rest", "hadoop", "jdbc", "glue", "nessie")
STORAGE_TYPES = ("s3", "file")
ENV_DEPOT_TYPES = ("S3", "LAKEHOUSE")
DEPOTS_FILE_NAME = "depots.yml"

_TOP_KEYS = ("type", "spec", "catalog", "secrets")
_SPEC_KEYS = ("storageType", "s3", "file")
_S3_KEYS = ("bucket", "relativePath", "region", "endpoint")
_FILE_KEYS = ("path",)
_CATALOG_KEYS = ("type", "uri", "warehouse", "properties")
_SCHEME_RE = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://(.*)$", re.DOTALL)
_DEPOT_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_HINT_ADDRESS = "Use depot: dataos://<depot-name>, an inline depot mapping, or env."


@dataclass(frozen=True)
class S3Storage:
    bucket: str
    relative_path: str
    region: str
    endpoint: str | None = None

    def __post_init__(self) -> None:
        # "warehouse/", "/a//b/" and "" all name a prefix; keep one spelling of each.
        object.__setattr__(self, "relative_path", _normalise_prefix(self.relative_path))

    @property
    def warehouse_uri(self) -> str:
        suffix = f"/{self.relative_path}" if self.relative_path else ""
        return f"s3://{self.bucket}{suffix}"


@dataclass(frozen=True)
class LocalStorage:
    path: Path

    def __post_init__(self) -> None:
        if not Path(self.path).is_absolute():
            raise ValueError(f"LocalStorage needs an absolute path, got {self.path}")

    @property
    def warehouse_uri(self) -> str:
        # Hadoop's Path wants `file:/abs` with the path unescaped (as_uri would %-encode it).
        return f"file:{Path(self.path).as_posix()}"


@dataclass(frozen=True, repr=False)
class CatalogSpec:
    type: str
    uri: str | None = None
    warehouse: str | None = None
    # Free-form Iceberg catalog properties; hash=False because a dict cannot be hashed.
    properties: dict[str, str] = field(default_factory=dict, hash=False)

    def __repr__(self) -> str:
        shown = {k: ("****" if is_secret_key(k) else v) for k, v in self.properties.items()}
        uri = "****" if self.uri and uri_has_secret(self.uri) else self.uri
        return (
            f"CatalogSpec(type={self.type!r}, uri={uri!r}, warehouse={self.warehouse!r}, "
            f"properties={shown!r})"
        )


@dataclass(frozen=True)
class DepotSecrets:
    aws_access_key: Secret | None = None
    aws_secret_key: Secret | None = None
    aws_session_token: Secret | None = None
    apikey: Secret | None = None
    jdbc_user: Secret | None = None
    jdbc_password: Secret | None = None


_SECRET_KEYS = tuple(f.name for f in fields(DepotSecrets))


@dataclass(frozen=True)
class Depot:
    name: str
    storage: S3Storage | LocalStorage
    catalog: CatalogSpec
    secrets: DepotSecrets
    source: str
    embedded: bool = False

    def secret_values(self) -> list[str]:
        """Every credential the depot holds, for masking in messages (secrets.scrub)."""
        held = (getattr(self.secrets, f.name) for f in fields(self.secrets))
        values = [s.reveal() for s in held if isinstance(s, Secret) and s]
        values += [v for k, v in self.catalog.properties.items() if is_secret_key(k) and v]
        return values


@dataclass(frozen=True)
class _Context:
    env: Mapping[str, str]
    cwd: Path
    home: Path
    aws_region: str | None
    aws_endpoint: str | None

    def getenv(self, name: str) -> str | None:
        # Unset and empty are the same: `export X=` is how shells "unset" in CI files.
        value = (self.env.get(name) or "").strip()
        return value or None


@dataclass
class _Draft:
    """A depot's fields as written, before precedence and cross-field checks."""

    storage_type: str | None = None
    bucket: str | None = None
    relative_path: str = ""
    region: str | None = None
    endpoint: str | None = None
    file_path: str | None = None
    catalog_type: str | None = "rest"
    catalog_uri: str | None = None
    catalog_warehouse: str | None = None
    properties: dict[str, str] = field(default_factory=dict)
    secrets: dict[str, str] = field(default_factory=dict)


def parse_depot_address(address: str) -> str:
    """`dataos://aws-lakehouse-depot` -> `aws-lakehouse-depot`."""
    text = address.strip()
    match = _SCHEME_RE.match(text)
    if match is None:
        hint = _HINT_ADDRESS
        if text.lower() == ENV_DEPOT:
            hint += f" (`env` is lower case; got {text!r}.)"
        elif _DEPOT_NAME_RE.match(text):
            hint += f" Did you mean dataos://{text}?"
        raise DepotConfigError(f"Unsupported scheme: {text}. Expected 'dataos://'\n{hint}")
    scheme, rest = match.group(1), match.group(2)
    if scheme.lower() != DEPOT_SCHEME:
        # Only the scheme is echoed: the rest of a URL may carry user:password@.
        raise DepotConfigError(
            f"Unsupported scheme: {scheme}. Expected 'dataos://'\n{_HINT_ADDRESS}"
        )
    name = rest.strip().rstrip("/")
    if not _DEPOT_NAME_RE.match(name):
        raise DepotConfigError(
            f"Invalid depot address: dataos://{name}. A depot address is dataos://<depot-name>, "
            "where the name uses letters, digits, '-', '_' and '.' (e.g. "
            "dataos://aws-lakehouse-depot)."
        )
    return name


def depots_file_candidates(
    depots_file: str | None,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    home: Path | None = None,
) -> list[Path]:
    """Where a depots file is looked for, in order; the first that exists is used."""
    env = os.environ if env is None else env
    cwd = _absolute_cwd(cwd)
    home = Path.home() if home is None else home
    candidates: list[Path] = []
    for configured in (depots_file, env.get("LAKEHOUSE_DEPOTS_FILE")):
        if configured and configured.strip():
            candidates.append(_absolute(configured.strip(), cwd, home))
    candidates.append(cwd / DEPOTS_FILE_NAME)
    candidates.append(home / ".dbt" / DEPOTS_FILE_NAME)
    return candidates


def resolve_depot(
    *,
    depot: str | dict[str, Any] | None,
    depots_file: str | None,
    warehouse: str | None,
    aws_region: str | None,
    aws_endpoint: str | None,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    home: Path | None = None,
) -> Depot:
    """The one Depot a profile target means; raises DepotConfigError listing every problem."""
    ctx = _Context(
        env=os.environ if env is None else env,
        cwd=_absolute_cwd(cwd),
        home=Path.home() if home is None else home,
        aws_region=(aws_region or "").strip() or None,
        aws_endpoint=(aws_endpoint or "").strip() or None,
    )
    if depot is None:
        return _embedded_depot(warehouse, ctx)
    if isinstance(depot, Mapping):
        draft, problems = _draft_from_entry(depot)
        return _finish(draft, problems, "inline", "inline depot", ctx)
    if not isinstance(depot, str):
        raise DepotConfigError(
            f"The profile's `depot` must be a string or a mapping; got {_kind(depot)}. "
            f"{_HINT_ADDRESS}"
        )
    if not depot.strip():
        # An empty value (often an unset env var) must not silently mean "embedded".
        raise DepotConfigError(
            f"The profile's `depot` is empty. {_HINT_ADDRESS} Leave `depot` out entirely for "
            "the embedded local lakehouse."
        )
    if depot.strip() == ENV_DEPOT:
        return _env_depot(ctx)
    name = parse_depot_address(depot)
    path = _find_depots_file(name, depots_file, ctx)
    entry = _load_entry(path, name, depots_file, ctx)
    rendered = _render(entry, name, path, _template_env(ctx.env), key_path="")
    draft, problems = _draft_from_entry(rendered)
    return _finish(draft, problems, name, f"depots file {path}", ctx)


# --- the embedded lakehouse ------------------------------------------------------------------


def _embedded_depot(warehouse: str | None, ctx: _Context) -> Depot:
    given = (warehouse or "").strip() or ctx.getenv("LAKEHOUSE_WAREHOUSE")
    if given:
        where = "profile `warehouse`" if (warehouse or "").strip() else "LAKEHOUSE_WAREHOUSE"
        path = _local_folder(given, where, ctx)
    else:
        project_dir = ctx.getenv("DBT_PROJECT_DIR")
        base = _absolute(project_dir, ctx.cwd, ctx.home) if project_dir else ctx.cwd
        path = base / DEFAULT_WAREHOUSE_DIR
    if ";" in str(path):
        raise DepotConfigError(
            f"The embedded lakehouse folder cannot contain ';' (H2 reads it as a URL option "
            f"separator); got {path}. Accepted: a folder path without ';'."
        )
    storage = LocalStorage(path)
    catalog = CatalogSpec(
        type="jdbc",
        uri=embedded_catalog_uri(path),
        warehouse=storage.warehouse_uri,
    )
    return Depot("embedded", storage, catalog, DepotSecrets(), "embedded", embedded=True)


def embedded_catalog_uri(path: Path) -> str:
    """The H2 database behind the embedded catalog.

    AUTO_SERVER lets several processes share it. DATABASE_TO_LOWER keeps the catalog tables'
    names lowercase as Iceberg's JdbcCatalog looks them up: with H2's default upper-casing, its
    schema check misses an existing column and fails in every process after the first.
    """
    return (
        f"jdbc:h2:file:{path.as_posix()}/_catalog/iceberg;AUTO_SERVER=TRUE;DATABASE_TO_LOWER=TRUE"
    )


def _local_folder(given: str, where: str, ctx: _Context) -> Path:
    if given.lower().startswith("file:"):
        return _absolute(unquote(urlsplit(given).path), ctx.cwd, ctx.home)
    match = _SCHEME_RE.match(given)
    if match:
        raise DepotConfigError(
            f"{where} must be a local folder; got a {match.group(1)}:// location. Accepted: a "
            "path (absolute, relative to the project, or file:/...). For S3 use a depot: "
            "dataos://<depot-name>, an inline depot, or env."
        )
    return _absolute(given, ctx.cwd, ctx.home)


# --- the DataOS / Nilus environment ----------------------------------------------------------


def _env_depot(ctx: _Context) -> Depot:
    problems: list[str] = []
    draft = _Draft(storage_type="s3", catalog_type="rest")
    kind = ctx.getenv("TYPE")
    if kind is None:
        problems.append(
            "TYPE environment variable is not set. Accepted (case-insensitive): "
            + ", ".join(ENV_DEPOT_TYPES)
            + "."
        )
    elif kind.upper() not in ENV_DEPOT_TYPES:
        problems.append(
            f"TYPE environment variable is {kind!r}, which `depot: env` does not support. "
            f"Accepted (case-insensitive): {', '.join(ENV_DEPOT_TYPES)}."
        )
    destination = ctx.getenv("DESTINATION_BUCKET")
    match = _SCHEME_RE.match(destination or "")
    if destination is None:
        problems.append(
            "DESTINATION_BUCKET environment variable is required for `depot: env`; it is not "
            "set. Accepted: s3://<bucket>/<prefix> (or s3a://)."
        )
    elif match is None or match.group(1).lower() not in ("s3", "s3a"):
        given = f"{match.group(1)}://..." if match else repr(destination)
        problems.append(
            f"DESTINATION_BUCKET must be an S3 location; got {given}. Accepted: "
            "s3://<bucket>/<prefix> (or s3a://)."
        )
    else:
        bucket, _, prefix = match.group(2).partition("/")
        if _valid_bucket(bucket, "DESTINATION_BUCKET", problems):
            draft.bucket = bucket
            draft.relative_path = prefix
    return _finish(draft, problems, "env", "environment (DataOS variables)", ctx)


# --- depots files ----------------------------------------------------------------------------


def _find_depots_file(name: str, depots_file: str | None, ctx: _Context) -> Path:
    candidates = depots_file_candidates(depots_file, ctx.env, ctx.cwd, ctx.home)
    for path in candidates:
        if path.is_file():
            return path
    raise DepotConfigError(
        f"No depots file found for depot: dataos://{name}. Searched, in order: "
        f"{_search_report(candidates, None, depots_file, ctx)}. Accepted: set `depots_file:` "
        "in the profile, export LAKEHOUSE_DEPOTS_FILE=/path/to/depots.yml, or create "
        "./depots.yml or ~/.dbt/depots.yml with `depots: {<name>: {type: lakehouse, ...}}`."
    )


def _search_report(
    candidates: list[Path], used: Path | None, depots_file: str | None, ctx: _Context
) -> str:
    lines = []
    if not (depots_file or "").strip():
        lines.append("profile depots_file (not set)")
    if not (ctx.env.get("LAKEHOUSE_DEPOTS_FILE") or "").strip():
        lines.append("LAKEHOUSE_DEPOTS_FILE (not set)")
    for path in candidates:
        state = "exists" if path.is_file() else "not found"
        lines.append(f"{path} ({'used' if path == used else state})")
    return "; ".join(lines)


def _load_entry(path: Path, name: str, depots_file: str | None, ctx: _Context) -> Any:
    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise DepotConfigError(f"Cannot read depots file {path}: {exc.strerror}.") from None
    except yaml.YAMLError as exc:
        # Only the problem and position: YAML's own message quotes the line, maybe a secret.
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or type(exc).__name__
        raise DepotConfigError(
            f"Depots file {path} is not valid YAML: {problem}{at}. Accepted: a YAML mapping "
            "`depots: {<name>: {type: lakehouse, spec: ..., catalog: ..., secrets: ...}}`."
        ) from None
    depots = document.get("depots") if isinstance(document, Mapping) else None
    if not isinstance(depots, Mapping):
        raise DepotConfigError(
            f"Depots file {path} has no `depots:` mapping at the top; got "
            f"{_kind(depots if isinstance(document, Mapping) else document)}. Accepted: "
            "`depots: {<name>: {type: lakehouse, spec: ..., catalog: ..., secrets: ...}}`."
        )
    by_name = {str(key): value for key, value in depots.items()}
    if name not in by_name:
        known = ", ".join(sorted(by_name)) or "(none)"
        candidates = depots_file_candidates(depots_file, ctx.env, ctx.cwd, ctx.home)
        raise DepotConfigError(
            f"Unknown depot: dataos://{name} is not defined in {path}. Known depots there: "
            f"{known}. Files searched: {_search_report(candidates, path, depots_file, ctx)}. "
            f"Accepted: one of the known names, or add '{name}' under `depots:` in {path}."
        )
    return by_name[name]


class _MissingEnvVar(Exception):
    def __init__(self, variable: str) -> None:
        super().__init__(variable)
        self.variable = variable


def _template_env(env: Mapping[str, str]) -> ImmutableSandboxedEnvironment:
    def env_var(variable: str, default: object = None) -> str:
        value = env.get(variable)
        if value is not None:
            return value
        if default is not None:
            return str(default)
        raise _MissingEnvVar(variable)

    # A depots file is configuration, not code: a sandbox where env_var is the only name.
    jinja = ImmutableSandboxedEnvironment(undefined=StrictUndefined, autoescape=False)
    jinja.globals.clear()
    jinja.globals["env_var"] = env_var
    return jinja


def _render(
    value: Any, name: str, path: Path, jinja: ImmutableSandboxedEnvironment, key_path: str
) -> Any:
    """`{{ env_var('X') }}` / `{{ env_var('X', 'default') }}` in every string of a depot."""
    if isinstance(value, Mapping):
        return {
            k: _render(v, name, path, jinja, f"{key_path}.{k}" if key_path else str(k))
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_render(v, name, path, jinja, f"{key_path}[{i}]") for i, v in enumerate(value)]
    if not isinstance(value, str) or not any(m in value for m in ("{{", "{%", "{#")):
        return value
    try:
        return jinja.from_string(value).render()
    except _MissingEnvVar as exc:
        raise DepotConfigError(
            f"Environment variable {exc.variable} is not set, and env_var('{exc.variable}') "
            f"has no default. It is used by depot '{name}' in depots file {path} (at "
            f"{key_path}). Accepted: export {exc.variable}=..., or give a default: "
            f"{{{{ env_var('{exc.variable}', '<default>') }}}}."
        ) from None
    except Exception as exc:
        # Jinja's messages quote names from the template ("got 'x'", "'x' is undefined"): fine
        # for a bucket, not for a secret. And exc.message, never str(exc), which quotes source.
        detail = getattr(exc, "message", None) or type(exc).__name__
        if key_path.startswith("secrets") or is_secret_key(key_path):
            detail = f"{type(exc).__name__} (details withheld: this value is a secret)"
        raise DepotConfigError(
            f"Depot '{name}' in depots file {path} has a template error at {key_path}: "
            f"{detail}. Accepted: {{{{ env_var('NAME') }}}} or "
            "{{ env_var('NAME', 'default') }} (env_var is the only function available)."
        ) from None


# --- depot schema ----------------------------------------------------------------------------


def _draft_from_entry(entry: object) -> tuple[_Draft, list[str]]:
    draft = _Draft()
    problems: list[str] = []
    if not isinstance(entry, Mapping):
        return draft, [
            f"A depot must be a mapping with keys {', '.join(_TOP_KEYS)}; got {_kind(entry)}."
        ]
    _check_keys(entry, _TOP_KEYS, "depot", problems)
    depot_type = entry.get("type")
    if depot_type is not None and str(depot_type).strip().lower() != "lakehouse":
        problems.append(f"Depot type {_shown(depot_type)} is not supported. Accepted: lakehouse.")
    _parse_spec(entry.get("spec"), draft, problems)
    _parse_catalog(entry.get("catalog"), draft, problems)
    _parse_secrets(entry.get("secrets"), draft, problems)
    return draft, problems


def _parse_spec(spec: object, draft: _Draft, problems: list[str]) -> None:
    accepted = (
        "Accepted: spec: {storageType: s3, s3: {bucket: <bucket>, relativePath: <prefix>, "
        "region: <region>, endpoint: <url>}} or spec: {storageType: file, file: {path: <folder>}}."
    )
    if not isinstance(spec, Mapping):
        given = "it is missing" if spec is None else f"got {_kind(spec)}"
        problems.append(f"Depot `spec` must be a mapping; {given}. {accepted}")
        return
    _check_keys(spec, _SPEC_KEYS, "spec", problems)
    storage_type = _opt_str(spec, "storageType", "spec", problems)
    if storage_type is None:
        problems.append(f"spec.storageType is missing. Accepted: {', '.join(STORAGE_TYPES)}.")
        return
    if storage_type.lower() not in STORAGE_TYPES:
        problems.append(
            f"spec.storageType {storage_type!r} is not supported. Accepted: "
            f"{', '.join(STORAGE_TYPES)}."
        )
        return
    draft.storage_type = storage_type.lower()
    keys = _S3_KEYS if draft.storage_type == "s3" else _FILE_KEYS
    section = spec.get(draft.storage_type)
    where = f"spec.{draft.storage_type}"
    if not isinstance(section, Mapping):
        given = "it is missing" if section is None else f"got {_kind(section)}"
        problems.append(
            f"storageType {draft.storage_type} needs a `{where}` mapping; {given}. {accepted}"
        )
        return
    _check_keys(section, keys, where, problems)
    if draft.storage_type == "file":
        draft.file_path = _opt_str(section, "path", where, problems)
        if draft.file_path is None:
            problems.append(f"{where}.path is missing. Accepted: a local folder path.")
        return
    bucket = _opt_str(section, "bucket", where, problems)
    if bucket is None:
        problems.append(f"{where}.bucket is missing. Accepted: a bucket name, e.g. my-bucket.")
    elif _valid_bucket(bucket, f"{where}.bucket", problems):
        draft.bucket = bucket
    draft.relative_path = _opt_str(section, "relativePath", where, problems) or ""
    draft.region = _opt_str(section, "region", where, problems)
    draft.endpoint = _opt_str(section, "endpoint", where, problems)


def _parse_catalog(catalog: object, draft: _Draft, problems: list[str]) -> None:
    if catalog is None:
        return
    if not isinstance(catalog, Mapping):
        problems.append(
            f"Depot `catalog` must be a mapping; got {_kind(catalog)}. Accepted: "
            "catalog: {type: rest|hadoop|jdbc|glue|nessie, uri: ..., warehouse: ..., "
            "properties: {...}}."
        )
        return
    _check_keys(
        catalog,
        _CATALOG_KEYS,
        "catalog",
        problems,
        hint=" Other Iceberg catalog properties go under catalog.properties.",
    )
    catalog_type = _opt_str(catalog, "type", "catalog", problems)
    if catalog_type is not None and catalog_type.lower() not in CATALOG_TYPES:
        problems.append(
            f"catalog.type {catalog_type!r} is not supported. Accepted: {', '.join(CATALOG_TYPES)}."
        )
        draft.catalog_type = None
    elif catalog_type is not None:
        draft.catalog_type = catalog_type.lower()
    draft.catalog_uri = _opt_str(catalog, "uri", "catalog", problems)
    draft.catalog_warehouse = _opt_str(catalog, "warehouse", "catalog", problems)
    properties = catalog.get("properties")
    if properties is None:
        return
    if not isinstance(properties, Mapping):
        problems.append(
            f"catalog.properties must be a mapping of strings; got {_kind(properties)}."
        )
        return
    for key, value in properties.items():
        if isinstance(value, bool):
            draft.properties[str(key)] = "true" if value else "false"  # Java spelling
        elif isinstance(value, str | int | float):
            draft.properties[str(key)] = str(value)
        else:
            problems.append(
                f"catalog.properties.{key} must be a string, number or boolean; got {_kind(value)}."
            )


def _parse_secrets(secrets: object, draft: _Draft, problems: list[str]) -> None:
    if secrets is None:
        return
    if not isinstance(secrets, Mapping):
        problems.append(
            f"Depot `secrets` must be a mapping; got {_kind(secrets)}. Accepted keys: "
            f"{', '.join(_SECRET_KEYS)}."
        )
        return
    _check_keys(secrets, _SECRET_KEYS, "secrets", problems)
    for key in _SECRET_KEYS:
        value = secrets.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, str | int):
            # The kind only: even a mistyped secret's value must not be echoed.
            problems.append(f"secrets.{key} must be a string; got {_kind(value)}.")
            continue
        # Empty means unset: `{{ env_var('AWS_SESSION_TOKEN', '') }}` is the usual idiom.
        if str(value).strip():
            draft.secrets[key] = str(value).strip()


# --- precedence and cross-field checks -------------------------------------------------------


def _finish(draft: _Draft, problems: list[str], name: str, source: str, ctx: _Context) -> Depot:
    storage = _resolve_storage(draft, ctx, problems)
    catalog = _resolve_catalog(draft, ctx, problems)
    secrets = _resolve_secrets(draft, ctx, problems)
    if problems or storage is None or catalog is None:
        _raise(problems or ["The depot is incomplete."], name, source)
    return Depot(name, storage, catalog, secrets, source, embedded=False)


def _resolve_storage(
    draft: _Draft, ctx: _Context, problems: list[str]
) -> S3Storage | LocalStorage | None:
    if draft.storage_type == "file" and draft.file_path:
        try:
            return LocalStorage(_local_folder(draft.file_path, "spec.file.path", ctx))
        except DepotConfigError as exc:
            problems.append(exc.msg)
            return None
    if draft.storage_type != "s3":
        return None
    region, _ = _first(
        ("profile aws_region", ctx.aws_region),
        ("depot spec.s3.region", draft.region),
        ("AWS_REGION", ctx.getenv("AWS_REGION")),
        ("AWS_DEFAULT_REGION", ctx.getenv("AWS_DEFAULT_REGION")),
    )
    endpoint, endpoint_from = _first(
        ("profile aws_endpoint", ctx.aws_endpoint),
        ("depot spec.s3.endpoint", draft.endpoint),
        ("AWS_ENDPOINT", ctx.getenv("AWS_ENDPOINT")),
    )
    ok = True
    if region is None:
        ok = False
        problems.append(
            "S3 storage needs an AWS region, and none is set. Given: no profile aws_region, no "
            "depot spec.s3.region, no AWS_REGION (or AWS_DEFAULT_REGION) environment variable. "
            "Accepted: set one of those three, e.g. us-east-1 (S3-compatible stores such as "
            "MinIO accept us-east-1)."
        )
    if endpoint is not None and not endpoint.lower().startswith(("http://", "https://")):
        ok = False
        problems.append(
            f"The S3 endpoint from {endpoint_from} is not an http(s) URL; got "
            f"{safe_url(endpoint)!r}. Accepted: http://host:port or https://host."
        )
    if not ok or draft.bucket is None or region is None:
        return None
    return S3Storage(
        bucket=draft.bucket,
        relative_path=draft.relative_path,
        region=region,
        endpoint=endpoint.rstrip("/") if endpoint else None,
    )


def _resolve_secrets(draft: _Draft, ctx: _Context, problems: list[str]) -> DepotSecrets:
    values = dict(draft.secrets)
    has_keys = any(k in values for k in ("aws_access_key", "aws_secret_key", "aws_session_token"))
    if has_keys:
        _check_key_pair(
            values,
            ("aws_access_key", "aws_secret_key", "aws_session_token"),
            "depot secrets",
            problems,
        )
    elif draft.storage_type == "s3":
        # No keys in the depot: the DataOS variables; none there either: the default chain.
        env_names = {
            "aws_access_key": "AWS_ACCESS_KEY_ID",
            "aws_secret_key": "AWS_SECRET_ACCESS_KEY",
            "aws_session_token": "AWS_SESSION_TOKEN",
        }
        from_env = {k: v for k, name in env_names.items() if (v := ctx.getenv(name))}
        _check_key_pair(
            from_env,
            ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"),
            "the environment",
            problems,
        )
        values.update(from_env)
    if draft.catalog_type == "rest" and "apikey" not in values:
        apikey = ctx.getenv("LAKEHOUSE_APIKEY")
        if apikey:
            values["apikey"] = apikey
        else:
            problems.append(
                "'apikey' is required in Lakehouse depot secret.\nThe REST catalog "
                "authenticates with a bearer token. Given: no secrets.apikey in the depot and "
                "no LAKEHOUSE_APIKEY environment variable. Accepted: secrets.apikey in the "
                "depot (e.g. \"{{ env_var('LAKEHOUSE_APIKEY') }}\"), or LAKEHOUSE_APIKEY in "
                "the environment."
            )
    return DepotSecrets(**{k: Secret(v) for k, v in values.items()})


def _check_key_pair(
    values: Mapping[str, str], names: tuple[str, str, str], where: str, problems: list[str]
) -> None:
    given = [bool(values.get(k)) for k in _SECRET_KEYS[:3]]
    access, secret, token = given
    if access == secret and (access or not token):
        return
    access_name, secret_name, token_name = names
    missing = [n for n, v in zip(names[:2], given[:2], strict=True) if not v]
    present = [n for n, v in zip(names, given, strict=True) if v]
    problems.append(
        f"AWS credentials in {where} are incomplete, missing {' and '.join(missing)}. "
        f"Given: {', '.join(present)} (values not shown). Accepted: both "
        f"{access_name} and {secret_name} (plus {token_name} for temporary credentials), or "
        "none of them to use the default AWS credential chain."
    )


def _resolve_catalog(draft: _Draft, ctx: _Context, problems: list[str]) -> CatalogSpec | None:
    kind, uri = draft.catalog_type, draft.catalog_uri
    if kind is None:
        return None
    if kind == "rest" and uri is None:
        uri = ctx.getenv("METASTORE_URL")
        if uri is None:
            problems.append(
                "METASTORE_URL environment variable is required for Lakehouse destination\n"
                "The REST catalog has no uri. Given: no catalog.uri in the depot and no "
                "METASTORE_URL environment variable. Accepted: catalog.uri in the depot, or "
                "METASTORE_URL=https://<host>/<path> in the environment."
            )
            return None
    if kind in ("rest", "nessie"):
        if uri is None:
            problems.append(
                "The nessie catalog needs catalog.uri; it is not set. Accepted: the Nessie "
                "API URL, e.g. http://nessie:19120/api/v2."
            )
            return None
        if not uri.lower().startswith(("http://", "https://")):
            problems.append(
                f"The {kind} catalog uri must be an http(s) URL; got {safe_url(uri)!r}. "
                "Accepted: http://host:port/path or https://host/path."
            )
    elif kind == "jdbc":
        if uri is None or not uri.lower().startswith("jdbc:"):
            given = "it is not set" if uri is None else f"got {safe_url(uri)!r}"
            problems.append(
                f"The jdbc catalog needs catalog.uri, a JDBC URL; {given}. Accepted: e.g. "
                "jdbc:postgresql://host:5432/iceberg (the driver jar goes in spark.jars)."
            )
    elif uri is not None:
        problems.append(
            f"The {kind} catalog takes no catalog.uri; got {safe_url(uri)!r}. Accepted: no "
            "uri ("
            + ("Glue is found by region" if kind == "glue" else "metadata lives in the warehouse")
            + "); remove it, or choose catalog.type rest, nessie or jdbc."
        )
    if kind == "glue" and draft.storage_type == "file":
        problems.append(
            "The glue catalog needs S3 storage; got storageType file. Accepted: storageType "
            "s3 with glue, or a hadoop/jdbc catalog for a local folder."
        )
    return CatalogSpec(kind, uri, draft.catalog_warehouse, dict(draft.properties))


# --- helpers ---------------------------------------------------------------------------------


def _raise(problems: list[str], name: str, source: str) -> NoReturn:
    label = {
        "inline": "the inline depot in the profile",
        "env": "the environment depot (DataOS variables)",
    }.get(name, f"depot '{name}' ({source})")
    if len(problems) == 1:
        raise DepotConfigError(f"{problems[0]}\nIn {label}.")
    bullets = "\n".join("- " + p.replace("\n", "\n  ") for p in problems)
    heading = f"{label[0].upper()}{label[1:]} has {len(problems)} problems:"
    raise DepotConfigError(f"{heading}\n{bullets}")


def _check_keys(
    section: Mapping[Any, Any],
    accepted: tuple[str, ...],
    where: str,
    problems: list[str],
    hint: str = "",
) -> None:
    unknown = sorted(str(k) for k in section if k not in accepted)
    if unknown:
        problems.append(
            f"Unknown {where} key(s): {', '.join(unknown)}. Accepted: {', '.join(accepted)}.{hint}"
        )


def _opt_str(section: Mapping[Any, Any], key: str, where: str, problems: list[str]) -> str | None:
    value = section.get(key)
    if value is None:
        return None
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        return str(value).strip() or None
    problems.append(f"{where}.{key} must be a string; got {_kind(value)}.")
    return None


def _valid_bucket(bucket: str, where: str, problems: list[str]) -> bool:
    """True when `bucket` is a bare bucket name; otherwise records why not."""
    if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", bucket):
        return True
    problems.append(
        f"{where} must be a bare bucket name; got {bucket!r}. Accepted: e.g. my-bucket "
        "(letters, digits, '.', '-', '_'); put the folder in relativePath, not the bucket."
    )
    return False


def _first(*candidates: tuple[str, str | None]) -> tuple[str | None, str | None]:
    for where, value in candidates:
        if value:
            return value, where
    return None, None


def _normalise_prefix(prefix: str) -> str:
    return "/".join(part for part in prefix.strip().split("/") if part)


def _absolute_cwd(cwd: Path | None) -> Path:
    base = Path.cwd() if cwd is None else Path(cwd)
    return Path(os.path.normpath(base if base.is_absolute() else Path.cwd() / base))


def _absolute(given: str, cwd: Path, home: Path) -> Path:
    if given == "~" or given.startswith("~/"):
        path = home / given[2:]
    else:
        path = Path(given)
    return Path(os.path.normpath(path if path.is_absolute() else cwd / path))


def _kind(value: object) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    return f"a {type(value).__name__}"


def _shown(value: object) -> str:
    text = str(value)
    return repr(text if len(text) <= 60 else text[:57] + "...")
