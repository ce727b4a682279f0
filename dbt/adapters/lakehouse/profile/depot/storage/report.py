"""What a `dbt debug` preflight found: the checks that passed and the problems, each with its
fix, raised together as one error; what every object store's checks start from (`StoreChecks`);
and the small helpers the storage and catalog checks share.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

from dbt.adapters.lakehouse.exceptions import PreflightError
from dbt.adapters.lakehouse.profile.depot.model import DepotSecrets
from dbt.adapters.lakehouse.profile.secrets import Secret


@dataclass
class PreflightReport:
    """What passed (one line each) and what failed (what is wrong, given, and the fix)."""

    passed: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def raise_for_problems(self, depot_label: str) -> None:
        if not self.problems:
            return
        bullets = "\n".join("- " + p.replace("\n", "\n  ") for p in self.problems)
        raise PreflightError(
            f"Preflight of the depot ({depot_label}) found {len(self.problems)} problem(s):\n"
            f"{bullets}"
        )


class ObjectStore(Protocol):
    """What the checks read of any object store's storage (model.py's S3, GCS, abfss)."""

    @property
    def relative_path(self) -> str: ...

    @property
    def endpoint(self) -> str | None: ...

    @property
    def warehouse_uri(self) -> str: ...


Store = TypeVar("Store", bound=ObjectStore)
Client = TypeVar("Client")


class StoreChecks(Generic[Store, Client]):
    """What each object store's checks start from: its storage and secrets, the injected way to
    reach it (`client`: tests replace it), how long a call may take, the report they fill, and
    the names their messages give the folder and a store that is not the cloud's own."""

    def __init__(
        self,
        storage: Store,
        secrets: DepotSecrets,
        client: Client,
        timeout: float,
        report: PreflightReport,
    ) -> None:
        self.storage = storage
        self.secrets = secrets
        self.client = client
        self.timeout = timeout
        self.report = report
        self.prefix = f"{storage.relative_path}/" if storage.relative_path else ""
        self.location = f"{storage.warehouse_uri}/"
        self.where = f" at {storage.endpoint}" if storage.endpoint else ""


def reveal(secret: Secret | None) -> str | None:
    return secret.reveal() if secret else None


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
