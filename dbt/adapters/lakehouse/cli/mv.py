"""`dbt-lakehouse mv status`: whether each materialized view is fresh, read from its table
properties and its upstreams' metadata (no dbt run, no data read)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dbt.adapters.lakehouse.mv.state import Recorded, UpstreamStatus


def add_commands(commands: Any, profile_options: Any) -> None:
    mv = commands.add_parser("mv", help="materialized views: `mv status` says which are stale")
    mv.add_argument("action", choices=["status"], help="status: fresh or stale, per upstream")
    mv.add_argument(
        "tables",
        nargs="*",
        metavar="TABLE",
        help="catalog.schema.table or schema.table; default: every materialized_view model of "
        "the project's target/manifest.json",
    )
    mv.add_argument("--project-dir", help="the dbt project (default: the current folder)")
    mv.add_argument("--check", action="store_true", help="exit 1 when any view is stale")
    profile_options(mv)
    mv.set_defaults(run=_status)


def describe_upstream(status: UpstreamStatus) -> str:
    if status.fresh:
        return f"{status.name}: fresh (snapshot {status.recorded})"
    if status.note:
        return f"{status.name}: moved, {status.note} (now snapshot {status.current})"
    since = f" since {status.since}" if status.since else ""
    plural = "" if status.behind == 1 else "s"
    return (
        f"{status.name}: moved {status.behind} snapshot{plural}{since} "
        f"(recorded {status.recorded}, now {status.current})"
    )


def render_status(table: str, record: Recorded, statuses: Sequence[UpstreamStatus]) -> str:
    """A view's line, `fresh`/`stale` and when it was refreshed, then one line per upstream."""
    if not record.is_view:
        return f"{table}: not a materialized view (no lakehouse.mv.sql_hash property)"
    state = "fresh" if all(s.fresh for s in statuses) else "stale"
    lines = [f"{table}: {state} (refreshed {record.refreshed_at or 'at an unknown time'})"]
    lines.extend(f"  {describe_upstream(s)}" for s in statuses)
    return "\n".join(lines)


def manifest_views(project_dir: Path) -> list[str]:
    """The relation names of the project's materialized_view models, from its last parse."""
    path = project_dir / "target" / "manifest.json"
    document = json.loads(path.read_text())
    return sorted(
        str(node["relation_name"])
        for node in document.get("nodes", {}).values()
        if (node.get("config") or {}).get("materialized") == "materialized_view"
        and node.get("relation_name")
    )


def _status(args: argparse.Namespace) -> int:
    from dbt.adapters.lakehouse.cli.main import fail, load_resolved
    from dbt.adapters.lakehouse.engine.lifecycle import ENGINE
    from dbt.adapters.lakehouse.iceberg.history import table_name
    from dbt.adapters.lakehouse.iceberg.table_name import TableName
    from dbt.adapters.lakehouse.mv import reading
    from dbt.adapters.lakehouse.profile.secrets import scrub

    loaded = load_resolved("mv status", args)
    if isinstance(loaded, int):
        return loaded
    resolved, chosen = loaded
    try:
        names = args.tables or manifest_views(Path(args.project_dir or "."))
        tables = [_parts(table_name(n, chosen.credentials.database)) for n in names]
    except (OSError, ValueError) as exc:
        return fail("mv status", f"{exc} (name the views, or run `dbt parse` first)")
    if not tables:
        print("no materialized_view models in target/manifest.json")
        return 0
    try:
        spark = ENGINE.get(resolved.spec)
    except Exception as exc:  # the depot or the engine: their messages name the fix
        return fail(
            "mv status", scrub(str(getattr(exc, "msg", None) or exc), resolved.secret_values())
        )

    def query(sql: str) -> list[tuple[Any, ...]]:
        return [tuple(row) for row in spark.sql(sql).collect()]

    stale = False
    for parts in tables:
        table = TableName(*parts)
        try:
            record, statuses = reading.view_status(query, table)
        except Exception as exc:
            text = scrub(" ".join(str(exc).split())[:300], resolved.secret_values())
            return fail("mv status", f"reading {table} failed: {text}")
        stale = stale or not record.is_view or not all(s.fresh for s in statuses)
        print(render_status(str(table), record, statuses))
    return 1 if args.check and stale else 0


def _parts(quoted: str) -> tuple[str, str, str]:
    # table_name() gives three backticked parts.
    parts = [p.replace("``", "`") for p in quoted[1:-1].split("`.`")]
    return parts[0], parts[1], parts[2]
