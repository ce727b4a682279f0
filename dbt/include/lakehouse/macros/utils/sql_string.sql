{% macro lakehouse_sql_string(text) -%}
  {#- A Spark SQL string literal holding `text` exactly: Spark reads a backslash as an escape
      inside quotes, so backslashes are doubled before quotes are escaped. -#}
  '{{ (text | string) | replace("\\", "\\\\") | replace("'", "\\'") }}'
{%- endmacro %}
