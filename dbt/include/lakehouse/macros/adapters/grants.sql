{% macro lakehouse__apply_grants(relation, grant_config, should_revoke=True) %}
  {#- No Iceberg catalog takes grants through open-source Spark (models/grants.py): a `grants:`
      config is warned about once per run and catalog, and nothing is run. -#}
  {%- if execute and grant_config -%}
    {%- do adapter.report_grants(relation, grant_config, invocation_id) -%}
  {%- endif -%}
{% endmacro %}
