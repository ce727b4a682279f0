{#- Model SQL calls this as `lakehouse.changes(ref('orders'))` (the `lakehouse` package in
    include/lakehouse/public). An incremental run reads the upstream's changes since the
    snapshot the model's table records; anything else reads the whole upstream. -#}
{% macro lakehouse_changes(relation) -%}
  {%- set incremental = execute and is_incremental() -%}
  {{ return(adapter.changes_relation(relation, this, model.unique_id, incremental,
                                     config.get('on_lost_changes'), execute)) }}
{%- endmacro %}

{% macro lakehouse_changes_rows_sql(model_sql, columns, change_columns) -%}
  {#- The rows a non-merge strategy writes from changelog rows: the inserts, without the
      changelog columns. -#}
  select {{ columns | rejectattr('name', 'in', change_columns) | map(attribute='quoted') | join(', ') }}
  from (
    {{ model_sql }}
  ) as DBT_LAKEHOUSE_CHANGES
  where _change_type <> 'DELETE'
{%- endmacro %}
