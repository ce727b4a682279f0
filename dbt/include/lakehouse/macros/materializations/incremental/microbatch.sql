{% macro lakehouse__get_incremental_microbatch_sql(arg_dict) %}
  {#- A batch replaces exactly its window [event_time_start, event_time_end) in ONE MERGE (one
      commit), so a rerun of a batch is idempotent and a failure changes nothing. A marker row
      in the source matches every target row inside the window (deleted); the batch's rows never
      match (inserted). The marker joins on an equality so Spark plans a hash join, and the
      window predicates on DBT_INTERNAL_DEST prune the target scan to the window's files.
      A new row whose event_time falls outside the window fails the statement (a rerun would
      otherwise duplicate it). unique_key plays no part: the window is the unit replaced. -#}
  {%- set target = arg_dict['target_relation'] -%}
  {%- set source = arg_dict['temp_relation'] -%}
  {%- set columns = arg_dict['dest_columns'] -%}
  {%- set event_time = config.get('event_time') -%}
  {%- set bounds = lakehouse_microbatch_bounds() -%}
  {%- set names = columns | map(attribute='name') | map('lower') | list -%}
  {%- if event_time | lower not in names -%}
    {{ exceptions.raise_compiler_error("event_time '" ~ event_time ~ "' of microbatch model '" ~ model.name ~ "' is not one of its columns (" ~ (columns | map(attribute='name') | join(', ')) ~ ").") }}
  {%- endif -%}
  {%- set et = adapter.quote(event_time) -%}
  {%- set lower_bound = "timestamp'" ~ bounds[0] ~ "'" -%}
  {%- set upper_bound = "timestamp'" ~ bounds[1] ~ "'" -%}
  merge into {{ target }} as DBT_INTERNAL_DEST
  using (
    select {{ columns | map(attribute='quoted') | join(', ') }}, cast(null as boolean) as __dbt_lakehouse_window
    from {{ source }}
    union all
    select {% for col in columns %}null, {% endfor %}true
  ) as DBT_INTERNAL_SOURCE
  on DBT_INTERNAL_DEST.{{ et }} >= {{ lower_bound }}
    and DBT_INTERNAL_DEST.{{ et }} < {{ upper_bound }}
    and DBT_INTERNAL_SOURCE.__dbt_lakehouse_window = (DBT_INTERNAL_DEST.{{ et }} >= {{ lower_bound }})
  when matched then delete
  when not matched and DBT_INTERNAL_SOURCE.__dbt_lakehouse_window is null then insert ({{ columns | map(attribute='quoted') | join(', ') }})
    values (
    {%- for col in columns %}
      {%- if col.name | lower == event_time | lower %}
      case when DBT_INTERNAL_SOURCE.{{ col.quoted }} >= {{ lower_bound }} and DBT_INTERNAL_SOURCE.{{ col.quoted }} < {{ upper_bound }}
        then DBT_INTERNAL_SOURCE.{{ col.quoted }}
        else raise_error(concat('microbatch model {{ model.name }}: a new row has {{ event_time }} = ', coalesce(cast(DBT_INTERNAL_SOURCE.{{ col.quoted }} as string), 'NULL'), ', outside its batch [{{ bounds[0] }}, {{ bounds[1] }}); nothing was written'))
      end
      {%- else %}
      DBT_INTERNAL_SOURCE.{{ col.quoted }}
      {%- endif %}{{ ',' if not loop.last }}
    {%- endfor %})
{% endmacro %}

{% macro lakehouse_microbatch_bounds() %}
  {#- The batch window as UTC timestamp text; dbt sets it per batch (model.batch since 1.9,
      the internal config keys before). -#}
  {%- set batch = model.get('batch') -%}
  {%- if batch -%}
    {%- set start, end = batch.get('event_time_start'), batch.get('event_time_end') -%}
  {%- else -%}
    {%- set start = config.get('__dbt_internal_microbatch_event_time_start') -%}
    {%- set end = config.get('__dbt_internal_microbatch_event_time_end') -%}
  {%- endif -%}
  {%- if not start or not end -%}
    {{ exceptions.raise_compiler_error("microbatch model '" ~ model.name ~ "' ran without a batch window (event_time_start/end); run it with dbt >= 1.9 so dbt plans its batches.") }}
  {%- endif -%}
  {{ return([lakehouse_utc_text(start), lakehouse_utc_text(end)]) }}
{% endmacro %}

{% macro lakehouse_utc_text(value) -%}
  {%- if value is string -%}
    {{ return(value) }}
  {%- endif -%}
  {%- if value.tzinfo is not none -%}
    {%- set value = value.astimezone(modules.pytz.utc) -%}
  {%- endif -%}
  {{ return(value.strftime('%Y-%m-%d %H:%M:%S') ~ '+00:00') }}
{%- endmacro %}
