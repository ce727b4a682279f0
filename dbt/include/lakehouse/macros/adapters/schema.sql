{#- Schemas are Iceberg namespaces inside the catalog named by the relation's database. -#}

{% macro lakehouse__create_schema(relation) -%}
  {%- call statement('create_schema') -%}
    create namespace if not exists {{ relation.without_identifier() }}
  {%- endcall -%}
{% endmacro %}

{% macro lakehouse__drop_schema(relation) -%}
  {#- The adapter empties the namespace first (LakehouseAdapter.drop_schema): Iceberg catalogs
      differ in whether CASCADE reaches views. -#}
  {%- call statement('drop_schema') -%}
    drop namespace if exists {{ relation.without_identifier() }}
  {%- endcall -%}
{% endmacro %}

{% macro lakehouse__list_schemas(database) -%}
  {#- dbt passes the database already rendered (quoted) here; check_schema_exists does not. -#}
  {% call statement('list_schemas', fetch_result=True, auto_begin=False) %}
    show namespaces in {{ database if database.startswith('`') else adapter.quote(database) }}
  {% endcall %}
  {{ return(load_result('list_schemas').table) }}
{% endmacro %}

{% macro lakehouse__generate_database_name(custom_database_name=none, node=none) -%}
  {#- dbt-spark forces None; here the database is the Spark catalog and keeps dbt's default.
      A node's catalog_name names a catalogs.yml catalog, and its Spark catalog is the node's
      database; an unknown name fails here, at parse, before any node runs. -#}
  {%- set catalog = adapter.catalog_database_of(node, custom_database_name) if node is not none else none -%}
  {{ return(catalog if catalog else default__generate_database_name(custom_database_name, node)) }}
{%- endmacro %}
