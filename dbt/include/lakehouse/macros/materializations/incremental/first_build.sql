{% macro lakehouse_incremental_first_build_sql(strategy, relation, compiled_code, change_columns=[]) %}
  {#- CREATE OR REPLACE TABLE of exactly the rows the strategy's first run would leave in an
      empty table (merge: one row per key, deletes dropped; microbatch: rows inside the
      batch window only), so a first run, a rerun and a full refresh agree. Strategies whose
      configs name columns are checked against the query's columns first (planning only). -#}
  {%- if strategy not in ['merge', 'delete+insert', 'microbatch'] -%}
    {{ return(create_table_as(False, relation, compiled_code)) }}
  {%- endif -%}
  {%- set columns = get_column_schema_from_query(compiled_code) -%}
  {%- do lakehouse_validate_incremental_columns(strategy, columns) -%}
  {%- set new_rows = '(\n' ~ compiled_code ~ '\n) as DBT_INTERNAL_NEW_ROWS' -%}
  {%- if strategy == 'merge' -%}
    {#- Changelog columns (lakehouse.changes) pick the rows; they are not written. -#}
    {%- set columns = columns | rejectattr('name', 'in', change_columns) | list -%}
    {%- set rows_sql = lakehouse_merge_first_build_sql(new_rows, lakehouse_unique_key(), columns) -%}
  {%- elif strategy == 'microbatch' -%}
    {%- set rows_sql = lakehouse_microbatch_first_build_sql(new_rows, columns) -%}
  {%- else -%}
    {%- set rows_sql = compiled_code -%}
  {%- endif -%}
  {{ return(lakehouse_create_table_sql(relation, rows_sql, columns | map(attribute='name') | list)) }}
{% endmacro %}
