"""`dbt-lakehouse`: the console command for what happens outside a dbt run: setup steps, a
table's commit history, materialized views' freshness, the warm engine, and the embedded
lakehouse's catalog."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from dbt.adapters.lakehouse.cli.catalog import add_commands as catalog_commands
from dbt.adapters.lakehouse.cli.common import add_profile_options, fail
from dbt.adapters.lakehouse.cli.engine import add_commands as engine_commands
from dbt.adapters.lakehouse.cli.history import add_commands as history_commands
from dbt.adapters.lakehouse.cli.mv import add_commands as mv_commands
from dbt.adapters.lakehouse.cli.serve import add_commands as serve_commands
from dbt.adapters.lakehouse.cli.warm_dbt import add_commands as warm_dbt_commands
from dbt.adapters.lakehouse.engine.jars import (
    CACHED_JARS,
    EMBEDDED_NEEDS,
    cache_dir,
    install_all,
    maven_repository,
)
from dbt.adapters.lakehouse.engine.jars.cache import megabytes
from dbt.adapters.lakehouse.exceptions import EngineSetupError


def _install(args: argparse.Namespace) -> int:
    """Fetch jars into the user cache (verified, idempotent): every set, or those named, from
    Maven Central, or where it cannot be reached, from each set's fallback registry."""
    needs = list(EMBEDDED_NEEDS) if args.embedded else args.sets or None
    what = "every jar set" if needs is None else f"the jar sets {', '.join(needs)}"
    print(
        f"{what} into {cache_dir() / 'jars'} from {maven_repository()} "
        "(only those missing or not verified are fetched)",
        flush=True,
    )
    start = time.monotonic()
    try:
        report = install_all(needs=needs)
    except EngineSetupError as exc:
        print(f"dbt-lakehouse install failed: {exc.msg}", file=sys.stderr)
        return 1
    cached = list(dict.fromkeys(report.cached))
    for path in cached:
        print(f"ok  {path} ({megabytes(path.stat().st_size)})")
    total = sum(path.stat().st_size for path in cached)
    print(f"{len(cached)} jars, {megabytes(total)}, ready in {time.monotonic() - start:.1f} s")
    for need, why in report.skipped.items():
        print(
            f"not cached: the '{need}' jars ({CACHED_JARS[need].origin}), which only some "
            f"profiles need; a session fetches them when one does. Reason: {why}",
            file=sys.stderr,
        )
    if args.class_archive:
        _prime_class_archive()
    return 0


def _prime_class_archive() -> None:
    """The driver JVM's class-data archive made now (engine/class_archive.py), so that the
    first commands start with it; without java here the first command says what is missing."""
    from dbt.adapters.lakehouse.engine import class_archive
    from dbt.adapters.lakehouse.engine.launch import java_executable

    java = java_executable()
    if java is None:
        return
    print(class_archive.prime(java, cache_dir(), os.environ), flush=True)


def _jars(_: argparse.Namespace) -> int:
    print(f"cache: {cache_dir()}")
    for need, jar_set in sorted(CACHED_JARS.items()):
        located = jar_set.locate()
        if located is None:
            print(f"{need}: missing (run: dbt-lakehouse install)  [{jar_set.origin}]")
        for path in located or ():
            print(f"{need}: {path}")
    return 0


def _report(args: argparse.Namespace) -> int:
    """Print where a past run's time went (its nodes by Spark task time, rows and bytes);
    --html FILE also draws it as a page."""
    import json

    from dbt.adapters.lakehouse.report.html import render_html
    from dbt.adapters.lakehouse.report.summary import from_run_results, heaviest, render

    path = Path(args.run_results)
    try:
        document = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        return fail("report", f"cannot read {path}: {exc}")
    costs = from_run_results(document)
    if not costs:
        return fail("report", f"{path} lists no node")
    ranked = heaviest(costs, args.limit or None)
    print(render(ranked, len(costs), costs))
    if args.html:
        invocation = (document.get("metadata") or {}).get("invocation_id", "")
        title = f"dbt run {invocation}: where the time went".replace("run :", "run:")
        Path(args.html).write_text(render_html(ranked, title))
        print(f"page written to {args.html}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="dbt-lakehouse", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    install = commands.add_parser("install", help=_install.__doc__)
    # No argparse `choices`: with nargs="*" it rejects the empty default (Python < 3.12);
    # install_all names an unknown set and the known ones.
    install.add_argument(
        "sets", nargs="*", metavar="SET", help=f"default: every set ({', '.join(CACHED_JARS)})"
    )
    install.add_argument(
        "--embedded",
        action="store_true",
        help=f"only what the embedded lakehouse needs ({', '.join(EMBEDDED_NEEDS)})",
    )
    install.add_argument(
        "--class-archive",
        action="store_true",
        help="also make the driver JVM's class-data archive now (a short Spark job), rather "
        "than at the exit of the first command's JVM: for many JVM starts to come (the tests)",
    )
    install.set_defaults(run=_install)
    commands.add_parser("jars", help="show where each jar is found").set_defaults(run=_jars)
    history_commands(commands, add_profile_options)
    report = commands.add_parser("report", help=_report.__doc__)
    report.add_argument(
        "run_results", nargs="?", default="target/run_results.json", help="a run's results"
    )
    report.add_argument("--limit", type=int, default=0, help="the heaviest N nodes (0: all)")
    report.add_argument("--html", help="also write the report as an HTML page to this file")
    report.set_defaults(run=_report)
    engine_commands(commands, add_profile_options)
    serve_commands(commands, add_profile_options)
    catalog_commands(commands, add_profile_options)
    mv_commands(commands, add_profile_options)
    warm_dbt_commands(commands)
    args = parser.parse_args(argv)
    return int(args.run(args))


if __name__ == "__main__":
    sys.exit(main())
