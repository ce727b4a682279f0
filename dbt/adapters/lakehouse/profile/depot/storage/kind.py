"""What a storage kind (S3, GCS, abfss, a local folder) answers, whoever asks.

One module (or package) per kind subclasses `StorageKind` and is registered in registry.py; the
depot schema (parse.py, precedence.py, dataos_shapes.py), engine/sparkconf.py and spec.py,
profile/resolved.py and preflight.py, delta_mirror/storage.py, iceberg/pyiceberg_rest.py and
embedded/pyiceberg_catalog.py ask the registry for a depot's kind instead of testing its storage's
class. The kinds live in the depot layer, so they see no engine or feature module: the Spark conf
they add is plain keys and values into `ConfParts`, which sparkconf.py owns.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from dbt.adapters.lakehouse.profile.depot.aws_role import ROLE_KEYS, AwsRole
from dbt.adapters.lakehouse.profile.depot.draft import _Draft
from dbt.adapters.lakehouse.profile.depot.model import Depot, Storage, _Context
from dbt.adapters.lakehouse.profile.depot.storage.report import PreflightReport
from dbt.adapters.lakehouse.profile.secrets import MASK, Secret

HADOOP_FILE_IO = "org.apache.iceberg.hadoop.HadoopFileIO"

# What one kind's catalogs of a session claimed: the key its JVM client is cached by (a
# bucket, a container) -> (catalog name, depot).
Owners = dict[Any, tuple[str, Depot]]
# pyiceberg properties of a storage: the public ones, and the secret ones kept as `Secret`s
# until the catalog is opened.
FileIoProperties = tuple[dict[str, str], dict[str, Secret]]
S = TypeVar("S")


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


@dataclass(frozen=True)
class Section:
    """A kind's `spec.<storageType>` section and credential forms, as its section module reads
    them: `keys`, the section's keys; `read`, its values into the draft (parse.py checked the
    keys); `resolve`, the storage the draft names with precedence's defaults, None after a
    problem; `check_secrets`, its credential forms: on a depot of this kind (the last argument,
    `own`) resolved into the values from the depot or the environment, on another kind's
    refused or checked."""

    keys: tuple[str, ...]
    read: Callable[[Mapping[Any, Any], _Draft, str, list[str]], None]
    resolve: Callable[[_Draft, _Context, list[str]], Storage | None]
    check_secrets: Callable[[_Draft, _Context, dict[str, str], list[str], bool], None]


class StorageKind(ABC, Generic[S]):
    """One storageType: its storage class, its section, and what each stage needs of it. The
    abstract methods are what every kind answers; the others default to the answer of a kind
    without that concern (no IAM role, every table format, one client per store not an issue,
    nothing to prepare on this machine, not opened by pyiceberg), so a kind overrides only what
    it has."""

    def __init__(self, storage_type: str, storage_class: type[S], section: Section) -> None:
        self.storage_type = storage_type
        self.storage_class = storage_class
        self.section = section

    def storage(self, depot: Depot) -> S:
        """The depot's storage, typed as this kind's (the registry hands a depot only to its
        own kind)."""
        assert isinstance(depot.storage, self.storage_class)
        return depot.storage

    def resolve_role(
        self, draft: _Draft, ctx: _Context, storage: Storage | None, problems: list[str]
    ) -> AwsRole | None:
        """The IAM role the depot's clients act as (aws_role.py), where the kind has one; a kind
        without AWS clients refuses the aws_role_* keys rather than leave them unused."""
        if ctx.aws_role or any(k in draft.secrets for k in ROLE_KEYS):
            problems.append(
                f"aws_role_arn needs S3 storage; got storageType {self.storage_type}. Accepted: "
                f"no aws_role_* keys for a {self.storage_type} depot (in its secrets or the "
                "profile)."
            )
        return None

    def check_catalog(self, draft: _Draft, problems: list[str], own: bool) -> None:
        """A catalog type only this kind's depots can hold, refused on another kind's (`own`:
        the draft is this kind's depot)."""

    def check_table_formats(self, table_formats: tuple[str, ...], problems: list[str]) -> None:
        """Refuse a table format of `spec.tableFormats` the kind cannot hold yet."""

    def read_dataos_block(self, block: Mapping[str, Any], own: dict[str, Any]) -> None:
        """DataOS fields of its storage block that are not ours, made ours in `own` (the
        block's fields that are ours, copied as they are)."""

    def claim(self, owners: Owners, catalog_name: str, depot: Depot) -> None:
        """Refuse a second catalog on a store the JVM keeps one client for, unless it has the
        same settings (owners: what this kind's catalogs of one session claimed so far)."""

    def local_folder(self, depot: Depot) -> Path | None:
        """The folder on this machine that holds the depot's tables, if it is one."""
        return None

    def prepare(self, depot: Depot, label: str, read_only: bool = False) -> None:
        """Make the storage ready for a depot's first command (`label` names the depot)."""

    @abstractmethod
    def add_catalog_conf(self, depot: Depot, prefix: str, default: bool, parts: ConfParts) -> None:
        """The catalog's storage settings (`prefix`: spark.sql.catalog.<name>; `default`: the
        profile's own depot, whose settings may be the session's)."""

    def error_context(self, depot: Depot) -> Mapping[str, str | None]:
        """What an engine error's message may name of the storage (no secrets)."""
        return {}

    @abstractmethod
    def preflight(
        self, depot: Depot, clients: PreflightClients, timeout: float, report: PreflightReport
    ) -> list[str]:
        """`dbt debug`'s checks of the storage into `report`; returns the secrets they made
        (temporary credentials), for masking."""

    @abstractmethod
    def delta_options(self, depot: Depot) -> StorageOptions:
        """delta-rs (object_store) options: the log lands where the catalog's files are."""

    def pyiceberg_properties(self, depot: Depot) -> FileIoProperties | None:
        """pyiceberg's FileIO properties for the depot's storage, the same values the JVM's
        FileIO gets; None where pyiceberg is not given this kind (the caller keeps the JVM)."""
        return None
