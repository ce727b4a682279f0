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
      {{ lakehouse_microbatch_checked_event_time('DBT_INTERNAL_SOURCE.' ~ col.quoted, bounds) }}
      {%- else %}
      DBT_INTERNAL_SOURCE.{{ col.quoted }}
      {%- endif %}{{ ',' if not loop.last }}
    {%- endfor %})
{% endmacro %}

{% macro lakehouse_microbatch_first_build_sql(new_rows, columns) %}
  {#- A first batch creates the table from its own rows, checked against its window as an
      incremental batch's are: a row outside it fails the statement, which writes nothing. -#}
  {%- set event_time = config.get('event_time') | lower -%}
  {%- set bounds = lakehouse_microbatch_bounds() -%}
  select
  {%- for col in columns %}
    {{ lakehouse_microbatch_checked_event_time(col.quoted, bounds) ~ ' as ' ~ col.quoted if col.name | lower == event_time else col.quoted }}{{ ',' if not loop.last }}
  {%- endfor %}
  from {{ new_rows }}
{% endmacro %}

{% macro lakehouse_microbatch_checked_event_time(value, bounds) -%}
  {#- The event_time of a new row, or a failure when it falls outside the batch window (a
      rerun of the batch would not replace it, so it would be duplicated). -#}
  {%- set message -%}
    concat({{ lakehouse_sql_string("microbatch model " ~ model.name ~ ": a new row has " ~ config.get('event_time') ~ " = ") }},
      coalesce(cast({{ value }} as string), 'NULL'),
      {{ lakehouse_sql_string(", outside its batch [" ~ bounds[0] ~ ", " ~ bounds[1] ~ "); nothing was written") }})
  {%- endset -%}
  case when {{ value }} >= timestamp'{{ bounds[0] }}' and {{ value }} < timestamp'{{ bounds[1] }}'
    then {{ value }}
    else {{ adapter.check_failure_sql(message) }}
  end
{%- endmacro %}

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
