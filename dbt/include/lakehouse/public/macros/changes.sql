{#- `select * from {{ lakehouse.changes(ref('orders')) }}`: the rows of orders changed since this
    model consumed it last (docs/changes.md). -#}
{% macro changes(relation) -%}
  {{ return(lakehouse_changes(relation)) }}
{%- endmacro %}
