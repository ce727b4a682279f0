"""The edit loop of bench/edit_loop.py, ours against ours: this tree against another checkout
(`--before DIR`, e.g. the tree before a change), and with native execution against without
(`--native`).

Sides, each a fresh dbt process per command, alternating within each round:
- `now cold` and `now warm`: this tree, as edit_loop.py runs it (the warm side on an engine
  home of its own, warmed by an untimed `dbt build` first).
- `before cold` and `before warm`, with `--before DIR`: the same virtualenv with DIR (another
  checkout, e.g. `git worktree add --detach DIR <commit>`) first on PYTHONPATH, so dbt loads
  that checkout's adapter and macros; the same project and settings.
- `now warm native`, with `--native`: `engine: {native: comet}` (Spark 4.1 line), its own engine.

Commands: `dbt build` on an empty warehouse, `dbt run -s customers`, `dbt show --inline` a count.
Printed: medians and each variant's ratio to `now` (cold to cold, warm to warm).

    .venv/bin/python bench/edit_loop_variants.py --rounds 3 --before /work/before [--native]
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from edit_loop import COMMANDS, SCHEMA, Side  # noqa: E402
from harness import (  # noqa: E402
    DBT,
    Sample,
    Series,
    alternate,
    common_args,
    engine_state,
    fmt,
    ours_target,
    stop_engines,
)


def main() -> None:
    parser = common_args(__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="another checkout of this repository")
    parser.add_argument("--native", action="store_true", help="add a warm side with Comet on")
    args = parser.parse_args()
    work: Path = args.work / "edit_loop_variants"
    (work / "logs").mkdir(parents=True, exist_ok=True)
    base = {**os.environ, "DO_NOT_TRACK": "1"}
    homes: list[Path] = []
    sides: list[Side] = []

    def add(name: str, warm: bool, env: dict[str, str], **target: object) -> None:
        slug = name.replace(" ", "-")
        home = work / f"engines-{slug}"
        homes.append(home)
        env = {
            **base,
            **env,
            "LAKEHOUSE_ENGINE": "warm" if warm else "cold",
            "LAKEHOUSE_ENGINE_HOME": str(home),
        }
        sides.append(Side(name, slug, work, DBT, env, lambda _: {**ours_target(SCHEMA), **target}))

    for warm in (False, True):
        add(f"now {'warm' if warm else 'cold'}", warm, {})
        if args.before:
            before = {"PYTHONPATH": str(args.before.resolve())}
            add(f"before {'warm' if warm else 'cold'}", warm, before)
    if args.native:
        add("now warm native", True, {}, engine={"native": "comet"})
    stop_engines(*homes)

    try:
        for side, home in zip(sides, homes, strict=True):
            if "warm" not in side.name:
                continue
            warmup = side.run(
                "build", project=side.fresh(work / f"warmup-{side.slug}"), log="warmup"
            )
            jvm, _ = engine_state(home)
            if not warmup.ok or jvm is None:
                sys.exit(f"{side.name}: the warm-up build failed or left no engine: {warmup.note}")

            def same_engine(sample: Sample, home: Path = home, jvm: int = jvm) -> None:
                if sample.ok and engine_state(home)[0] != jvm:
                    sample.note = "the engine was restarted"

            side.check = same_engine

        results: dict[str, dict[str, Series]] = {}
        for command, step in COMMANDS.items():
            print(f"{command}:", file=sys.stderr)
            series = {side.name: Series(side.name) for side in sides}
            alternate(args.rounds, [(series[side.name], step(side)) for side in sides])
            results[command] = series
    finally:
        stop_engines(*homes)

    print(f"\n# edit loop variants: examples/jaffle_lakehouse, medians of {args.rounds}")
    print("| command | " + " | ".join(side.name for side in sides) + " |")
    print("|---|" + "---|" * len(sides))
    for command, series in results.items():
        cells = []
        for side in sides:
            median = series[side.name].median
            # Each variant against this tree the same way: cold to cold, warm to warm.
            baseline = series["now warm" if "warm" in side.name else "now cold"].median
            shown = fmt(median)
            if side.name not in ("now cold", "now warm") and median and baseline:
                shown += f" ({median / baseline:.2f}x)"
            cells.append(shown)
        print(f"| {command} | " + " | ".join(cells) + " |")
    failed = {s.name for series in results.values() for s in series.values() if not s.times}
    if failed:
        print(f"no successful command on: {', '.join(sorted(failed))} (logs: {work / 'logs'})")


if __name__ == "__main__":
    main()
