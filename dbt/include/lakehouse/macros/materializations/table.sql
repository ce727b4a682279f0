{% materialization table, adapter='lakehouse', supported_languages=['sql', 'python'] %}
  {#- An existing table is replaced in one Iceberg commit (CREATE OR REPLACE): readers never see
      it missing, and its snapshot history is kept. Only a view in the way is dropped first,
      since a view cannot become a table in place. -#}
  {%- set identifier = model['alias'] -%}
  {%- set grant_config = config.get('grants') -%}
  {%- set old_relation = adapter.get_relation(database=database, schema=schema, identifier=identifier) -%}
  {%- set target_relation = api.Relation.create(identifier=identifier, schema=schema,
                                                database=database, type='table') -%}
  {%- do lakehouse_maintenance_check() -%}
  {#- A SQL model's statement is rendered, and so checked, before the pre-hooks run; a Python
      model runs after them (as in dbt-spark), its DataFrame then read as a temporary view. -#}
  {%- if model.language == 'python' -%}
    {%- do adapter.reuse_plan(target_relation, old_relation, compiled_code, '', model, should_full_refresh(), (pre_hooks + post_hooks) | length > 0) -%}
    {{ run_hooks(pre_hooks) }}
    {%- set python_view = lakehouse_python_model_view() -%}
    {%- set build_sql = create_table_as(False, target_relation, 'select * from ' ~ python_view) -%}
  {%- else -%}
    {%- set python_view = none -%}
    {%- set build_sql = create_table_as(False, target_relation, compiled_code) -%}
    {#- Reused (reuse/, docs/reuse.md): nothing it reads moved and its statement and settings
        are those of the build its table's main holds; nothing runs, not even its hooks. -#}
    {%- set reuse = adapter.reuse_plan(target_relation, old_relation, compiled_code, build_sql, model, should_full_refresh(), (pre_hooks + post_hooks) | length > 0) -%}
    {%- if reuse['reuse'] -%}
      {%- do lakehouse_reused(target_relation) -%}
      {{ return({'relations': [target_relation]}) }}
    {%- endif -%}
    {{ run_hooks(pre_hooks) }}
  {%- endif -%}

  {% if old_relation is not none and old_relation.is_view %}
    {{ adapter.drop_relation(old_relation) }}
  {% endif %}

  {%- call statement('main') -%}
    {{ build_sql }}
  {%- endcall -%}
  {%- if python_view is not none -%}{% do adapter.drop_temp_view(python_view) %}{%- endif -%}

  {% do lakehouse_apply_write_order(target_relation) %}
  {% set should_revoke = should_revoke(old_relation, full_refresh_mode=True) %}
  {% do apply_grants(target_relation, grant_config, should_revoke) %}
  {% do persist_docs(target_relation, model) %}

  {{ run_hooks(post_hooks) }}
  {% do lakehouse_maintenance_after_run(target_relation) %}
  {% do lakehouse_delta_after_write(target_relation) %}
  {% do lakehouse_report_node('CREATE') %}

  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}
