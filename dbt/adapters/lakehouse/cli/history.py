"""`dbt-lakehouse history`: a table's commits, newest first, with the dbt run and node behind each.

On the embedded lakehouse with no warm engine up for the profile, the commits are read with
pyiceberg from the catalog file and the table's metadata, with no JVM: a JVM's cold start is
seconds, pyiceberg's open two (bench/pyiceberg_metadata.py). With an engine up, attaching to it
is faster still, and every other catalog is read through Spark.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dbt.adapters.lakehouse.embedded.sqlite_catalog import EmbeddedCatalog
    from dbt.adapters.lakehouse.engine.spec import EngineSpec


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
    from dbt.adapters.lakehouse.cli.main import _one_line, fail, load_resolved
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
        embedded = _embedded_without_engine(resolved.spec, parts[0])
        if embedded is not None:
            commits, main_head = _read_with_pyiceberg(embedded, parts)
        else:
            commits, main_head = _read_with_spark(resolved, table)
    except _TableMissing:
        where = f"profile '{chosen.profile}', target '{chosen.target}', {resolved.depot.name}"
        return fail("history", f"Table {table} does not exist ({where}).")
    except ValueError as exc:
        return fail("history", str(exc))
    except Exception as exc:  # the depot or the engine: their messages name the fix
        return fail("history", scrub(_one_line(getattr(exc, "msg", None) or exc), hidden))
    if not commits:
        print(f"{table} has no commits yet.")
        return 0
    main = main_ancestors(commits, main_head)
    print(render_table(history_rows(commits, main, args.limit or None)))
    return 0


def _embedded_without_engine(spec: EngineSpec, catalog_name: str) -> EmbeddedCatalog | None:
    """The embedded catalog holding the table, when no warm engine for `spec` is up to read it
    faster than pyiceberg opens (None: read it through Spark)."""
    from dbt.adapters.lakehouse.engine.launch import java_executable
    from dbt.adapters.lakehouse.engine.warm.client import engine_running
    from dbt.adapters.lakehouse.engine.warm.identity import keep_warm_minutes

    embedded = spec.embedded_catalog
    if embedded is None or catalog_name != embedded.name:
        return None
    java = java_executable()
    warm = java is not None and keep_warm_minutes(spec.master, spec.keep_warm_minutes) > 0
    return None if warm and engine_running(spec, str(java)) else embedded


def _read_with_pyiceberg(embedded: EmbeddedCatalog, parts: list[str]) -> tuple[Any, int | None]:
    from pyiceberg.exceptions import NoSuchNamespaceError, NoSuchTableError

    from dbt.adapters.lakehouse.embedded.pyiceberg_catalog import open_catalog
    from dbt.adapters.lakehouse.iceberg.history import table_commits

    catalog = open_catalog(warehouse=embedded.warehouse, name=embedded.name)
    try:
        return table_commits(catalog.load_table((parts[1], parts[2])))
    except (NoSuchTableError, NoSuchNamespaceError) as exc:
        raise _TableMissing from exc


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
