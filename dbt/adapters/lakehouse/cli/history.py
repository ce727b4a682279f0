"""`dbt-lakehouse history`: a table's commits, newest first, with the dbt run and node behind each.

With no warm engine up for the profile, the commits of a table in the embedded lakehouse or
in a depot's Iceberg REST catalog are read with pyiceberg from the catalog and the table's
metadata, with no JVM: a JVM's cold start is seconds, pyiceberg's open one or two
(bench/pyiceberg_metadata.py, bench/pyiceberg_rest.py). With an engine up, attaching to it is
faster still; every other catalog, and a REST depot pyiceberg would not open as the JVM does
(iceberg/pyiceberg_rest.py), is read through Spark.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dbt.adapters.lakehouse.cli.common import fail, load_resolved, one_line

if TYPE_CHECKING:
    from dbt.adapters.lakehouse.engine.spec import EngineSpec
    from dbt.adapters.lakehouse.profile.resolved import ResolvedProfile


def add_commands(commands: Any, profile_options: Any) -> None:
    history = commands.add_parser("history", help=_history.__doc__)
    history.add_argument("table", help="catalog.schema.table, or schema.table (profile's catalog)")
    history.add_argument("--limit", type=int, default=20, help="newest N commits (0: all)")
    profile_options(history)
    history.set_defaults(run=_history)


class _TableMissing(Exception):
    pass


def _history(args: argparse.Namespace) -> int:
    """Print a table's commits, newest first, with the dbt run and node behind each."""
    from dbt.adapters.lakehouse.iceberg.history import (
        history_rows,
        main_ancestors,
        name_parts,
        render_table,
        table_name,
    )
    from dbt.adapters.lakehouse.profile.secrets import scrub

    if args.limit < 0:
        return fail("history", f"--limit must be 0 (all) or more; got {args.limit}.")
    loaded = load_resolved("history", args)
    if isinstance(loaded, int):
        return loaded
    resolved, chosen = loaded
    hidden = resolved.secret_values()
    try:
        parts = name_parts(args.table, chosen.credentials.database)
        table = table_name(args.table, chosen.credentials.database)
        catalog = _pyiceberg_catalog(resolved, chosen.credentials.database, parts[0])
        if catalog is not None:
            commits, main_head = _read_with_pyiceberg(catalog, parts, table)
        else:
            commits, main_head = _read_with_spark(resolved, table)
    except _TableMissing:
        where = f"profile '{chosen.profile}', target '{chosen.target}', {resolved.depot.name}"
        return fail("history", f"Table {table} does not exist ({where}).")
    except ValueError as exc:
        return fail("history", str(exc))
    except Exception as exc:  # the depot or the engine: their messages name the fix
        return fail("history", scrub(one_line(getattr(exc, "msg", None) or exc), hidden))
    if not commits:
        print(f"{table} has no commits yet.")
        return 0
    main = main_ancestors(commits, main_head)
    print(render_table(history_rows(commits, main, args.limit or None)))
    return 0


def _pyiceberg_catalog(
    resolved: ResolvedProfile, default_catalog: str, catalog_name: str
) -> tuple[str, Callable[[], Any]] | None:
    """(where, opener) of the catalog holding the table when pyiceberg can read it and no warm
    engine is up to read it faster (None: read it through Spark)."""
    from dbt.adapters.lakehouse.embedded.pyiceberg_catalog import open_catalog
    from dbt.adapters.lakehouse.iceberg.pyiceberg_rest import (
        PyicebergUnsupported,
        rest_catalog_properties,
    )

    spec = resolved.spec
    embedded = spec.embedded_catalog
    opener: tuple[str, Callable[[], Any]] | None = None
    if embedded is not None and catalog_name == embedded.name:
        opener = (
            "the embedded catalog",
            lambda: open_catalog(warehouse=embedded.warehouse, name=embedded.name),
        )
    # Through Spark Connect the catalog is the server's to reach, maybe from another network.
    elif not spec.is_connect and (
        catalog_name == default_catalog or resolved.mounted_depot(catalog_name) is not None
    ):
        try:
            properties = rest_catalog_properties(resolved.depot_of(catalog_name), catalog_name)
        except PyicebergUnsupported:
            return None
        opener = (f"the REST catalog at {properties.shown_uri}", properties.open)
    if opener is None or _engine_up(spec):
        return None
    return opener


def _engine_up(spec: EngineSpec) -> bool:
    from dbt.adapters.lakehouse.engine.launch import java_executable
    from dbt.adapters.lakehouse.engine.warm.client import engine_running
    from dbt.adapters.lakehouse.engine.warm.identity import keep_warm_minutes

    java = java_executable()
    warm = java is not None and keep_warm_minutes(spec.master, spec.keep_warm_minutes) > 0
    return warm and engine_running(spec, str(java))


def _read_with_pyiceberg(
    catalog: tuple[str, Callable[[], Any]], parts: list[str], table: str
) -> tuple[Any, int | None]:
    from pyiceberg.exceptions import NoSuchNamespaceError, NoSuchTableError

    from dbt.adapters.lakehouse.iceberg.history import table_commits

    where, opener = catalog
    try:
        return table_commits(opener().load_table((parts[1], parts[2])))
    except (NoSuchTableError, NoSuchNamespaceError) as exc:
        raise _TableMissing from exc
    except Exception as exc:  # the caller masks secrets in this text
        raise RuntimeError(
            f"Reading the history of {table} through {where} failed: {type(exc).__name__}: {exc}"
        ) from exc


def _read_with_spark(resolved: Any, table: str) -> tuple[Any, int | None]:
    from dbt.adapters.lakehouse.engine.diagnosis import (
        engine_error_text,
        engine_error_type,
        explain_engine_error,
    )
    from dbt.adapters.lakehouse.engine.lifecycle import ENGINE
    from dbt.adapters.lakehouse.engine.spec import catalog_contexts
    from dbt.adapters.lakehouse.exceptions import NamespaceMissingError, RelationMissingError
    from dbt.adapters.lakehouse.iceberg.history import read_commits
    from dbt.adapters.lakehouse.profile.secrets import scrub

    spark = ENGINE.get(resolved.spec)
    try:
        return read_commits(spark, table)
    except Exception as exc:
        text = scrub(engine_error_text(exc), resolved.secret_values())
        if engine_error_type(text) in (RelationMissingError, NamespaceMissingError):
            raise _TableMissing from exc
        uris = {c.uri for c in resolved.spec.catalogs if c.uri}
        explained = explain_engine_error(
            text, uris.pop() if len(uris) == 1 else None, catalog_contexts(resolved.spec)
        )
        raise RuntimeError(f"Reading the history of {table} failed: {explained or text}") from exc
