{#- dbt's default is a plain `cast`, which returns NULL for a value that does not convert only with
    ANSI mode off (Spark 3.5's default). Spark 4 turns ANSI mode on, and a plain cast of a
    malformed value fails the query: `try_cast` is NULL on both lines (docs/engine-lines.md). -#}
{% macro lakehouse__safe_cast(field, type) -%}
  try_cast({{ field }} as {{ type }})
{%- endmacro %}
