{#- One macro per strategy, dispatched through adapter.get_incremental_strategy_macro so a
    project can add its own get_incremental_<name>_sql. Each renders ONE statement, so each
    run is one Iceberg commit: a failure leaves the table as it was. Columns are named
    explicitly, so column order in the model never matters. -#}

{% macro lakehouse__get_incremental_append_sql(arg_dict) %}
  {%- set cols = arg_dict['dest_columns'] | map(attribute='quoted') | join(', ') -%}
  insert into {{ arg_dict['target_relation'] }} ({{ cols }})
  select {{ cols }} from {{ arg_dict['temp_relation'] }}
{% endmacro %}

{% macro get_incremental_replace_sql(arg_dict) %}
  {{ return(adapter.dispatch('get_incremental_replace_sql', 'dbt')(arg_dict)) }}
{% endmacro %}

{% macro lakehouse__get_incremental_replace_sql(arg_dict) %}
  {#- Static overwrite with no PARTITION clause: the whole table's contents are replaced by
      the new rows in one snapshot; earlier snapshots stay for time travel. -#}
  {%- set cols = arg_dict['dest_columns'] | map(attribute='quoted') | join(', ') -%}
  insert overwrite {{ arg_dict['target_relation'] }} ({{ cols }})
  select {{ cols }} from {{ arg_dict['temp_relation'] }}
{% endmacro %}

{% macro lakehouse__get_incremental_merge_sql(arg_dict) %}
  {{ return(get_merge_sql(arg_dict['target_relation'], arg_dict['temp_relation'],
                          arg_dict['unique_key'], arg_dict['dest_columns'],
                          arg_dict['incremental_predicates'])) }}
{% endmacro %}

{% macro lakehouse__get_merge_update_columns(merge_update_columns, merge_exclude_columns, dest_columns) %}
  {#- dbt's standard rules (dbt-spark's variant falls back to `*`). -#}
  {{ return(default__get_merge_update_columns(merge_update_columns, merge_exclude_columns, dest_columns)) }}
{% endmacro %}

{% macro lakehouse__get_merge_sql(target, source, unique_key, dest_columns, incremental_predicates=none) %}
  {#- Keys match null-safely (<=>): a NULL key updates its earlier row instead of piling up
      duplicates run after run. -#}
  {%- set predicates = [] if incremental_predicates is none else [] + incremental_predicates -%}
  {%- set update_columns = get_merge_update_columns(config.get('merge_update_columns'),
                                                    config.get('merge_exclude_columns'),
                                                    dest_columns) -%}
  {%- set keys = [] -%}
  {%- if unique_key is sequence and unique_key is not mapping and unique_key is not string -%}
    {%- set keys = unique_key -%}
  {%- elif unique_key -%}
    {%- set keys = [unique_key] -%}
  {%- endif -%}
  {%- for key in keys -%}
    {%- do predicates.append('DBT_INTERNAL_SOURCE.' ~ key ~ ' <=> DBT_INTERNAL_DEST.' ~ key) -%}
  {%- endfor -%}
  {%- if not keys -%}
    {%- do predicates.append('FALSE') -%}
  {%- endif -%}
  {%- set insert_cols = dest_columns | map(attribute='quoted') | list -%}
  {{ sql_header if sql_header is not none }}
  merge into {{ target }} as DBT_INTERNAL_DEST
  using {{ source }} as DBT_INTERNAL_SOURCE
  on {{ predicates | join('\n    and ') }}
  {%- if update_columns %}
  when matched then update set
    {%- for column_name in update_columns %}
    {{ column_name }} = DBT_INTERNAL_SOURCE.{{ column_name }}{{ ',' if not loop.last }}
    {%- endfor %}
  {%- endif %}
  when not matched then insert ({{ insert_cols | join(', ') }})
    values ({% for col in insert_cols %}DBT_INTERNAL_SOURCE.{{ col }}{{ ', ' if not loop.last }}{% endfor %})
{% endmacro %}
