{#- Seeds load through one Spark DataFrame and land in one CREATE OR REPLACE TABLE ... AS SELECT,
    whether the table is new, refreshed or reloaded: one commit, history kept, types from the
    CSV inference or `column_types`. dbt's seed materialization drives these three hooks. -#}

{% macro lakehouse__create_csv_table(model, agate_table) %}
  {%- set relation = this.incorporate(type='table') -%}
  {%- set view_name = relation.schema ~ '__' ~ relation.identifier ~ '__dbt_seed' -%}
  {%- set column_override = model['config'].get('column_types', {}) -%}
  {%- set quote_seed_column = model['config'].get('quote_columns', None) -%}
  {%- do adapter.register_seed_view(view_name, agate_table, agate_table.column_names) -%}
  {%- set sql -%}
    create or replace table {{ relation }}
    using iceberg
    {{ lakehouse_partition_clause_for(agate_table.column_names) }}
    {{ comment_clause() }}
    {{ lakehouse_tblproperties_clause() }}
    as select
    {%- for col_name in agate_table.column_names %}
      {%- set inferred_type = adapter.convert_type(agate_table, loop.index0) -%}
      {%- set type = column_override.get(col_name, inferred_type) %}
      cast({{ adapter.quote(col_name) }} as {{ type }}) as {{ adapter.quote(col_name) }}{{ ',' if not loop.last }}
    {%- endfor %}
    from {{ adapter.quote(view_name) }}
  {%- endset -%}
  {%- call statement('_') -%}
    {{ sql }}
  {%- endcall -%}
  {%- do adapter.drop_temp_view(view_name) -%}
  {{ return(sql) }}
{% endmacro %}

{% macro lakehouse__reset_csv_table(model, full_refresh, old_relation, agate_table) %}
  {{ return(create_csv_table(model, agate_table)) }}
{% endmacro %}

{% macro lakehouse__load_csv_rows(model, agate_table) %}
  {#- The rows went in with the table itself (create_csv_table). -#}
  {{ return('') }}
{% endmacro %}
