{% macro lakehouse__type_float() %}
  {#- dbt's `float` means double precision on other warehouses (Postgres float8, BigQuery
      float64); Spark's FLOAT is 4 bytes. Seeds infer DOUBLE for decimals too. -#}
  {{ return('double') }}
{% endmacro %}
