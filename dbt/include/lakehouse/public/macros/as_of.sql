{#- `select * from {{ lakehouse.as_of(ref('orders'), timestamp='2026-11-01 00:00:00') }}` -#}
{% macro as_of(relation, timestamp=none, snapshot_id=none, ref_name=none) -%}
  {{ return(lakehouse_as_of(relation, timestamp=timestamp, snapshot_id=snapshot_id, ref_name=ref_name)) }}
{%- endmacro %}
