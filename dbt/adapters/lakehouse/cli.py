"""`dbt-lakehouse`: the console command for setup steps that happen outside a dbt run."""

from __future__ import annotations

import argparse
import sys

from dbt.adapters.lakehouse.exceptions import EngineSetupError
from dbt.adapters.lakehouse.jars import CACHED_JARS, cache_dir, iceberg_runtime_jar, install_all


def _install(_: argparse.Namespace) -> int:
    """Fetch every registry-sourced jar into the user cache (verified, idempotent)."""
    print(f"fetching jars into {cache_dir() / 'jars'} (only those missing or not verified)")
    try:
        paths = install_all()
    except EngineSetupError as exc:
        print(f"dbt-lakehouse install failed: {exc.msg}", file=sys.stderr)
        return 1
    for path in paths:
        print(f"ok  {path}")
    print(f"ok  {iceberg_runtime_jar()} (from the snowpark-connect-deps-iceberg wheel)")
    return 0


def _jars(_: argparse.Namespace) -> int:
    print(f"cache: {cache_dir()}")
    print(f"iceberg: {iceberg_runtime_jar()}")
    for need, jar_set in sorted(CACHED_JARS.items()):
        for jar in jar_set.jars:
            located = jar_set.locate_one(jar)
            shown = located if located else "missing (run: dbt-lakehouse install)"
            print(f"{need}: {shown}  [{jar.env_override}]")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="dbt-lakehouse", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("install", help=_install.__doc__).set_defaults(run=_install)
    commands.add_parser("jars", help="show where each jar is found").set_defaults(run=_jars)
    args = parser.parse_args(argv)
    return int(args.run(args))


if __name__ == "__main__":
    sys.exit(main())
