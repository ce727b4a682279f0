"""The dbt project of the native-execution tests: models for each class of wrong result Comet
has shipped before, and a macro that reads every relation back as text.

The aggregates are views, so each engine computes them when it reads them; the `_ctas` tables
hold the rows the building engine computed for two of them.

Rows are a function of var('round') alone. Round 2 changes ids divisible by 5, deletes ids
divisible by 7 (merge-on-read tables: position deletes on v2, deletion vectors on v3), adds ids
30-34, adds a column to the evolved table and replaces partition p = 1 of the overwritten one.
"""

from __future__ import annotations

MOR = (
    "{'write.merge.mode': 'merge-on-read', 'write.update.mode': 'merge-on-read', "
    "'write.delete.mode': 'merge-on-read'}"
)
MERGE = "materialized='incremental', unique_key='id', delete_condition=\"op = 'd'\""
ROUND_ROWS = """
select id, cast(id % 3 as int) as p,
       case when {{ var('round') }} >= 2 and id % 5 = 0 then 'changed' else 'first' end as v,
       case when {{ var('round') }} >= 2 and id % 7 = 0 then 'd' else 'u' end as op,
       cast(id as decimal(12, 2)) / 4 as amount
from range(0, 30 + ({{ var('round') }} - 1) * 5) as r
{% if is_incremental() %} where id % 5 = 0 or id % 7 = 0 or id >= 30 {% endif %}
"""
# A tag on round 1's snapshot, read back with VERSION AS OF after round 2 (time travel).
TAG_ROUND_1 = (
    "post_hook=\"{% if var('round') == 1 %}alter table {{ this }} create tag round1{% endif %}\""
)
# 30 values with 35 integer digits each: every sum fits decimal(38, 2) (36 integer digits) with
# less than one digit to spare (#6002: Comet gave NULL for sums near the bound); `swing` adds
# and takes away 6e35, summing to 0 per group.
DECIMALS = """
select id, id % 3 as g,
       cast(concat(cast(id + 1 as string), repeat('9', 33), '.99') as decimal(38, 2)) as big,
       cast(case when id % 2 = 0 then '600000000000000000000000000000000000.00'
                 else '-600000000000000000000000000000000000.00' end as decimal(38, 2)) as swing,
       cast(id as decimal(10, 2)) / 3 as small, cast(id % 4 as int) as a,
       cast(id % 6 as bigint) as b, cast(id as double) / 8 as x
from range(0, 30) as r
"""
SPECIAL = """
select * from values
  (1, cast('NaN' as double), cast('-0.0' as double), date'1500-03-01',
   timestamp'1400-01-01 12:00:00', timestamp'2026-03-29 00:30:00'),
  (2, cast('NaN' as double), cast('0.0' as double), date'1582-10-04',
   timestamp'1582-10-15 00:00:00', timestamp'2026-03-29 01:30:00'),
  (3, cast('Infinity' as double), cast('-0.0' as double), date'0001-01-01',
   timestamp'0001-01-01 00:00:00', timestamp'2026-10-25 00:30:00'),
  (4, cast('-Infinity' as double), cast(1.5 as double), date'1582-10-15',
   timestamp'1899-12-31 23:59:59', timestamp'2026-10-25 01:30:00'),
  (5, cast(null as double), cast(null as double), cast(null as date),
   cast(null as timestamp), timestamp'2026-11-01 08:00:00'),
  (6, cast(2.5 as double), cast('0.0' as double), date'1000-02-28',
   timestamp'1000-02-28 06:00:00', timestamp'2026-11-01 09:00:00')
  as t(id, d, z, old_date, old_ts, ts)
"""

CTAS = "{{{{ config(materialized='table') }}}} select * from {{{{ ref('{view}') }}}}"

