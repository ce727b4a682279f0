{#- Model SQL calls this as `lakehouse.as_of(...)` (the `lakehouse` package in include/lakehouse/public).
    Exactly one of timestamp, snapshot_id, ref_name; a relation or a '<schema>.<table>' name.
    Checked against the table's history when the node runs (adapter.time_travel_relation). -#}
{% macro lakehouse_as_of(relation, timestamp=none, snapshot_id=none, ref_name=none) -%}
  {%- set as_of = {'timestamp': timestamp, 'snapshot_id': snapshot_id, 'ref_name': ref_name} -%}
  {{ return(adapter.time_travel_relation(relation, as_of, execute)) }}
{%- endmacro %}
