"""What a storage kind (S3, GCS, abfss, a local folder) answers, whoever asks.

One module (or package) per kind implements `StorageKind` and is registered in registry.py; the
depot schema (parse.py, precedence.py), engine/sparkconf.py, profile/preflight.py and
delta_mirror/storage.py ask the registry for a depot's kind instead of testing its storage's class.
The kinds live in the depot layer, so they see no engine or feature module: the Spark conf they add
is plain keys and values into `ConfParts`, which sparkconf.py owns.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from dbt.adapters.lakehouse.profile.depot.aws_role import AwsRole
from dbt.adapters.lakehouse.profile.depot.draft import _Draft
from dbt.adapters.lakehouse.profile.depot.model import Depot, Storage, _Context
from dbt.adapters.lakehouse.profile.depot.storage.report import PreflightReport
from dbt.adapters.lakehouse.profile.secrets import MASK

HADOOP_FILE_IO = "org.apache.iceberg.hadoop.HadoopFileIO"

# What one kind's catalogs of a session claimed: the key its JVM client is cached by (a
# bucket, a container) -> (catalog name, depot).
Owners = dict[Any, tuple[str, Depot]]


@dataclass
class ConfParts:
    """A catalog's Spark conf plan while it is built (engine/sparkconf.py's SparkConfPlan):
    `conf` goes to SparkConf and holds no secret, the other maps are applied at runtime."""

    conf: dict[str, str]
    secret_catalog: dict[str, str] = field(default_factory=dict)
    secret_hadoop: dict[str, str] = field(default_factory=dict)
    secret_system: dict[str, str] = field(default_factory=dict)
    jar_needs: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class PreflightClients:
    """The outside world `dbt debug`'s checks reach, injected so tests replace it; each kind
    uses its own (profile/preflight.py has the real ones)."""

    s3: Callable[..., Any]
    sts: Callable[..., Any]
    abfss: Callable[..., Any]
    gcs_request: Callable[..., Any]


class StorageOptions(dict[str, str]):
    """delta-rs options whose repr masks the credentials: options end up in tracebacks and
    debug output, the credentials must not."""

    def __init__(self, secret_keys: Iterable[str] = (), **options: str) -> None:
        super().__init__(**options)
        self.secret_keys = frozenset(secret_keys)

    def __repr__(self) -> str:
        shown = {k: (MASK if k in self.secret_keys else v) for k, v in self.items()}
        return f"StorageOptions({shown!r})"

    __str__ = __repr__


class StorageKind(Protocol):
    """One storageType: its storage class and what each stage needs of it."""

    storage_type: str
    storage_class: type
    # The keys of its `spec.<storageType>` section.
    section_keys: tuple[str, ...]

    def read_section(
        self, section: Mapping[Any, Any], draft: _Draft, where: str, problems: list[str]
    ) -> None:
        """The section's values into the draft (parse.py checked its keys)."""

    def resolve_storage(self, draft: _Draft, ctx: _Context, problems: list[str]) -> Storage | None:
        """The storage the draft names, with precedence's defaults; None after a problem."""

    def check_secrets(
        self, draft: _Draft, ctx: _Context, values: dict[str, str], problems: list[str], own: bool
    ) -> None:
        """Its credential forms: on a depot of this kind (`own`) resolved into `values` from
        the depot or the environment; on another kind's, refused or checked."""

    def resolve_role(
        self, draft: _Draft, ctx: _Context, storage: Storage | None, problems: list[str]
    ) -> AwsRole | None:
        """The IAM role the depot's clients act as (aws_role.py), where the kind has one."""

    def check_table_formats(self, table_formats: tuple[str, ...], problems: list[str]) -> None:
        """Refuse a table format of `spec.tableFormats` the kind cannot hold yet."""

    def claim(self, owners: Owners, catalog_name: str, depot: Depot) -> None:
        """Refuse a second catalog on a store the JVM keeps one client for, unless it has the
        same settings (owners: what this kind's catalogs of one session claimed so far)."""

    def add_catalog_conf(self, depot: Depot, prefix: str, default: bool, parts: ConfParts) -> None:
        """The catalog's storage settings (`prefix`: spark.sql.catalog.<name>; `default`: the
        profile's own depot, whose settings may be the session's)."""

    def error_context(self, depot: Depot) -> Mapping[str, str | None]:
        """What an engine error's message may name of the storage (no secrets)."""

    def preflight(
        self, depot: Depot, clients: PreflightClients, timeout: float, report: PreflightReport
    ) -> list[str]:
        """`dbt debug`'s checks of the storage into `report`; returns the secrets they made
        (temporary credentials), for masking."""

    def delta_options(self, depot: Depot) -> StorageOptions:
        """delta-rs (object_store) options: the log lands where the catalog's files are."""
