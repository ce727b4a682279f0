{#- One write, two formats (delta_mirror/log.py, delta_mirror/sync.py): a table with config
    `table_formats: [iceberg, delta]` gets a Delta Lake log of the same Parquet files after
    every Iceberg commit dbt makes on it. These are the materializations' part (checks before
    anything is written, the mirror after), and the `lakehouse_sync_delta` run-operation. -#}

{% macro lakehouse_table_formats(node_config=none) %}
  {%- set source = node_config if node_config is not none else config -%}
  {%- set known = model is defined and model is not none -%}
  {{ return(adapter.table_formats(source.get('table_formats'), model.name if known else 'this table',
                                  model.database if known else none)) }}
{% endmacro %}

{% macro lakehouse_is_dual_format() %}
  {%- if not execute or model is not defined or model is none -%}{{ return(false) }}{%- endif -%}
  {{ return('delta' in lakehouse_table_formats()) }}
{% endmacro %}

{% macro lakehouse_delta_properties() %}
  {#- The table properties a dual-format table is created with (copy-on-write); a
      merge-on-read table_properties config is refused here, before anything is written. -#}
  {%- if not lakehouse_is_dual_format() -%}{{ return({}) }}{%- endif -%}
  {{ return(adapter.delta_table_properties(lakehouse_configured_properties(), model.name)) }}
{% endmacro %}

{% macro lakehouse_delta_prepare(existing_relation) %}
  {#- Before a write to an existing table: a dual-format table must be copy-on-write, in its
      config too (table_properties only apply on create, so it is checked here as well). -#}
  {%- if existing_relation is not none and not existing_relation.is_view and lakehouse_is_dual_format() -%}
    {%- do lakehouse_delta_properties() -%}
    {%- do adapter.check_delta_table(existing_relation, model.name) -%}
  {%- endif -%}
{% endmacro %}

{% macro lakehouse_delta_check_schema_change(relation, add_columns, type_changes) %}
  {#- Before an in-place schema change: what Delta readers could not follow is refused. -#}
  {%- if lakehouse_is_dual_format() and (add_columns or type_changes) -%}
    {%- do adapter.check_delta_schema_change(relation, add_columns | map(attribute='name') | list,
                                             type_changes | map(attribute='column_name') | list,
                                             model.name) -%}
  {%- endif -%}
{% endmacro %}

{% macro lakehouse_delta_after_write(relation) %}
  {#- After a node's last commit (its write, post-hooks and maintenance): the Delta log
      follows `main`; in an audited run, after the publish. -#}
  {%- if lakehouse_is_dual_format() -%}
    {%- do adapter.mirror_delta(relation, model.name) -%}
  {%- endif -%}
{% endmacro %}

{% macro lakehouse_delta_tables(select=none) %}
  {#- The project's dual-format tables, by name or `tag:<tag>` (absent: all). -#}
  {%- set relations = [] -%}
  {%- for node in lakehouse_selected_nodes(lakehouse_table_nodes(dual_only=true), select,
                                           'lakehouse_sync_delta',
                                           'dual-format table (table_formats [iceberg, delta])') -%}
    {%- do relations.append(lakehouse_node_relation(node)) -%}
  {%- endfor -%}
  {{ return(relations) }}
{% endmacro %}

{% macro lakehouse_sync_delta(select=none) %}
  {#- dbt run-operation lakehouse_sync_delta --args '{select: [orders]}': bring the Delta log
      of each selected dual-format table up to its current Iceberg snapshot. -#}
  {%- if execute -%}
    {%- do adapter.sync_delta(lakehouse_delta_tables(select)) -%}
  {%- endif -%}
{% endmacro %}
