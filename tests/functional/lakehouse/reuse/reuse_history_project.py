"""The dbt project of the reuse property test (test_reuse_history.py) and what a step does to it.

The DAG (17 nodes): the source `events`, written with plain Spark SQL (another engine's commits);
the seed `kind_labels`; the views `stg_events` (`select *`: a column added upstream redefines it;
checkpointed, so its readers read it through its stand-in) and `big_labels`; the tables
`enriched` (partition_by changes), `by_kind`, `threshold` (a var; partition_by changes) and
`noisy` (rand(): never reusable); three incremental models, `merge`, `insert_overwrite` and
`delete+insert`; the snapshot `events_snap` (check, hard deletes invalidated); five data tests,
severity warn so a failing one skips nothing.

Every incremental model is one whose incremental runs must equal a build from scratch: its query
has no incremental filter and its keys are a fixed set (buckets and days from range(), the seed's
kinds, which the history only adds to), so each run rewrites every key; the source's deletes
cannot leave a stale row behind.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from dbt.tests.util import write_file

from functional.lakehouse.reuse.reuse_history_steps import Catalogue, State, Step

SOURCES_YML = """
sources:
  - name: raw
    schema: "{{ target.schema }}"
    tables:
      - name: events
"""

SCHEMA_YML = """
models:
  - name: stg_events
    columns:
      - name: kind
        data_tests:
          - accepted_values:
              arguments:
                values: ['a', 'b', 'c', 'd']
  - name: enriched
    columns:
      - name: label
        data_tests: [not_null]
  - name: by_kind
    columns:
      - name: kind
        data_tests:
          - relationships:
              arguments:
                to: ref('kind_labels')
                field: kind
  - name: inc_merge
    columns:
      - name: bucket
        data_tests: [unique]
