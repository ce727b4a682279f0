{% materialization view, adapter='lakehouse' -%}
  {#- A real Iceberg view in the catalog (dbt's create_or_replace_view: a table in the way is
      dropped, then CREATE OR REPLACE VIEW). -#}
  {%- set result = create_or_replace_view() -%}
  {%- do lakehouse_report_node('CREATE VIEW') -%}
  {{ return(result) }}
{%- endmaterialization %}
