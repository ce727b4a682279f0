{#- One macro per strategy, dispatched through adapter.get_incremental_strategy_macro so a
    project can add its own get_incremental_<name>_sql. Each renders ONE statement, so each
    run is one Iceberg commit: a failure leaves the table as it was. Columns are named
    explicitly, so column order in the model never matters. merge is in merge.sql, microbatch
    in microbatch.sql. -#}

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
      the new rows in one snapshot; earlier snapshots stay for time travel. The overwrite mode
      is scoped to this statement (the cursor applies it under a process-wide lock), so a
      concurrent insert_overwrite in another thread cannot turn this into a partial one. -#}
  {%- set cols = arg_dict['dest_columns'] | map(attribute='quoted') | join(', ') -%}
  -- lakehouse:conf spark.sql.sources.partitionOverwriteMode=static
  insert overwrite {{ arg_dict['target_relation'] }} ({{ cols }})
  select {{ cols }} from {{ arg_dict['temp_relation'] }}
{% endmacro %}

{% macro lakehouse__get_incremental_insert_overwrite_sql(arg_dict) %}
  {#- Dynamic overwrite: Iceberg replaces exactly the partitions (of the table's current spec,
      transforms included) that the new rows fall into; every other data file stays as it is.
      No PARTITION (...) clause: it cannot name a transform such as days(ts). The table must
      be partitioned (checked before any SQL runs: an unpartitioned table would be replaced
      whole). -#}
  {%- set cols = arg_dict['dest_columns'] | map(attribute='quoted') | join(', ') -%}
  -- lakehouse:conf spark.sql.sources.partitionOverwriteMode=dynamic
  insert overwrite {{ arg_dict['target_relation'] }} ({{ cols }})
  select {{ cols }} from {{ arg_dict['temp_relation'] }}
{% endmacro %}

{% macro lakehouse__get_incremental_delete_insert_sql(arg_dict) %}
  {#- delete+insert as ONE MERGE (one commit): a row per distinct new key deletes the target
      rows with that key (null-safe, and only where incremental_predicates hold), and every
      new row is inserted, repeated keys included. Source columns are renamed so unqualified
      predicates (dbt's convention for delete+insert) can only mean target columns. -#}
  {%- set target = arg_dict['target_relation'] -%}
  {%- set source = arg_dict['temp_relation'] -%}
  {%- set columns = arg_dict['dest_columns'] -%}
  {%- set keys = lakehouse_key_columns(arg_dict['unique_key']) -%}
  {%- set key_names = keys | map('lower') | list -%}
  {%- set predicates = arg_dict['incremental_predicates'] or [] -%}
  merge into {{ target }} as DBT_INTERNAL_DEST
  using (
    select
      {%- for col in columns %}
      {{ col.quoted }} as {{ lakehouse_source_alias(col.name) }},
      {%- endfor %}
      false as __dbt_src_is_key
    from {{ source }}
    union all
    select distinct
      {%- for col in columns %}
      {{ col.quoted if col.name | lower in key_names else 'null' }} as {{ lakehouse_source_alias(col.name) }},
      {%- endfor %}
      true as __dbt_src_is_key
    from {{ source }}
  ) as DBT_INTERNAL_SOURCE
  on DBT_INTERNAL_SOURCE.__dbt_src_is_key
  {%- for col in columns if col.name | lower in key_names %}
    and DBT_INTERNAL_DEST.{{ col.quoted }} <=> DBT_INTERNAL_SOURCE.{{ lakehouse_source_alias(col.name) }}
  {%- endfor %}
  {%- for predicate in predicates %}
    and ({{ predicate }})
  {%- endfor %}
  when matched then delete
  when not matched and not DBT_INTERNAL_SOURCE.__dbt_src_is_key then insert ({{ columns | map(attribute='quoted') | join(', ') }})
    values ({% for col in columns %}DBT_INTERNAL_SOURCE.{{ lakehouse_source_alias(col.name) }}{{ ', ' if not loop.last }}{% endfor %})
{% endmacro %}

{% macro lakehouse_source_alias(column_name) -%}
  `__dbt_src_{{ column_name | replace('`', '``') }}`
{%- endmacro %}

{% macro lakehouse_key_columns(unique_key) %}
  {#- unique_key as a list of column names (checked against the model's columns before any
      SQL runs: lakehouse_validate_incremental_columns). -#}
  {{ return([unique_key] if unique_key is string else (unique_key or []) | list) }}
{% endmacro %}
