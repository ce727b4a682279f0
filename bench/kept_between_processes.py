"""What the adapter keeps between dbt processes against dbt computing it again in each one, on
the sample's warm commands where dbt's own work is most of the wait: `--feature templates`, the
compiled Jinja templates (template_code.py, LAKEHOUSE_TEMPLATE_CACHE); `--feature schemas`,
dbt's JSON schemas (schema_cache.py, LAKEHOUSE_SCHEMA_CACHE).

The project is examples/jaffle_lakehouse (20 nodes), two copies, one warm engine (an engine
home of this bench's own), reuse on, DO_NOT_TRACK=1; each command a fresh dbt process timed
from start to exit. Sides: `cache on` (the default: the user's cache folder, which the untimed
build fills with what it lacks) and `cache off` (the feature's switch off). After one untimed
build of each copy, the sides alternating, each round starting with the other side:

- `dbt build` with nothing changed (every node reused: dbt's start, parse, compile and the
  reuse decisions);
- `dbt run -s customers` (one table built);
- `dbt parse` after an edit of stg_customers (another expression each round: dbt parses that
  model and its tests again).

Goal: faster (a ratio below 1.00x). The warm engine is stopped at the end.

    .venv/bin/python bench/kept_between_processes.py --rounds 5 --feature schemas
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from edit_loop import RUN_MODEL, SCHEMA, Side  # noqa: E402
from harness import (  # noqa: E402
    DBT,
    Series,
    alternate,
    common_args,
    engine_state,
    ours_target,
    report,
    stop_engines,
)
from reuse_sample import edit_staging  # noqa: E402

COMMANDS = {
    "dbt build (nothing changed)": ("build",),
    f"dbt run -s {RUN_MODEL}": ("run", "-s", RUN_MODEL),
    "dbt parse (stg_customers edited)": ("parse",),
}
EDITED = "dbt parse (stg_customers edited)"
SWITCHES = {"templates": "LAKEHOUSE_TEMPLATE_CACHE", "schemas": "LAKEHOUSE_SCHEMA_CACHE"}


def main() -> None:
    parser = common_args(__doc__.splitlines()[0], rounds=5)
    parser.add_argument("--feature", choices=sorted(SWITCHES), default="templates")
    args = parser.parse_args()
    work: Path = args.work / f"kept_{args.feature}"
    (work / "logs").mkdir(parents=True, exist_ok=True)
    home = work / "engines"
    stop_engines(home)
    base = {
        **os.environ,
        "DO_NOT_TRACK": "1",
        "LAKEHOUSE_ENGINE": "warm",
        "LAKEHOUSE_ENGINE_HOME": str(home),
        "LAKEHOUSE_REUSE": "on",
    }

    def ours(project: Path) -> dict:
        return ours_target(SCHEMA)

    on = Side("cache on", "on", work, DBT, base, ours)
    off = Side("cache off", "off", work, DBT, {**base, SWITCHES[args.feature]: "off"}, ours)
    series = {(command, s.name): Series(s.name) for command in COMMANDS for s in (on, off)}

    def timed(side: Side, command: str, dbt_args: tuple[str, ...], round_no: int) -> Any:
        if command == EDITED:
            edit_staging(side.project, round_no)
        return side.run(*dbt_args, log=f"{dbt_args[0]}-{round_no}")

    try:
        for side in (on, off):
            side.fresh()
            sample = side.run("build", log="first")
            if not sample.ok:
                sys.exit(f"{side.name}: the untimed build failed: {sample.note}")
        if engine_state(home)[0] is None:
            sys.exit(f"no warm engine runs in {home} after the first builds")
        for command, dbt_args in COMMANDS.items():
            print(f"{command}:", file=sys.stderr)
            alternate(
                args.rounds,
                [
                    (
                        series[(command, s.name)],
                        lambda n, s=s, c=command, a=dbt_args: timed(s, c, a, n),
                    )
                    for s in (on, off)
                ],
                rotate=True,
            )
    finally:
        print(f"stopped {stop_engines(home)} warm engine(s)", file=sys.stderr)
    print(f"\n# {args.feature} kept vs made in each process, {args.rounds} round(s)")
    for command in COMMANDS:
        mine, theirs = series[(command, on.name)], series[(command, off.name)]
        report(f"{command}: wall time", [("cache on / cache off", mine, theirs, "<1.00x")])
    failed = [s.name for s in series.values() if len(s.times) < len(s.samples)]
    if failed:
        print(f"\nFAILED runs on: {', '.join(sorted(set(failed)))} (logs: {work / 'logs'})")
        sys.exit(1)


if __name__ == "__main__":
    main()
