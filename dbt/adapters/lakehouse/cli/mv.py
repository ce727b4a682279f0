"""`dbt-lakehouse mv status`: whether each materialized view is fresh, read from its table
properties and its upstreams' metadata (no dbt run, no data read)."""

from __future__ import annotations

import argparse
import datetime as dt
import functools
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dbt.adapters.lakehouse.cli.common import fail, load_resolved
from dbt.adapters.lakehouse.mv import freshness
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
    mv.add_argument(
        "--check",
        action="store_true",
        help="exit 1 when a view is stale past its mv_freshness error_after, or stale and sets "
        "no mv_freshness; past warn_after only: a warning, exit 0 (as dbt source freshness)",
    )
    mv.add_argument(
        "--warn-error", action="store_true", help="with --check: exit 1 past warn_after too"
    )
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


def render_status(
    table: str,
    record: Recorded,
    statuses: Sequence[UpstreamStatus],
    judged: freshness.Freshness | None = None,
) -> str:
    """A view's line, `fresh`/`stale` (with its thresholds' verdict when it sets
    mv_freshness) and when it was refreshed, then one line per upstream."""
    if not record.is_view:
        return f"{table}: not a materialized view (no lakehouse.mv.sql_hash property)"
    state = "fresh" if all(s.fresh for s in statuses) else "stale"
    if judged is not None and judged.level and judged.stale_since_ms is not None:
        state = f"stale, {freshness.describe(judged)}"
    lines = [f"{table}: {state} (refreshed {record.refreshed_at or 'at an unknown time'})"]
    lines.extend(f"  {describe_upstream(s)}" for s in statuses)
    return "\n".join(lines)


def manifest_views(project_dir: Path) -> dict[str, dict[str, Any]]:
    """The relation names of the project's materialized_view models, from its last parse,
    each with its config (its mv_freshness thresholds)."""
    path = project_dir / "target" / "manifest.json"
    document = json.loads(path.read_text())
    return {
        str(node["relation_name"]): node.get("config") or {}
        for node in sorted(document.get("nodes", {}).values(), key=lambda n: str(n.get("name")))
        if (node.get("config") or {}).get("materialized") == "materialized_view"
        and node.get("relation_name")
    }


def check_failed(
    record: Recorded,
    statuses: Sequence[UpstreamStatus],
    judged: freshness.Freshness,
    warn_error: bool,
) -> bool:
    """Whether `--check` fails on this view: no view at all, past error_after (or warn_after
    under --warn-error), or stale with no thresholds set."""
    if not record.is_view:
        return True
    if judged.level is None:
        return not all(s.fresh for s in statuses)
    return judged.level == "error" or (warn_error and judged.level == "warn")


def _status(args: argparse.Namespace) -> int:
    from dbt.adapters.lakehouse.engine import runtime
    from dbt.adapters.lakehouse.engine.lifecycle import ENGINE
    from dbt.adapters.lakehouse.iceberg.history import table_name
    from dbt.adapters.lakehouse.iceberg.table_name import TableName
    from dbt.adapters.lakehouse.mv import metadata, reading
    from dbt.adapters.lakehouse.profile.secrets import scrub

    loaded = load_resolved("mv status", args)
    if isinstance(loaded, int):
        return loaded
    resolved, chosen = loaded
    project = Path(args.project_dir or ".")
    database = chosen.credentials.database
    try:
        views = manifest_views(project) if not args.tables else _optional_manifest(project)
        configs = {_key(_parts(table_name(n, database))): c for n, c in views.items()}
        tables = [_parts(table_name(n, database)) for n in (args.tables or views)]
        thresholds = {t: freshness.of_config(configs.get(_key(t))) for t in tables}
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
    query = functools.partial(runtime.rows, spark)
    read = metadata.reader(spark, query)
    failed = False
    warned: list[str] = []
    now_ms = int(dt.datetime.now(dt.timezone.utc).timestamp() * 1000)
    for parts in tables:
        table = TableName(*parts)
        try:
            record, statuses = reading.view_status(query, read, table)
        except Exception as exc:
            text = scrub(" ".join(str(exc).split())[:300], resolved.secret_values())
            return fail("mv status", f"reading {table} failed: {text}")
        judged = freshness.judge(thresholds[parts], statuses, record.refreshed_at, now_ms)
        failed = check_failed(record, statuses, judged, args.warn_error) or failed
        if judged.level == "warn":
            warned.append(str(table))
        print(render_status(str(table), record, statuses, judged))
    if args.check and warned and not failed:
        print(f"warning: stale past warn_after: {', '.join(warned)} (exit 0; --warn-error fails)")
    return 1 if args.check and failed else 0


def _key(parts: tuple[str, str, str]) -> tuple[str, ...]:
    return tuple(p.lower() for p in parts)


def _optional_manifest(project: Path) -> dict[str, dict[str, Any]]:
    # Named views take their thresholds from the project when it was parsed, else have none.
    try:
        return manifest_views(project)
    except (OSError, ValueError):
        return {}


def _parts(quoted: str) -> tuple[str, str, str]:
    # table_name() gives three backticked parts.
    parts = [p.replace("``", "`") for p in quoted[1:-1].split("`.`")]
    return parts[0], parts[1], parts[2]
