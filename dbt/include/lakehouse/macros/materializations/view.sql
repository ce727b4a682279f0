{% materialization view, adapter='lakehouse' -%}
  {#- A real Iceberg view in the catalog (dbt's create_or_replace_view: a table in the way is
      dropped, then CREATE OR REPLACE VIEW), skipped when reuse is on and the view already
      holds this definition (reuse/views.py, docs/reuse.md). Either way, a view whose inlined
      plan is large is then checkpointed for the run's later statements (checkpoints/): now
      when it was built, when a statement first reads it when it was reused. -#}
  {%- set old_relation = adapter.get_relation(database=database, schema=schema, identifier=model['alias']) -%}
  {%- set target_relation = api.Relation.create(identifier=model['alias'], schema=schema, database=database, type='view') -%}
  {%- set reuse = adapter.reuse_view_plan(target_relation, old_relation, sql, model, should_full_refresh(),
                                          (pre_hooks + post_hooks) | length > 0) -%}
  {%- if reuse['reuse'] -%}
    {%- call noop_statement('main', 'REUSED', 'REUSED', 0) -%}{%- endcall -%}
    {%- do adapter.checkpoint_view(target_relation, sql, model, true, graph, selected_resources) -%}
    {%- do lakehouse_report_node('REUSED', 0, 'REUSED') -%}
    {{ return({'relations': [target_relation]}) }}
  {%- endif -%}
  {%- set result = create_or_replace_view() -%}
  {%- do adapter.checkpoint_view(target_relation, sql, model, false, graph, selected_resources) -%}
  {%- do lakehouse_report_node('CREATE VIEW') -%}
  {{ return(result) }}
{%- endmaterialization %}

{% macro lakehouse__create_view_as(relation, sql) -%}
  {#- Spark's view statement (spark__create_view_as), plus the definition's digest as a property
      when reuse is on for the model (reuse/views.py reads it back on the next run). -#}
  {%- set definition = adapter.reuse_view_record(model['unique_id']) if model is defined and model else none -%}
  create or replace view {{ relation }}
  {% if config.persist_column_docs() -%}
    {% set model_columns = model.columns %}
    {% set query_columns = get_columns_in_query(sql) %}
    (
    {{ get_persist_docs_column_list(model_columns, query_columns) }}
    )
  {% endif %}
  {{ comment_clause() }}
  {%- if definition %}
  tblproperties ('lakehouse.build.view' = '{{ definition }}')
  {%- endif %}
  {%- set contract_config = config.get('contract') -%}
  {%- if contract_config.enforced -%}
    {{ get_assert_columns_equivalent(sql) }}
  {%- endif %}
  as
    {{ sql }}
{%- endmacro %}
