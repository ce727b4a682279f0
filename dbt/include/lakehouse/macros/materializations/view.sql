{% materialization view, adapter='lakehouse' -%}
  {#- A real Iceberg view in the catalog (dbt's create_or_replace_view: a table in the way is
      dropped, then CREATE OR REPLACE VIEW). -#}
  {{ return(create_or_replace_view()) }}
{%- endmaterialization %}
