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
      duplicates run after run. delete_condition and latest_by are evaluated on the source
      rows alone (inside the USING subquery), so `op = 'd'` never clashes with a target
      column of the same name. With latest_by, one row per key survives: greatest latest_by
      entries first (NULLs last), then the other columns in model order, greatest first. -#}
  {%- set predicates = [] if incremental_predicates is none else [] + incremental_predicates -%}
  {%- set update_columns = get_merge_update_columns(config.get('merge_update_columns'),
                                                    config.get('merge_exclude_columns'),
                                                    dest_columns) -%}
  {%- set delete_condition = config.get('delete_condition') -%}
  {%- set latest_by = config.get('latest_by') -%}
  {%- set latest_by = [latest_by] if latest_by is string else (latest_by or []) | list -%}
  {%- set keys = lakehouse_key_columns(unique_key, dest_columns) -%}
  {%- for key in keys -%}
    {%- do predicates.append('DBT_INTERNAL_SOURCE.' ~ key ~ ' <=> DBT_INTERNAL_DEST.' ~ key) -%}
  {%- endfor -%}
  {%- if not keys -%}
    {%- do predicates.append('FALSE') -%}
  {%- endif -%}
  {%- set insert_cols = dest_columns | map(attribute='quoted') | list -%}
  {%- set sql_header = config.get('sql_header') -%}
  {{ sql_header if sql_header is not none }}
  merge into {{ target }} as DBT_INTERNAL_DEST
  {%- if delete_condition or latest_by %}
  using (
    select {{ insert_cols | join(', ') }}
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
          {{ lakehouse_tie_break(dest_columns, keys) }}
      ) as __dbt_lakehouse_rank
      from {{ source }}
    ) as DBT_INTERNAL_RANKED
    where __dbt_lakehouse_rank = 1
    {%- else %}
    from {{ source }}
    {%- endif %}
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

{% macro lakehouse_tie_break(dest_columns, keys) -%}
  {#- Maps cannot be ordered in Spark: they take no part in the tie-break. -#}
  {%- set key_names = keys | map('lower') | list -%}
  {%- set order = [] -%}
  {%- for col in dest_columns if col.name | lower not in key_names and 'map<' not in (col.dtype | lower) -%}
    {%- do order.append(col.quoted ~ ' desc nulls last') -%}
  {%- endfor -%}
  {{ (order or ['1']) | join(', ') }}
{%- endmacro %}

{% macro lakehouse_assert_unique_keys(source, unique_key, dest_columns) %}
  {#- merge without latest_by needs one new row per key. Iceberg's own check only sees keys
      that match the target; repeated new keys would be inserted twice. One aggregate over
      the (materialized) new rows finds them before anything is written. -#}
  {%- set keys = lakehouse_key_columns(unique_key, dest_columns) -%}
  {%- set sql -%}
    select {% for key in keys %}cast({{ key }} as string) as key_{{ loop.index }}, {% endfor %}count(*) as n
    from {{ source }}
    group by {{ keys | join(', ') }}
    having count(*) > 1
    limit 1
  {%- endset -%}
  {%- set found = run_query(sql) -%}
  {%- if found and found.rows | length > 0 -%}
    {%- set row = found.rows[0] -%}
    {%- set values = [] -%}
    {%- for key in keys -%}
      {%- do values.append('NULL' if row[loop.index0] is none else row[loop.index0]) -%}
    {%- endfor -%}
    {{ exceptions.raise_compiler_error(
        "Model '" ~ model.name ~ "' (incremental_strategy 'merge'): the new rows hold " ~ row[keys | length]
        ~ " rows for unique_key (" ~ keys | join(', ') ~ ") = (" ~ values | join(', ') ~ "); a merge needs at most one row per key. "
        ~ "Set latest_by to keep the latest row per key, or make the model return one row per key. Nothing was written.") }}
  {%- endif -%}
{% endmacro %}
