{% macro lakehouse__get_incremental_merge_sql(arg_dict) %}
  {%- set merge_sql = adapter.dispatch('get_merge_sql', 'dbt') -%}
  {%- set args = [arg_dict['target_relation'], arg_dict['temp_relation'], arg_dict['unique_key'],
                  arg_dict['dest_columns'], arg_dict['incremental_predicates']] -%}
  {#- Only our own get_merge_sql takes null_safe_keys: a project's override has dbt's signature. -#}
  {%- if merge_sql.macro.unique_id == 'macro.dbt_lakehouse.lakehouse__get_merge_sql' -%}
    {{ return(merge_sql(*args, null_safe_keys=arg_dict.get('null_safe_keys', true))) }}
  {%- else -%}
    {{ return(merge_sql(*args)) }}
  {%- endif -%}
{% endmacro %}

{% macro lakehouse__get_merge_update_columns(merge_update_columns, merge_exclude_columns, dest_columns) %}
  {#- dbt's standard rules (dbt-spark's variant falls back to `*`). -#}
  {{ return(default__get_merge_update_columns(merge_update_columns, merge_exclude_columns, dest_columns)) }}
{% endmacro %}

{% macro lakehouse__get_merge_sql(target, source, unique_key, dest_columns, incremental_predicates=none, null_safe_keys=true) %}
  {#- Keys match null-safely (<=>): a NULL key updates its earlier row instead of piling up
      duplicates run after run. When the new rows are known to hold no NULL key
      (null_safe_keys=false, from lakehouse_check_new_keys) plain `=` matches the same rows,
      and Spark joins on the key itself rather than on (coalesce(key), isnull(key)) computed
      for every target row. The new rows pass through lakehouse_merge_new_rows
      (latest_by, delete_condition) inside the USING subquery, so `op = 'd'` never clashes
      with a target column of the same name. -#}
  {%- set predicates = [] if incremental_predicates is none else [] + incremental_predicates -%}
  {%- set update_columns = get_merge_update_columns(config.get('merge_update_columns'),
                                                    config.get('merge_exclude_columns'),
                                                    dest_columns) -%}
  {%- set delete_condition = lakehouse_merge_setting('delete_condition') -%}
  {%- set keys = lakehouse_key_columns(unique_key) -%}
  {%- for key in keys -%}
    {%- do predicates.append('DBT_INTERNAL_SOURCE.' ~ key ~ (' <=> ' if null_safe_keys else ' = ') ~ 'DBT_INTERNAL_DEST.' ~ key) -%}
  {%- endfor -%}
  {%- if not keys -%}
    {%- do predicates.append('FALSE') -%}
  {%- endif -%}
  {%- set insert_cols = dest_columns | map(attribute='quoted') | list -%}
  {%- set sql_header = config.get('sql_header') -%}
  {{ sql_header if sql_header is not none }}
  {#- The new rows are usually far fewer than the target's: once the shuffle has measured them,
      Spark may build a hash table of each partition of theirs (up to 64 MB, its advisory
      partition size) instead of sorting every target row the merge reads. A larger batch
      keeps the sort-merge join. A planner setting only, shared with concurrent merges. #}
  -- lakehouse:plan spark.sql.adaptive.maxShuffledHashJoinLocalMapThreshold=64MB
  merge into {{ target }} as DBT_INTERNAL_DEST
  {%- if delete_condition or lakehouse_merge_setting('latest_by') %}
  using (
    {{ lakehouse_merge_new_rows(source, keys, dest_columns) }}
  ) as DBT_INTERNAL_SOURCE
  {%- else %}
  using {{ source }} as DBT_INTERNAL_SOURCE
  {%- endif %}
  on ({{ predicates | join(')\n    and (') }})
  {%- if delete_condition %}
  when matched and DBT_INTERNAL_SOURCE.__dbt_lakehouse_delete then delete
  {%- endif %}
  {%- if update_columns %}
  when matched then update set
    {%- for column_name in update_columns %}
    {{ column_name }} = DBT_INTERNAL_SOURCE.{{ column_name }}{{ ',' if not loop.last }}
    {%- endfor %}
  {%- endif %}
  when not matched {%- if delete_condition %} and not DBT_INTERNAL_SOURCE.__dbt_lakehouse_delete{% endif %} then insert ({{ insert_cols | join(', ') }})
    values ({% for col in insert_cols %}DBT_INTERNAL_SOURCE.{{ col }}{{ ', ' if not loop.last }}{% endfor %})
{% endmacro %}

{% macro lakehouse_merge_new_rows(source, keys, columns, check_keys=false) %}
  {#- The new rows as a merge applies them, one SELECT over `source` (a relation, or an
      aliased subquery): with latest_by, one row per key survives, greatest latest_by
      entries first (NULLs last), then the other columns in model order, greatest first;
      without it and with check_keys, a repeated key fails the statement, naming it; with
      delete_condition, each row carries __dbt_lakehouse_delete (NULL counts as false). -#}
  {%- set delete_condition = lakehouse_merge_setting('delete_condition') -%}
  {%- set latest_by = lakehouse_merge_setting('latest_by') -%}
  {%- set latest_by = [latest_by] if latest_by is string else (latest_by or []) | list -%}
  select {{ columns | map(attribute='quoted') | join(', ') }}
    {%- if delete_condition %},
      coalesce(({{ delete_condition }}), false) as __dbt_lakehouse_delete
    {%- endif %}
  {%- if latest_by %}
    from (
      select *, row_number() over (
        partition by {{ keys | join(', ') }}
        order by
          {%- for expression in latest_by %}
          ({{ expression }}) desc nulls last,
          {%- endfor %}
          {{ lakehouse_tie_break(columns, keys) }}
      ) as __dbt_lakehouse_rank
      from {{ source }}
    ) as DBT_INTERNAL_RANKED
    where __dbt_lakehouse_rank = 1
  {%- elif check_keys %}
    from (
      select *, count(*) over (partition by {{ keys | join(', ') }}) as __dbt_lakehouse_key_rows
      from {{ source }}
    ) as DBT_INTERNAL_COUNTED
    {#- A filter, not a column: Spark prunes unused columns, and the check with them. #}
    where case when __dbt_lakehouse_key_rows > 1
      then {{ lakehouse_repeated_key_error(keys, '__dbt_lakehouse_key_rows') }}
      else true end
  {%- else %}
    from {{ source }}
  {%- endif %}
{% endmacro %}

{% macro lakehouse_merge_first_build_sql(new_rows, unique_key, columns) %}
  {#- What a merge leaves in an empty table: the new rows, one per key (latest_by, else a
      repeated key fails), less those meeting delete_condition, which match nothing. The key
      check runs inside this one statement, so a failure writes nothing. -#}
  {%- set keys = lakehouse_key_columns(unique_key) -%}
  {%- set rows_sql = lakehouse_merge_new_rows(new_rows, keys, columns, check_keys=not lakehouse_merge_setting('latest_by')) -%}
  {%- if lakehouse_merge_setting('delete_condition') -%}
    select {{ columns | map(attribute='quoted') | join(', ') }}
    from (
      {{ rows_sql }}
    ) as DBT_INTERNAL_SOURCE
    where not __dbt_lakehouse_delete
  {%- else -%}
    {{ rows_sql }}
  {%- endif -%}
{% endmacro %}

{% macro lakehouse_tie_break(dest_columns, keys) -%}
  {#- Maps cannot be ordered in Spark: they take no part in the tie-break. -#}
  {%- set key_names = keys | map('lower') | list -%}
  {%- set order = [] -%}
  {%- for col in dest_columns if col.name | lower not in key_names and 'map<' not in (col.dtype | lower) -%}
    {%- do order.append(col.quoted ~ ' desc nulls last') -%}
  {%- endfor -%}
  {{ (order or ['1']) | join(', ') }}
{%- endmacro %}

{% macro lakehouse_check_new_keys(source, unique_key) %}
  {#- merge without latest_by needs one new row per key. Iceberg's own check only sees keys
      that match the target; repeated new keys would be inserted twice. One aggregate over
      the (materialized) new rows fails on a repeated key before anything is written, and
      counts the keys holding a NULL on the way. Returns whether any new key holds a NULL. -#}
  {%- set keys = lakehouse_key_columns(unique_key) -%}
  {%- set key_is_null = [] -%}
  {%- for key in keys -%}
    {%- do key_is_null.append(key ~ ' is null') -%}
  {%- endfor -%}
  {%- set sql -%}
    select count(*) as null_keys
    from (
      select {{ keys | join(', ') }}, count(*) as __dbt_lakehouse_key_rows
      from {{ source }}
      group by {{ keys | join(', ') }}
    ) as DBT_INTERNAL_KEYS
    where case when __dbt_lakehouse_key_rows > 1
      then {{ lakehouse_repeated_key_error(keys, '__dbt_lakehouse_key_rows') }}
      else {{ key_is_null | join(' or ') }} end
  {%- endset -%}
  {%- set null_keys = run_query(sql).columns[0].values()[0] -%}
  {{ return(null_keys > 0) }}
{% endmacro %}

{% macro lakehouse_repeated_key_error(keys, count_sql) -%}
  {#- One message for a repeated key, on a first build and an incremental run alike. -#}
  {%- set key_values = [] -%}
  {%- for key in keys -%}
    {%- do key_values.append("coalesce(cast(" ~ key ~ " as string), 'NULL')") -%}
  {%- endfor -%}
  {%- set message -%}
    concat({{ lakehouse_sql_string("Model '" ~ model.name ~ "' (incremental_strategy 'merge'): the new rows hold ") }},
      cast({{ count_sql }} as string),
      {{ lakehouse_sql_string(" rows for unique_key (" ~ keys | join(', ') ~ ") = (") }},
      concat_ws(', ', {{ key_values | join(', ') }}),
      {{ lakehouse_sql_string("); a merge needs at most one row per key. Set latest_by to keep the latest row per key, or make the model return one row per key. Nothing was written.") }})
  {%- endset -%}
  {{ adapter.check_failure_sql(message) }}
{%- endmacro %}

{% macro lakehouse_merge_setting(name) -%}
  {#- A merge config, or how a model applying upstream changes merges them when it sets none
      (the latest change per key; a DELETE deletes). -#}
  {%- set value = config.get(name) -%}
  {%- if value is none -%}
    {%- set value = adapter.changes_merge_default(model.unique_id, name) -%}
  {%- endif -%}
  {{ return(value) }}
{%- endmacro %}
