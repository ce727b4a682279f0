{#- dbt's defaults spell these with `::timestamp`, which Spark 3.5 does not parse. -#}

{% macro lakehouse__current_timestamp_backcompat() -%}
  current_timestamp()
{%- endmacro %}

{% macro lakehouse__current_timestamp_in_utc_backcompat() -%}
  {#- Spark timestamps are instants shown in the session time zone: this one shows UTC's wall
      clock, as the "in UTC" backcompat timestamp did on other warehouses. -#}
  to_utc_timestamp(current_timestamp(), current_timezone())
{%- endmacro %}
