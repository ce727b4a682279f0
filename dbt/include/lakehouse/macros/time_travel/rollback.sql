{#- dbt run-operation lakehouse_rollback --args '{relation: <schema>.<table>, to: <snapshot id or timestamp>}'
    Moves main back with Iceberg's rollback procedures; a target outside main's line of
    ancestors is refused before anything changes (adapter.rollback_table). -#}
{% macro lakehouse_rollback(relation=none, to=none) %}
  {%- if relation is none or to is none -%}
    {{ exceptions.raise_compiler_error(
        "lakehouse_rollback needs `relation: <schema>.<table>` (or <catalog>.<schema>.<table>) and "
        ~ "`to: <snapshot id or timestamp>`, e.g. --args '{relation: analytics.orders, to: '2026-11-01 00:00:00'}'; "
        ~ "got relation=" ~ relation ~ ", to=" ~ to ~ ".") }}
  {%- endif -%}
  {%- for line in adapter.rollback_table(relation, to) -%}
    {{ log(line, info=True) }}
  {%- endfor -%}
{% endmacro %}