"""

BIG_TOTALS_SQL = "select * from {{ ref('by_kind') }} where total > {{ var('max_total') }}\n"

SNAPSHOT_SQL = """{{% snapshot events_snap %}}
{{{{ config(unique_key='id', strategy='check', check_cols='all', hard_deletes='invalidate') }}}}
{cosmetic}select id, kind, amount, day from {{{{ source('raw', 'events') }}}}
{{% endsnapshot %}}
"""

# An incremental branch that reads the model's own table and keeps every row (5 buckets, and
# the table never holds fewer than 0 rows): its incremental runs' query is not its first
# build's, as a real filter's would be, while their rows are the same.
SELF_FILTER = (
    "\n{% if is_incremental() %}where b.id < (select count(*) + 100 from {{ this }}){% endif %}\n"
)
# The models with such a branch: reuse builds their first incremental run after a full build.
INCREMENTAL_BRANCH = ("inc_merge",)
# model -> (config, SQL variants). Variants keep each model's columns (names and types) and
# refs: an edit changes what a model means, never the DAG's shape nor a reader's columns (a view
# over a table whose column changed type is rightly redefined, which the DAG model would count
# as a miss).
MODELS: dict[str, tuple[str, tuple[str, ...]]] = {
    "stg_events": (
        # checkpointed: its readers decide over its stand-in, and are remembered through it
        "materialized='view', checkpoint=true",
        (
            "select * from {{ source('raw', 'events') }}",
            "select * from {{ source('raw', 'events') }} where id % 7 <> 0",
        ),
    ),
    "enriched": (
        "materialized='table'{partition}",
        (
            "select e.id, e.kind, e.amount, e.day, l.label, l.weight\n"
            "from {{ ref('stg_events') }} e left join {{ ref('kind_labels') }} l"
            " on e.kind = l.kind",
            # The seed's weight is a bigint: cast back, or the column's type would change.
            "select e.id, e.kind, cast(e.amount + coalesce(l.weight, 0) as int) as amount, e.day,"
            " l.label, l.weight\n"
            "from {{ ref('stg_events') }} e left join {{ ref('kind_labels') }} l"
            " on e.kind = l.kind",
        ),
    ),
    "by_kind": (
        "materialized='table'",
        (
            "select kind, count(*) as n, sum(amount) as total from {{ ref('enriched') }}"
            " group by kind",
            "select kind, count(*) as n, sum(amount) as total from {{ ref('enriched') }}\n"
            "where day <> 0 group by kind",
        ),
    ),
    "threshold": (
        "materialized='table'{partition}",
        (
            "select id, amount from {{ ref('stg_events') }}"
            " where amount >= {{ var('min_amount') }}",
            "select id, amount from {{ ref('stg_events') }}\n"
            "where amount >= {{ var('min_amount') }} and kind <> 'c'",
        ),
    ),
    "big_labels": (
        "materialized='view'",
        (
            "select id, label from {{ ref('enriched') }} where weight >= 2",
            "select id, label from {{ ref('enriched') }} where weight >= 3",
        ),
    ),
    "noisy": ("materialized='table'", ("select id, rand() as r from {{ ref('stg_events') }}",)),
    "inc_merge": (
        "materialized='incremental', incremental_strategy='merge', unique_key='bucket'",
        (
            "select b.id as bucket, count(e.id) as n, cast(coalesce(sum(e.amount), 0) as bigint)"
            " as total\nfrom range(0, 5) b left join {{ ref('stg_events') }} e on e.id % 5 = b.id"
            + SELF_FILTER
            + " group by b.id",
            "select b.id as bucket, count(e.id) as n, cast(coalesce(max(e.amount), 0) as bigint)"
            " as total\nfrom range(0, 5) b left join {{ ref('stg_events') }} e on e.id % 5 = b.id"
            + SELF_FILTER
            + " group by b.id",
        ),
    ),
    "inc_overwrite": (
        "materialized='incremental', incremental_strategy='insert_overwrite', partition_by=['day']",
        (
            "select count(e.id) as n, cast(coalesce(sum(e.amount), 0) as bigint) as total,"
            " cast(d.id as int) as day\n"
            "from range(0, 4) d left join {{ ref('stg_events') }} e on e.day = d.id group by d.id",
            "select count(distinct e.kind) as n, cast(coalesce(sum(e.amount), 0) as bigint) as"
            " total, cast(d.id as int) as day\n"
            "from range(0, 4) d left join {{ ref('stg_events') }} e on e.day = d.id group by d.id",
        ),
    ),
    "inc_delins": (
        "materialized='incremental', incremental_strategy='delete+insert', unique_key='kind'",
        (
            "select l.kind, count(e.id) as n\nfrom {{ ref('kind_labels') }} l"
            " left join {{ ref('enriched') }} e on e.kind = l.kind group by l.kind",
            "select l.kind, cast(coalesce(sum(e.amount), 0) as bigint) as n\n"
            "from {{ ref('kind_labels') }} l left join {{ ref('enriched') }} e on e.kind = l.kind"
            " group by l.kind",
        ),
    ),
}
NONDETERMINISTIC = "noisy"
# The columns a non-deterministic model is compared on (its others are random).
COMPARED_COLUMNS = {"noisy": "id"}
# Which node renders which var (a changed value changes its definition).
VAR_READERS = {"threshold": ("min_amount",), "big_totals": ("max_total",)}
SEED = "kind_labels"
SEED_ROWS = {"a": ("Ay", 1), "b": ("Bee", 2), "c": ("Cee", 3)}
SOURCE = "events"
SOURCE_COLUMNS = "id, kind, amount, day"

CATALOGUE = Catalogue(
    variants={m: len(v) for m, (_, v) in MODELS.items() if len(v) > 1},
    cosmetic=(*MODELS, "events_snap"),
    nondeterministic=NONDETERMINISTIC,
    partitions={"enriched": ("", "kind", "day"), "threshold": ("", "bucket(4, id)")},
    vars={"min_amount": (5, 8, 12), "max_total": (40, 80, 150)},
    kinds=("a", "b", "c", "d", "e"),
    seed_kinds=("d", "e"),
    days=4,
    first_id=1000,
)


def project_files(state: State) -> dict[str, str]:
    """models/..., snapshots/..., tests/..., seeds/... -> text, rendered from the state."""
    files = {"models/sources.yml": SOURCES_YML, "models/schema.yml": SCHEMA_YML}
    for name, (config, variants) in MODELS.items():
        spec = state.partition.get(name, "")
        partition = f", partition_by=['{spec}']" if spec else ""
        body = cosmetic(variants[state.variant.get(name, 0)], state, name)
        files[f"models/{name}.sql"] = (
            "{{ config(" + config.format(partition=partition) + ") }}\n" + body
        )
    comment = (
        f"-- edit {state.cosmetic['events_snap']}\n" if "events_snap" in state.cosmetic else ""
    )
    files["snapshots/events_snap.sql"] = SNAPSHOT_SQL.format(cosmetic=comment)
    files["tests/big_totals.sql"] = BIG_TOTALS_SQL
    files[f"seeds/{SEED}.csv"] = seed_csv(state.seed)
    return files


def cosmetic(body: str, state: State, name: str) -> str:
    count = state.cosmetic.get(name)
    if count is None:
        return body + "\n"
    form = state.forms.get(name, "comment")
    if form == "comment":
        return f"-- edit {count}: nothing it means changed\n{body}\n"
    if form == "blank_lines":
        return "\n" * (count % 4 + 1) + body + "\n" * (count % 3 + 1)
    return body.replace(" from ", " " * (count % 4 + 2) + "from ", 1).replace("\n", "\n  ") + "\n"


def seed_csv(rows: Mapping[str, tuple[str, int]]) -> str:
    return "kind,label,weight\n" + "".join(
        f"{k},{label},{w}\n" for k, (label, w) in sorted(rows.items())
    )


def write_project(root: str, state: State, written: dict[str, str]) -> None:
    """Writes the files whose text changed (dbt's partial parse sees only those)."""
    for path, text in project_files(state).items():
        if written.get(path) != text:
            write_file(text, root, *path.split("/"))
            written[path] = text


def apply_step(step: Step, state: State, run_sql, events: str) -> bool:
    """Makes the step's change: the project's state (files written by the caller) or the
    source's rows and columns. True when the source's columns changed."""
    action = step.action
    if action == "edit_sql":
        state.variant[step.param("model")] = step.param("variant")
    elif action in ("edit_cosmetic", "touch_nondeterministic"):
        state.cosmetic[step.param("file")] = step.param("count")
        state.forms[step.param("file")] = step.param("form")
    elif action == "source_append":
        run_sql(f"insert into {events} ({SOURCE_COLUMNS}) values {values(step.param('rows'))}")
    elif action == "source_update":
        kind = step.param("kind")
        also = f", kind = '{kind}'" if kind else ""
        run_sql(
            f"update {events} set amount = amount + {step.param('delta')}{also} "
            f"where id % {step.param('modulus')} = {step.param('remainder')}"
        )
    elif action == "source_delete":
        run_sql(
            f"delete from {events} where id % {step.param('modulus')} = {step.param('remainder')}"
        )
    elif action == "seed_change":
        state.seed[step.param("kind")] = (step.param("label"), step.param("weight"))
    elif action == "var_change":
        state.vars[step.param("var")] = step.param("value")
    elif action == "partition_change":
        state.partition[step.param("model")] = step.param("spec")
    elif action == "add_column":
        run_sql(f"alter table {events} add column {step.param('column')} int")
        return True
    return False


def definitions(state: State, uids: Mapping[str, str]) -> dict[str, object]:
    """Each node's own definition by unique id (name -> uid in `uids`): what a change to its
    SQL's meaning, config, vars or CSV changes. Cosmetic edits are not in it."""
    own: dict[str, object] = {}
    for name, uid in uids.items():
        parts: tuple = (state.variant.get(name, 0), state.partition.get(name, ""))
        parts += tuple(state.vars[v] for v in VAR_READERS.get(name, ()))
        own[uid] = tuple(sorted(state.seed.items())) if name == SEED else parts
    return own


def values(rows) -> str:
    return ", ".join("(" + ", ".join(_literal(v) for v in row) + ")" for row in rows)


def _literal(value: object) -> str:
    if value is None:
        return "null"
    return f"'{value}'" if isinstance(value, str) else str(value)


def vars_arg(state: State) -> str:
    return json.dumps(state.vars, sort_keys=True)


def manifest(root: str | Path) -> dict:
    return json.loads(Path(root, "manifest.json").read_text())
