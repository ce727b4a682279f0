{% macro lakehouse__show_relations(schema_relation, kind) %}
  {#- kind: 'tables' or 'views'; Iceberg lists them separately. -#}
  {% call statement('show_' ~ kind, fetch_result=True) -%}
    show {{ kind }} in {{ schema_relation.without_identifier() }}
  {%- endcall %}
  {{ return(load_result('show_' ~ kind).table) }}
{% endmacro %}

{% macro lakehouse__describe_relation(relation) %}
  {% call statement('describe_relation', fetch_result=True) -%}
    describe table extended {{ relation.render() }}
  {%- endcall %}
  {{ return(load_result('describe_relation').table) }}
{% endmacro %}

{% macro lakehouse__make_temp_relation(base_relation, suffix) %}
  {#- Temporary views live in the Spark session, shared by all dbt threads: the schema is part
      of the name so same-named models in two schemas never collide. -#}
  {% set tmp_identifier = base_relation.schema ~ '__' ~ base_relation.identifier ~ suffix %}
  {% set tmp_relation = base_relation.incorporate(path={"identifier": tmp_identifier}, type='view') %}
  {{ return(tmp_relation.include(database=false, schema=false)) }}
{% endmacro %}
