{% macro lakehouse__truncate_relation(relation) -%}
  {#- A metadata-only delete: one Iceberg commit, history kept. -#}
  {% call statement('truncate_relation') -%}
    delete from {{ relation }}
  {%- endcall %}
{% endmacro %}
