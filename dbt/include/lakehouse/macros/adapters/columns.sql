{% macro lakehouse__get_columns_in_relation(relation) -%}
  {#- dbt-spark's version returns the raw DESCRIBE table; dbt's own macros (snapshots'
      deletion records, get_list_of_column_names) expect Column objects, as the adapter gives. -#}
  {{ return(adapter.get_columns_in_relation(relation)) }}
{%- endmacro %}
