{#- DDL for the tables this adapter writes: always Iceberg, always replaced atomically. -#}

{% macro lakehouse__create_table_as(temporary, relation, compiled_code, language='sql') -%}
  {%- if language != 'sql' -%}
    {{ exceptions.raise_compiler_error("dbt-lakehouse runs SQL models only; '" ~ model.name ~ "' is a " ~ language ~ " model.") }}
  {%- endif -%}
  {%- if temporary -%}
    create or replace temporary view {{ relation.include(database=false, schema=false) }} as
    {{ compiled_code }}
  {%- else -%}
    {%- set contract_config = config.get('contract') -%}
    {%- if contract_config and contract_config.enforced -%}
      {{ get_assert_columns_equivalent(compiled_code) }}
      {%- set compiled_code = get_select_subquery(compiled_code) -%}
    {%- endif -%}
    create or replace table {{ relation }}
    using iceberg
    {{ lakehouse_partition_clause(compiled_code) }}
    {{ comment_clause() }}
    {{ lakehouse_tblproperties_clause() }}
    as
    {{ compiled_code }}
  {%- endif -%}
{%- endmacro %}

{% macro lakehouse_partition_clause(compiled_code) -%}
  {#- Validated against the model's own columns before anything is written. -#}
  {%- if config.get('partition_by') -%}
    {{ lakehouse_partition_clause_for(get_columns_in_query(compiled_code)) }}
  {%- endif -%}
{%- endmacro %}

{% macro lakehouse_partition_clause_for(column_names) -%}
  {%- set partition_by = config.get('partition_by') -%}
  {%- if partition_by -%}
    {{ adapter.partition_clause(partition_by, column_names, model.name) }}
  {%- endif -%}
{%- endmacro %}

{% macro lakehouse_tblproperties_clause() -%}
  {#- `table_properties` is ours; dbt-spark's `tblproperties` is honoured too, ours wins. -#}
  {%- set properties = {} -%}
  {%- for key in ['tblproperties', 'table_properties'] -%}
    {%- set value = config.get(key) -%}
    {%- if value is not none and value is not mapping -%}
      {{ exceptions.raise_compiler_error("Invalid " ~ key ~ " for model '" ~ model.name ~ "': expected a mapping of Iceberg table properties such as {'write.merge.mode': 'merge-on-read'}, got " ~ value) }}
    {%- endif -%}
    {%- do properties.update(value or {}) -%}
  {%- endfor -%}
  {%- if properties -%}
    tblproperties (
      {%- for name, value in properties.items() %}
      '{{ name | replace("'", "\\'") }}' = '{{ (value | string) | replace("'", "\\'") }}'{{ ',' if not loop.last }}
      {%- endfor %}
    )
  {%- endif -%}
{%- endmacro %}

{% macro lakehouse_apply_write_order(relation) -%}
  {%- set write_order_by = config.get('write_order_by') -%}
  {%- if write_order_by -%}
    {%- if write_order_by is string -%}{%- set write_order_by = [write_order_by] -%}{%- endif -%}
    {% call statement('write_order_by') %}
      alter table {{ relation }} write ordered by {{ write_order_by | join(', ') }}
    {% endcall %}
  {%- endif -%}
{%- endmacro %}
