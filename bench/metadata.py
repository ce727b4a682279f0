"""Metadata scaling: 200 models in 4 schemas: catalog statements and wall time, ours and the peer's.

Each round generates a project of `--models` one-row table models (`select <n> as id`), spread
round-robin over `--schemas` folders, each folder its own `+schema` (dbt prefixes the target's
schema: `bench_s0`, `bench_s1`, ...), and runs `dbt run` once per adapter in a fresh process on
an empty warehouse. Besides the wall time, every SQL statement each side sent is counted from
the project's `logs/dbt.log`, where dbt writes each one at debug level as
`On <connection or node>: <sql>` (the statement may span the following lines), and sorted by
kind: catalog statements (listing namespaces, tables and views, DESCRIBE, creating
namespaces) against the models' own DDL/DML.

    .venv/bin/python bench/metadata.py --models 200 --schemas 4 --rounds 2
"""

from __future__ import annotations

import re
import shutil
import sys
from collections import Counter
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import (  # noqa: E402
    Sample,
    Series,
    alternate,
    common_args,
    dbt_command,
    ours_target,
    peer_settings,
    peer_target,
    report,
    run_timed,
    write_profiles,
)

PROFILE = "bench_metadata"
SCHEMA = "bench"

# A log line: optional colour reset, time, level, thread, message.
_LOG_LINE = re.compile(r"^(?:\x1b\[\d*m)*\d\d:\d\d:\d\d\.\d+ \[\s*\w+\s*\] \[[^\]]*\]: (.*)$")
_ON = re.compile(r"^On ([^:]+): (.*)$")
# "On <conn>: ..." messages that are dbt's connection bookkeeping, not SQL.
_NOT_SQL = {"Close", "ROLLBACK", "COMMIT", "BEGIN", "No close available on handle"}
_COMMENTS = re.compile(r"/\*.*?\*/|--[^\n]*", re.S)

# (kind, pattern on the statement without comments, lower case, whitespace collapsed, catalog?)
KINDS: list[tuple[str, re.Pattern[str], bool]] = [
    (kind, re.compile(pattern), catalog)
    for kind, pattern, catalog in [
        ("show namespaces/databases", r"^show (namespaces|databases|schemas)\b", True),
        ("create namespace/schema", r"^create (namespace|schema|database)\b", True),
        ("drop namespace/schema", r"^drop (namespace|schema|database)\b", True),
        ("show table extended", r"^show table extended\b", True),
        ("show tables", r"^show tables\b", True),
        ("show views", r"^show views\b", True),
        ("describe", r"^desc(ribe)?\b", True),
        ("show (other)", r"^show\b", True),
        (
            "create table ... as select",
            r"^create (or replace )?table\b.* as (select|with|\()",
            False,
        ),
        ("create table", r"^(create (or replace )?|replace )table\b", False),
        ("create view", r"^create (or replace )?(temporary )?view\b", False),
        ("insert/merge", r"^(insert|merge)\b", False),
        ("drop table/view", r"^drop\b", False),
        ("alter", r"^alter\b", False),
        ("query", r"^(select|with)\b", False),
        ("other", r"", False),
    ]
]
CATALOG_KINDS = [kind for kind, _, catalog in KINDS if catalog]


def write_project(folder: Path, models: int, schemas: int, peer: bool) -> Path:
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    settings: dict = {"+materialized": "table"}
    if peer:
        settings["+file_format"] = "iceberg"
    for k in range(schemas):
        settings[f"s{k}"] = {"+schema": f"s{k}"}
        (folder / "models" / f"s{k}").mkdir(parents=True)
    for n in range(1, models + 1):
        (folder / "models" / f"s{n % schemas}" / f"m{n:04d}.sql").write_text(f"select {n} as id\n")
    project = {
        "name": PROFILE,
        "version": "1.0",
        "config-version": 2,
        "profile": PROFILE,
        "model-paths": ["models"],
        "models": {PROFILE: settings},
    }
    (folder / "dbt_project.yml").write_text(yaml.safe_dump(project, sort_keys=False))
    return folder


