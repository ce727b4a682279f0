{#- `select * from {{ lakehouse.mv_status(ref('daily_totals')) }}`: one row per upstream of the
    materialized view, fresh or stale, by how many snapshots and since when
    (docs/materialized-views.md). Read from metadata when the SQL compiles. -#}
{% macro mv_status(relation) -%}
  {{ return(adapter.mv_status_sql(relation, execute)) }}
{%- endmacro %}
