"""The `type: lakehouse` profile target: typed fields, defaults, and what `dbt debug` may show.

Secrets never live here as plain fields worth printing: an inline depot may carry keys, so
`connection_info` and `repr` describe the depot by name and source only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from dbt.adapters.contracts.connection import Credentials
from dbt_common.dataclass_schema import dbtClassMixin
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.lakehouse.engine.jars.lines import engine_label
from dbt.adapters.lakehouse.engine.native import NATIVE_ENGINES, native_status
from dbt.adapters.lakehouse.engine.runtime import is_connect_master
from dbt.adapters.lakehouse.profile.depot.keys import unknown_key_problems
from dbt.adapters.lakehouse.profile.depot.paths import DEFAULT_WAREHOUSE_DIR
from dbt.adapters.lakehouse.report.tags import tag_problems

DEFAULT_CATALOG_NAME = "lakehouse"
# Upper bound for commit_retries: the backoff caps at 8 s a try, so 20 tries is minutes of
# waiting already; more hides a writer that will never win.
MAX_COMMIT_RETRIES = 20


# What catalogs.yml mounted on a target (catalogs/register.py) is kept on the credentials object,
# beside the `depots` it changed, so a second adapter made from the same config sees it too. Its
# type and reader are here, below catalogs/, because `connection_info` lists it.
CATALOGS_RECORD = "_lakehouse_catalogs_yml"


@dataclass(frozen=True)
class Registered:
    """One catalogs.yml integration as mounted: its Spark catalog and its `depots:` entry (None
    for the embedded lakehouse, which is the profile's own catalog)."""

    name: str
    label: str
    catalog_type: str
    spark_catalog: str
    entry: dict[str, Any] | None


def registered(credentials: Any) -> dict[str, Registered]:
    """The catalogs.yml integrations mounted on these credentials, by name."""
    return dict(getattr(credentials, CATALOGS_RECORD, None) or {})


@dataclass
class SparkOptions(dbtClassMixin):
    """Where Spark runs and what it is given, beyond what the depot implies."""

    master: str = "local[*]"
    conf: dict[str, str] = field(default_factory=dict)
    # Extra jars (paths or file: URIs), e.g. iceberg-aws-bundle for S3FileIO or Glue.
    jars: list[str] = field(default_factory=list)
    app_name: str = "dbt-lakehouse"
    driver_memory: str | None = None
    # A cluster master (spark://, k8s://, yarn): the address executors reach the driver at,
    # when this machine's default one is not routable from them (spark.driver.host).
    driver_host: str | None = None
    # A cluster master must give the application an executor within this many seconds, or the
    # start fails naming the master (instead of the first statement hanging).
    executor_timeout_seconds: int = 120


@dataclass
class EngineOptions(dbtClassMixin):
    """The warm engine (engine/warm/): a driver JVM kept between dbt commands."""

    # Minutes it stays up with no dbt command attached; 0 starts a JVM for every command.
    # Unset: 15 for a local master, 0 (off) for a cluster one.
    keep_warm_minutes: float | None = None
    # Seconds of statements the engine runs on a scratch catalog of its own while no command
    # is attached, so the JIT compiles the next commands' paths (engine/warm/warm_up.py).
    # Unset: 60 for a local master, 0 (off) for a cluster one.
    warm_up_seconds: float | None = None
    # Native execution: `comet` runs scans, joins, aggregates and shuffles in Apache DataFusion
    # Comet (engine/native.py; Spark 4.1 line only). Unset: Spark's JVM execution.
    native: str | None = None


@dataclass
class LakehouseCredentials(Credentials):
    """One profile target.

    `database` is the Spark catalog name the depot is mounted as, `schema` the Iceberg
    namespace. `depot` is `dataos://<name>` (looked up in a depots file), an inline depot
    mapping, or `env` (the DataOS / Nilus environment variables); absent, the embedded local
    lakehouse under `warehouse` is used.
    """

    database: str = DEFAULT_CATALOG_NAME
    schema: str = ""
    depot: str | dict[str, Any] | None = None
    # More depots mounted as catalogs beside `depot`: {catalog name: depot or {depot, read_only,
    # aws_region, aws_endpoint}} (profile/mounts.py).
    depots: dict[str, Any] | None = None
    depots_file: str | None = None
    warehouse: str | None = None
    aws_region: str | None = None
    aws_endpoint: str | None = None
    # An IAM role for the depot's AWS clients (profile/depot/aws_role.py); wins over the depot's.
    aws_role_arn: str | None = None
    aws_external_id: str | None = None
    aws_role_session_name: str | None = None
    aws_role_duration_seconds: int | None = None
    # The DataOS apikey the Depot Service is asked with when DATAOS_RUN_AS_APIKEY is unset
    # (profile/depot/depot_service.py); a secret, so not among the connection keys.
    apikey: str | None = None
    spark: SparkOptions = field(default_factory=SparkOptions)
    engine: EngineOptions = field(default_factory=EngineOptions)
    # Commit conflicts (another writer won the race) are retried this many times.
    commit_retries: int = 4
    # Audited runs: a run's table commits go to one Iceberg branch, published to `main` only
    # when every node passed (audit/run.py).
    write_audit_publish: bool = False
    # Attribution tags on every Spark job and Iceberg commit of a node (report/tags.py).
    query_tags: dict[str, Any] | None = None
    # Reuse a node (table, incremental, snapshot, seed, view, data test) whose inputs and
    # definition did not move since its recorded build (reuse/, docs/reuse.md).
    reuse: bool = True

    _ALIASES = {"catalog": "database", "namespace": "schema"}

    @classmethod
    def __pre_deserialize__(cls, data: dict[Any, Any]) -> dict[Any, Any]:
        data = super().__pre_deserialize__(data)
        if not data.get("database"):
            data["database"] = DEFAULT_CATALOG_NAME
        return data

    @classmethod
    def validate(cls, data: Any) -> None:
        """Refuse keys the adapter does not know (a typo such as `aws_regon` would otherwise be
        ignored, and the default used without a word) and values out of range, all at once."""
        if not isinstance(data, Mapping):
            super().validate(data)
            return
        # `threads` and `type` belong to dbt; they may still be in the target when it is read,
        # and so may the aliases (catalog, namespace).
        accepted = {f.name for f in fields(cls) if not f.name.startswith("_")}
        accepted |= {"threads", "type", *cls._ALIASES}
        problems = unknown_key_problems(data, accepted, "profile")
        spark = data.get("spark")
        if isinstance(spark, Mapping):
            spark_keys = {f.name for f in fields(SparkOptions)}
            problems += unknown_key_problems(spark, spark_keys, "profile `spark:`")
        problems += _engine_problems(data.get("engine"))
        problems += tag_problems(data.get("query_tags"))
        retries = data.get("commit_retries")
        if retries is not None and not (
            isinstance(retries, int)
            and not isinstance(retries, bool)
            and 0 <= retries <= MAX_COMMIT_RETRIES
        ):
            problems.append(
                f"commit_retries must be a whole number from 0 to {MAX_COMMIT_RETRIES}; got "
                f"{retries!r}."
            )
        for switch in ("write_audit_publish", "reuse"):
            value = data.get(switch)
            if value is not None and not isinstance(value, bool):
                problems.append(f"{switch} must be true or false; got {value!r}.")
        if problems:
            raise DbtRuntimeError("\n".join(problems))
        super().validate(data)

    @property
    def type(self) -> str:
        return "lakehouse"

    @property
    def unique_field(self) -> str:
        return self.depot_label

    @property
    def depot_label(self) -> str:
        """A printable name for the depot: never its contents."""
        if self.depot is None:
            return f"embedded ({self.warehouse or DEFAULT_WAREHOUSE_DIR})"
        if isinstance(self.depot, str):
            return self.depot
        return f"inline {self.depot.get('type', 'lakehouse')} depot"

    def role_options(self) -> dict[str, Any]:
        """The profile's aws_role_* keys that are set, for depot resolution."""
        names = ("aws_role_arn", "aws_external_id", "aws_role_session_name")
        options: dict[str, Any] = {k: getattr(self, k) for k in names if getattr(self, k)}
        if self.aws_role_duration_seconds is not None:
            options["aws_role_duration_seconds"] = self.aws_role_duration_seconds
        return options

    # aws_external_id is left out on purpose: `dbt debug` prints these.
    def _connection_keys(self) -> tuple[str, ...]:
        return (
            "database",
            "schema",
            "depot",
            "warehouse",
            "aws_region",
            "aws_endpoint",
            "aws_role_arn",
            "write_audit_publish",
        )

    def connection_info(self, *, with_aliases: bool = False) -> Iterable[tuple[str, Any]]:
        for key, value in super().connection_info(with_aliases=with_aliases):
            yield key, (self.depot_label if key == "depot" else value)
        yield "spark_master", self.spark.master
        yield "engine", engine_label()
        yield (
            "native",
            native_status(
                self.engine.native, is_connect_master(self.spark.master), self.spark.conf
            ),
        )
        # dbt hashes these to decide whether a partial parse holds: a node's catalog_name became
        # its Spark catalog at parse, so a changed catalogs.yml must parse the project again.
        catalogs = sorted(f"{r.name}: {r.spark_catalog}" for r in registered(self).values())
        if catalogs:
            yield "catalogs", ", ".join(catalogs)

    def __repr__(self) -> str:
        return (
            f"LakehouseCredentials(database={self.database!r}, schema={self.schema!r}, "
            f"depot={self.depot_label!r})"
        )


def _engine_problems(engine: Any) -> list[str]:
    if engine is None:
        return []
    if not isinstance(engine, Mapping):
        return [f"engine must be a mapping such as {{keep_warm_minutes: 15}}; got {engine!r}."]
    problems = unknown_key_problems(engine, [f.name for f in fields(EngineOptions)], "`engine:`")
    # each a number, 0 or more: its key, its unit, what 0 means
    for key, unit, zero in (
        ("keep_warm_minutes", "minutes", "a new JVM for every command"),
        ("warm_up_seconds", "seconds", "no warm-up"),
    ):
        value = engine.get(key)
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0
        ):
            problems.append(
                f"engine.{key} must be a number of {unit}, 0 or more (0: {zero}); got {value!r}."
            )
    native = engine.get("native")
    if native is not None and native not in NATIVE_ENGINES:
        problems.append(
            f"engine.native must be one of {', '.join(NATIVE_ENGINES)} (or left out: Spark's "
            f"JVM execution); got {native!r}."
        )
    return problems