def logged_statements(log: Path) -> tuple[list[str], list[str]]:
    """Every SQL statement dbt logged as sent, in order, and those the adapter logged as
    failed (`... error while running:` followed by the statement)."""
    sent: list[list[str]] = []
    failed: list[list[str]] = []
    current: list[str] | None = None
    if not log.exists():
        return [], []
    for line in log.read_text(errors="replace").splitlines():
        match = _LOG_LINE.match(line)
        if match is None:
            if current is not None:
                current.append(line)  # the statement goes on
            continue
        current = None
        message = match.group(1)
        on = _ON.match(message)
        if on and on.group(2).strip() not in _NOT_SQL:
            current = [on.group(2)]
            sent.append(current)
        elif message.lower().endswith("error while running:"):
            current = []
            failed.append(current)
    errors = ["\n".join(parts).strip() for parts in failed]
    # dbt-spark also logs the macro the failed statement ran in ("macro list_relations_...").
    return ["\n".join(parts) for parts in sent], [e for e in errors if not e.startswith("macro ")]


def kind_of(statement: str) -> str:
    text = " ".join(_COMMENTS.sub(" ", statement).lower().split())
    return next(kind for kind, pattern, _ in KINDS if pattern.search(text))


def main() -> None:
    parser = common_args(__doc__.splitlines()[0], rounds=2)
    parser.add_argument("--models", type=int, default=200, help="models (default %(default)s)")
    parser.add_argument("--schemas", type=int, default=4, help="schemas (default %(default)s)")
    args = parser.parse_args()
    work: Path = args.work / "metadata"
    ours, peer = Series("dbt-lakehouse"), Series("dbt-spark session")
    counts: dict[str, list[Counter[str]]] = {"ours": [], "peer": []}
    failures: dict[str, list[Counter[str]]] = {"ours": [], "peer": []}

    def counted(side: str, project: Path, sample: Sample) -> Sample:
        sent, failed = logged_statements(project / "logs" / "dbt.log")
        counts[side].append(Counter(kind_of(s) for s in sent))
        failures[side].append(Counter(kind_of(s) for s in failed))
        return sample

    def run_ours(round_no: int) -> Sample:
        project = write_project(work / "ours", args.models, args.schemas, peer=False)
        write_profiles(project, PROFILE, ours_target(SCHEMA))
        sample = run_timed(
            dbt_command("run", project=project), project, log=work / f"ours-{round_no}.log"
        )
        return counted("ours", project, sample)

    def run_peer(round_no: int) -> Sample:
        project = write_project(work / "peer", args.models, args.schemas, peer=True)
        warehouse = work / "peer-warehouse"
        shutil.rmtree(warehouse, ignore_errors=True)
        warehouse.mkdir(parents=True)  # the hadoop catalog cannot list a missing folder
        write_profiles(
            project,
            PROFILE,
            peer_target(SCHEMA, warehouse, spark_defaults=args.peer_spark_defaults),
        )
        sample = run_timed(
            dbt_command("run", project=project), project, log=work / f"peer-{round_no}.log"
        )
        return counted("peer", project, sample)

    alternate(args.rounds, [(ours, run_ours), (peer, run_peer)])
    report(
        f"metadata scaling: `dbt run` of {args.models} tables in {args.schemas} schemas, cold"
        + peer_settings(args),
        [(f"dbt run {args.models} models/{args.schemas} schemas", ours, peer, "-")],
    )

    print("\nSQL statements sent, by kind (from each project's logs/dbt.log, first round):")
    first = {side: rounds[0] if rounds else Counter() for side, rounds in counts.items()}
    failed = {side: rounds[0] if rounds else Counter() for side, rounds in failures.items()}
    kinds = [kind for kind, _, _ in KINDS if first["ours"][kind] or first["peer"][kind]]

    def cell(side: str, kinds: list[str]) -> str:
        errors = sum(failed[side][k] for k in kinds)
        return f"{sum(first[side][k] for k in kinds)}" + (f" ({errors} failed)" if errors else "")

    print(f"  {'kind':<30} {'ours':>16} {'peer':>16}")
    for kind in kinds:
        mark = "  (catalog)" if kind in CATALOG_KINDS else ""
        print(f"  {kind:<30} {cell('ours', [kind]):>16} {cell('peer', [kind]):>16}{mark}")
    for label, selected in (
        ("catalog statements", CATALOG_KINDS),
        ("model statements", [k for k in kinds if k not in CATALOG_KINDS]),
    ):
        print(f"  {label:<30} {cell('ours', selected):>16} {cell('peer', selected):>16}")
    for side, rounds in counts.items():
        if any(round_counts != rounds[0] for round_counts in rounds[1:]):
            print(f"  note: {side}'s counts differ between rounds: {[dict(r) for r in rounds]}")


if __name__ == "__main__":
    main()
