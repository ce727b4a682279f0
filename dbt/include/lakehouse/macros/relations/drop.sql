{% macro lakehouse__drop_relation(relation) -%}
  {#- Iceberg keeps the data files of a dropped table (no PURGE): a mistaken drop can be undone
      by registering the last metadata file again. -#}
  {% call statement('drop_relation', auto_begin=False) -%}
    {% if relation.is_view %}
      drop view if exists {{ relation }}
    {% else %}
      drop table if exists {{ relation }}
    {% endif %}
  {%- endcall %}
{% endmacro %}
