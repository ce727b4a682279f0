"""The stacked-views project bench/stacked_views.py builds: generated, never committed.

The shape of the public project issue 62 measured (28 seeds, views over views several levels
deep, a recursive CTE unrolled nine levels with unions, ~70 generic tests), in SQL both Spark
and DuckDB read the same way:

- 28 seeds `sNN` of SEED_ROWS rows: id (1..SEED_ROWS), k (another id: every k joins exactly one
  row of any seed), v, a label and a category in ('a', 'b', 'c');
- 28 staging views `stg_sNN` over them; 28 `j_NN` joining two staging views; 14 `u_NN`, the
  union of two joins; 14 `a_NN` aggregating a union; 7 `w_NN` joining two aggregates; 7 `d_NN`,
  the union of two of those; 4 `e_NN` over two `d`s each: eight levels of views;
- the recursive chain `rec_00` .. `rec_<depth>`: each level is the one below UNION ALL the one
  below joined to a staging view, so it reads the level below twice, and expanding the views
  naively doubles the plan at every level (rows double too: 30 * 2^depth at the top);
- four `f_` tables at the top (the rows the bench compares between the two sides);
- tests: unique and not_null on every staging id, accepted_values on seven categories,
  relationships on seven staging k's (70).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

PROFILE = "stacked"
SEEDS = 28
SEED_ROWS = 30
DEPTH = 9
FINALS = ("f_rec", "f_rec_roots", "f_summary", "f_wide")


def _seed_csv(n: int) -> str:
    lines = ["id,k,v,label,cat"]
    for i in range(1, SEED_ROWS + 1):
        k = (i * (n + 7) + n) % SEED_ROWS + 1  # a permutation-ish map into 1..SEED_ROWS
        v = (i * 13 + n * 5) % 97
        lines.append(f"{i},{k},{v},item_{n}_{i},{'abc'[(i + n) % 3]}")
    return "\n".join(lines) + "\n"


def _stg(n: int) -> str:
    return (
        f"select cast(id as integer) as id, cast(k as integer) as k, cast(v as integer) as v,\n"
        f"       label, cat, cast(v as integer) * 2 + cast(id as integer) as score\n"
        f"from {{{{ ref('s{n:02d}') }}}}\n"
    )


def _join(n: int) -> str:
    other = (n + 1) % SEEDS
    return (
        f"select a.id, a.k, a.v + b.v as v, b.cat, a.score - b.score as delta\n"
        f"from {{{{ ref('stg_s{n:02d}') }}}} a\n"
        f"join {{{{ ref('stg_s{other:02d}') }}}} b on a.k = b.id\n"
    )


def _union(n: int) -> str:
    return (
        f"select id, k, v, cat, delta, 'left' as side from {{{{ ref('j_{2 * n:02d}') }}}}\n"
        f"union all\n"
        f"select id, k, v, cat, delta, 'right' as side from {{{{ ref('j_{2 * n + 1:02d}') }}}}\n"
    )


def _aggregate(n: int) -> str:
    return (
        f"select cat, count(*) as n, sum(v) as v, max(id) as top, sum(delta) as delta\n"
        f"from {{{{ ref('u_{n:02d}') }}}}\n"
        f"where side = 'left' or v > 20\n"
        f"group by cat\n"
    )


def _wide(n: int) -> str:
    return (
        f"select a.cat, a.n + b.n as n, a.v - b.v as v, greatest(a.top, b.top) as top,\n"
        f"       a.delta + b.delta as delta\n"
        f"from {{{{ ref('a_{2 * n:02d}') }}}} a\n"
        f"join {{{{ ref('a_{2 * n + 1:02d}') }}}} b on a.cat = b.cat\n"
    )


def _double(n: int) -> str:
    return (
        f"select cat, n, v, top, delta, {n} as part from {{{{ ref('w_{n:02d}') }}}}\n"
        f"union all\n"
        f"select cat, n, v + 1 as v, top, delta, {n} as part "
        f"from {{{{ ref('w_{(n + 1) % 7:02d}') }}}}\n"
    )


def _edge(n: int) -> str:
    return (
        f"select cat, sum(n) as n, sum(v) as v, max(top) as top, count(*) as parts\n"
        f"from (\n"
        f"  select * from {{{{ ref('d_{(2 * n) % 7:02d}') }}}}\n"
        f"  union all\n"
        f"  select * from {{{{ ref('d_{(2 * n + 1) % 7:02d}') }}}}\n"
        f") both_sides\n"
        f"group by cat\n"
    )


def _rec(level: int) -> str:
    if level == 0:
        return (
            "select id as root, id as node, k as next_k, v as total, 0 as depth\n"
            "from {{ ref('stg_s00') }}\n"
        )
    below = f"rec_{level - 1:02d}"
    return (
        f"select root, node, next_k, total, depth from {{{{ ref('{below}') }}}}\n"
        f"union all\n"
        f"select r.root, s.id as node, s.k as next_k, r.total + s.v as total, "
        f"r.depth + 1 as depth\n"
        f"from {{{{ ref('{below}') }}}} r\n"
        f"join {{{{ ref('stg_s{level % SEEDS:02d}') }}}} s on r.next_k = s.id\n"
    )


def _finals(depth: int) -> dict[str, str]:
    top = f"rec_{depth:02d}"
    edges = "\nunion all\n".join(
        f"select {n} as edge, cat, n, v, top, parts from {{{{ ref('e_{n:02d}') }}}}"
        for n in range(4)
    )
    return {
        "f_rec": (
            f"select depth, count(*) as n, sum(total) as total, max(node) as top\n"
            f"from {{{{ ref('{top}') }}}}\ngroup by depth\n"
        ),
        "f_rec_roots": (
            f"select r.root, s.cat, count(*) as n, sum(r.total) as total\n"
            f"from {{{{ ref('{top}') }}}} r\n"
            f"join {{{{ ref('stg_s01') }}}} s on r.root = s.id\n"
            f"group by r.root, s.cat\n"
        ),
        "f_summary": edges + "\n",
        "f_wide": (
            "select e.cat, e.n, e.v, d.part, d.top, w.delta\n"
            "from {{ ref('e_00') }} e\n"
            "join {{ ref('d_03') }} d on e.cat = d.cat\n"
            "join {{ ref('w_05') }} w on w.cat = d.cat\n"
        ),
    }


def models(depth: int = DEPTH) -> dict[str, str]:
    """Every model's name -> its SQL."""
    found: dict[str, str] = {}
    found.update({f"stg_s{n:02d}": _stg(n) for n in range(SEEDS)})
    found.update({f"j_{n:02d}": _join(n) for n in range(SEEDS)})
    found.update({f"u_{n:02d}": _union(n) for n in range(SEEDS // 2)})
    found.update({f"a_{n:02d}": _aggregate(n) for n in range(SEEDS // 2)})
    found.update({f"w_{n:02d}": _wide(n) for n in range(7)})
    found.update({f"d_{n:02d}": _double(n) for n in range(7)})
    found.update({f"e_{n:02d}": _edge(n) for n in range(4)})
    found.update({f"rec_{n:02d}": _rec(n) for n in range(depth + 1)})
    found.update(_finals(depth))
    return found


def _schema_yml() -> dict:
    entries = []
    for n in range(SEEDS):
        columns = [{"name": "id", "data_tests": ["unique", "not_null"]}]
        if n % 4 == 0:
            columns.append(
                {
                    "name": "cat",
                    "data_tests": [{"accepted_values": {"arguments": {"values": ["a", "b", "c"]}}}],
                }
            )
        if n % 4 == 1:
            target = f"ref('stg_s{(n + 1) % SEEDS:02d}')"
            columns.append(
                {
                    "name": "k",
                    "data_tests": [{"relationships": {"arguments": {"to": target, "field": "id"}}}],
                }
            )
        entries.append({"name": f"stg_s{n:02d}", "columns": columns})
    return {"version": 2, "models": entries}


def write(project: Path, depth: int = DEPTH, checkpoints: bool = True) -> int:
    """Write the project into `project` (emptied first); returns its number of models.
    `checkpoints=False`: every model says `checkpoint: false` (docs/models.md#stacked-views;
    dbt-duckdb ignores the config)."""
    shutil.rmtree(project, ignore_errors=True)
    (project / "seeds").mkdir(parents=True)
    (project / "models").mkdir()
    for n in range(SEEDS):
        (project / "seeds" / f"s{n:02d}.csv").write_text(_seed_csv(n))
    found = models(depth)
    for name, sql in found.items():
        (project / "models" / f"{name}.sql").write_text(sql)
    (project / "models" / "schema.yml").write_text(yaml.safe_dump(_schema_yml(), sort_keys=False))
    settings = {
        "name": PROFILE,
        "version": "1.0",
        "config-version": 2,
        "profile": PROFILE,
        "models": {
            PROFILE: {
                "+materialized": "view",
                **({} if checkpoints else {"+checkpoint": False}),
                **{name: {"+materialized": "table"} for name in FINALS},
            }
        },
    }
    (project / "dbt_project.yml").write_text(yaml.safe_dump(settings, sort_keys=False))
    return len(found)


def checksum_sql() -> str:
    """One query both sides answer for the rows of the final tables: per table, its row count
    and the sum of a fingerprint of its integer columns."""
    parts = {
        "f_rec": "sum(depth * 1000003 + n * 101 + total)",
        "f_rec_roots": "sum(root * 1000003 + n * 101 + total)",
        "f_summary": "sum(edge * 1000003 + n * 101 + v * 7 + top + parts)",
        "f_wide": "sum(n * 1000003 + v * 101 + part * 7 + top + delta)",
    }
    return " union all ".join(
        f"select '{name}' as model, count(*) as row_count, {fingerprint} as fingerprint "
        f"from {{{{ ref('{name}') }}}}"
        for name, fingerprint in parts.items()
    )