MODELS = {
    "decimals.sql": "{{ config(materialized='table') }}" + DECIMALS,
    "decimal_sums.sql": """{{ config(materialized='view') }}
select g, sum(big) as big_sum, sum(swing) as swing_sum, avg(small) as small_avg, count(*) as n
from {{ ref('decimals') }} group by g
union all
select -1, sum(big), sum(swing), avg(small), count(*) from {{ ref('decimals') }}
""",
    "distinct_aggs.sql": """{{ config(materialized='view') }}
select g, count(distinct a) as da, sum(distinct b) as sb, count(distinct a, b) as dab,
       avg(distinct x) as ax, count(*) as n, sum(x) as sx, max(big) as mb
from {{ ref('decimals') }} group by g
union all
select -1, count(distinct a), sum(distinct b), count(distinct a, b), avg(distinct x), count(*),
       sum(x), max(big)
from {{ ref('decimals') }}
""",
    "special_values.sql": "{{ config(materialized='table') }}" + SPECIAL,
    "special_reads.sql": """{{ config(materialized='view') }}
select 'group_d' as q, cast(d as string) as k, count(*) as n from {{ ref('special_values') }}
group by d
union all
select 'group_z', cast(z as string), count(*) from {{ ref('special_values') }} group by z
union all
select 'min_max', concat(cast(min(d) as string), '/', cast(max(d) as string)), count(d)
from {{ ref('special_values') }}
union all
select 'join_d', concat(cast(l.id as string), '-', cast(r.id as string)), 1
from {{ ref('special_values') }} l join {{ ref('special_values') }} r on l.d = r.d
union all
select 'old_dates', concat(cast(old_date as string), '|', cast(date_add(old_date, 1) as string),
       '|', cast(year(old_date) as string),
       '|', cast(datediff(old_date, date'1582-10-15') as string),
       '|', cast(old_ts as string), '|', cast(unix_seconds(old_ts) as string)), id
from {{ ref('special_values') }}
""",
    # A filter on a double column Comet's native Iceberg scan evaluates itself: it keeps 0.0 and
    # drops -0.0, where Spark keeps both (KNOWN_DIFFERENCES).
    "signed_zero_filter.sql": """{{ config(materialized='view') }}
select id, z from {{ ref('special_values') }} where z = 0.0
""",
    "ansi_divide.sql": """{{ config(materialized='table', enabled=var('round') == 1) }}
select id, 1 / (id - id) as x from {{ ref('decimals') }}
""",
    "ansi_cast.sql": """{{ config(materialized='table', enabled=var('round') == 1) }}
select cast(concat('n', cast(id as string)) as int) as x from {{ ref('decimals') }}
""",
    "ansi_overflow.sql": """{{ config(materialized='table', enabled=var('round') == 1) }}
select sum(big) * 100 as too_big from {{ ref('decimals') }}
""",
    "mor_v2.sql": (
        f"{{{{ config({MERGE}, partition_by=['p'], table_properties={MOR}, {TAG_ROUND_1}) }}}}"
        + ROUND_ROWS
    ),
    "mor_v3.sql": (
        f"{{{{ config({MERGE}, format_version=3, partition_by=['p'], table_properties={MOR}) }}}}"
        + ROUND_ROWS
    ),
    "mor_v2_summary.sql": """{{ config(materialized='view') }}
select p, v, count(*) as n, sum(amount) as amount, count(distinct op) as ops, min(id) as lo
from {{ ref('mor_v2') }} group by p, v
""",
    # A function Comet has no native form of: its projection stays on the JVM, with the reason
    # in the node's adapter_response (report/native.py).
    "jvm_fallback.sql": """{{ config(materialized='table') }}
select id, java_method('java.lang.String', 'valueOf', id) as s from {{ ref('decimals') }}
""",
    # CTAS contents: the views' rows as Comet computed them when the table was written.
    "distinct_aggs_ctas.sql": CTAS.format(view="distinct_aggs"),
    "special_reads_ctas.sql": CTAS.format(view="special_reads"),
    "evolved.sql": """{{ config(materialized='incremental', unique_key='id',
    on_schema_change='append_new_columns', partition_by=['bucket(4, id)']) }}
select id, cast(id * 2 as bigint) as doubled
{% if var('round') >= 2 %}, concat('extra-', cast(id as string)) as extra{% endif %}
from range(0, 20 + ({{ var('round') }} - 1) * 5) as r
{% if is_incremental() %} where id >= 10 {% endif %}
""",
    "overwritten.sql": """{{ config(materialized='incremental',
    incremental_strategy='insert_overwrite', partition_by=['p']) }}
select id, cast(id % 3 as int) as p, concat('round', cast({{ var('round') }} as string)) as r
from range(0, 12) as t
{% if is_incremental() %} where id % 3 = 1 {% endif %}
""",
}

# Every relation the dump reads, by name, with its columns cast to one text value per row; the
# time-travel and time-zone reads are named queries of their own.
TABLES = (
    "decimals",
    "decimal_sums",
    "distinct_aggs",
    "distinct_aggs_ctas",
    "special_values",
    "special_reads",
    "special_reads_ctas",
    "signed_zero_filter",
    "mor_v2",
    "mor_v3",
    "mor_v2_summary",
    "evolved",
    "overwritten",
)
ZONES = ("America/Los_Angeles", "Asia/Kolkata")
# Queries whose rows Comet is known to get wrong, each with why: the test checks they still
# differ, so a Comet that fixes one fails it until the entry (and docs/engine-lines.md) go.
KNOWN_DIFFERENCES = {
    "signed_zero_filter": (
        "Comet 1.2's native Iceberg scan drops -0.0 rows for `z = 0.0` (Spark keeps them); "
        "spark.comet.exec.strictFloatingPoint does not cover the scan's own filter"
    ),
}
# The plan the Comet check explains: a grouped, distinct aggregate over a merge-on-read table.
EXPLAINED = "select p, count(distinct v), sum(amount) from {table} group by p"

DUMP_MACRO = """
{% macro dump_rows(tables, zones, explained) %}
  {% for schema in [target.schema] %}
    {% set prefix = target.database ~ '.' ~ schema ~ '.' %}
    {% set queries = {} %}
    {% for name in tables %}
      {% do queries.update({name: 'select to_json(struct(*)) from ' ~ prefix ~ name}) %}
    {% endfor %}
    {% do queries.update({'time_travel': 'select to_json(struct(*)) from ' ~ prefix
        ~ "mor_v2 version as of 'round1'"}) %}
    {% for name, sql in queries.items() %}
      {% do log('ROWS ' ~ tojson({'schema': schema, 'name': name,
          'rows': run_query(sql).columns[0].values() | list}), info=True) %}
    {% endfor %}
    {% for zone in zones %}
      {% do run_query("set spark.sql.session.timeZone=" ~ zone) %}
      {% set sql = 'select to_json(struct(id, ts, cast(ts as string) as s, hour(ts) as h, '
          ~ "to_date(ts) as d, date_trunc('DAY', ts) as day, old_ts)) from "
          ~ prefix ~ 'special_values' %}
      {% do log('ROWS ' ~ tojson({'schema': schema, 'name': 'zone ' ~ zone,
          'rows': run_query(sql).columns[0].values() | list}), info=True) %}
    {% endfor %}
    {% set plan = run_query('explain ' ~ explained.format(table=prefix ~ 'mor_v3')) %}
    {% do log('PLAN ' ~ tojson({'schema': schema, 'plan': plan.columns[0].values()[0]}),
        info=True) %}
  {% endfor %}
{% endmacro %}
"""
