{% materialization incremental, adapter='lakehouse', supported_languages=['sql', 'python'] -%}
  {#- First run, --full-refresh, or a view in the way: CREATE OR REPLACE TABLE (atomic, history
      kept; never drop-then-create) of the rows the strategy would leave in an empty table, so
      a model's rows never depend on whether its table existed. Otherwise the new rows become
      a temporary view and the strategy's one statement (one Iceberg commit) applies them.
      Both paths check the same configs against the model's columns before anything is
      written. -#}
  {%- set unique_key = lakehouse_unique_key() -%}
  {%- set strategy = lakehouse_validate_incremental_strategy(config.get('incremental_strategy'), unique_key) -%}
  {%- set on_schema_change = incremental_validate_on_schema_change(config.get('on_schema_change'), default='ignore') -%}
  {#- A model reading upstream changes it lost (lakehouse.changes, on_lost_changes: full) read
      the whole upstream when it compiled: its table is rebuilt from those rows. -#}
  {%- set full_refresh_mode = should_full_refresh() or adapter.changes_rebuild(model.unique_id) -%}
  {%- set grant_config = config.get('grants') -%}
  {%- set existing_relation = load_cached_relation(this) -%}
  {%- set target_relation = this.incorporate(type='table') -%}
  {%- set tmp_relation = make_temp_relation(this) -%}
  {%- set incremental_run = existing_relation is not none and not existing_relation.is_view and not full_refresh_mode -%}
  {#- Strategies that read the new rows more than once (a key check, a key list, Iceberg's
      file filter) materialize them first, so the model's query runs once and every read sees
      the same rows. -#}
  {%- set materialize_source = strategy in ['merge', 'delete+insert'] -%}
  {%- do lakehouse_maintenance_check() -%}
  {%- do lakehouse_note_config_sql(['incremental_predicates', 'predicates', 'unique_key', 'delete_condition',
                                    'latest_by', 'merge_update_columns', 'merge_exclude_columns']) -%}

  {%- set format_upgrade = none -%}
  {%- if incremental_run -%}
    {%- do lakehouse_validate_incremental_target(strategy, existing_relation) -%}
    {%- do lakehouse_delta_prepare(existing_relation) -%}
    {#- A downgrade is refused now; an upgrade is applied just before the write. -#}
    {%- set format_upgrade = lakehouse_format_version_upgrade(existing_relation) -%}
    {%- do lakehouse_audit_prepare(target_relation) -%}
  {%- endif -%}
  {#- Reused (reuse/, docs/reuse.md): nothing it reads moved since its last build or run, and
      its query and settings are those that build recorded: no statement, no commit, no hook.
      Its settings stand for its statements (rendering its CREATE is not free of effects: in
      an audited run it evolves the table for the branch). -#}
  {#- A first build's CREATE TABLE is rendered first when nothing can run before it (no hook,
      no changes read): the decision then keeps its analysis of the query for that statement,
      which reads it rather than analysing the query again (engine/prepared.py). -#}
  {%- set has_hooks = (pre_hooks + post_hooks) | length > 0 -%}
  {%- set first_build_sql = none -%}
  {%- if not incremental_run and not has_hooks and model.language == 'sql'
        and not adapter.changes_read(model.unique_id) -%}
    {%- set first_build_sql = lakehouse_incremental_first_build_sql(strategy, target_relation, compiled_code) -%}
  {%- endif -%}
  {%- set reuse = adapter.reuse_plan(target_relation, existing_relation, compiled_code, first_build_sql or '',
        model, full_refresh_mode, has_hooks, 'incremental' if incremental_run else 'full') -%}
  {%- if reuse['reuse'] -%}
    {%- do lakehouse_reused(target_relation) -%}
    {{ return({'relations': [target_relation]}) }}
  {%- endif -%}

  {{ run_hooks(pre_hooks) }}
  {#- A Python model runs now; its DataFrame is read as a temporary view. -#}
  {%- set python_view = lakehouse_python_model_view() if model.language == 'python' else none -%}
  {%- set model_sql = compiled_code if python_view is none else 'select * from ' ~ python_view -%}
  {#- Rows from lakehouse.changes carrying its changelog columns: a merge applies them (the
      latest change per key, deletes), the other strategies write the inserts; the changelog
      columns themselves are never written. -#}
  {%- set change_columns = [] -%}
  {%- set query_columns = [] -%}
  {%- if model.language == 'sql' and adapter.changes_read(model.unique_id) -%}
    {%- set query_columns = get_column_schema_from_query(model_sql) -%}
    {%- set change_columns = adapter.changes_columns(model.unique_id, query_columns) -%}
    {%- if change_columns and strategy != 'merge' -%}
      {%- set model_sql = lakehouse_changes_rows_sql(model_sql, query_columns, change_columns) -%}
    {%- endif -%}
  {%- endif -%}

  {%- if first_build_sql is not none -%}
    {%- set build_sql = first_build_sql -%}
  {%- elif not incremental_run -%}
    {%- set build_sql = lakehouse_incremental_first_build_sql(strategy, target_relation, model_sql,
                                                               change_columns if strategy == 'merge' else []) -%}
  {%- endif -%}
  {%- if not incremental_run -%}
    {%- if existing_relation is not none and existing_relation.is_view -%}
      {% do adapter.drop_relation(existing_relation) %}
    {%- endif -%}
  {%- else -%}
    {%- call statement('create_tmp_relation') -%}
      {{ create_table_as(True, tmp_relation, model_sql) }}
    {%- endcall -%}
    {%- set model_columns = adapter.get_columns_in_relation(tmp_relation) -%}
    {%- do lakehouse_validate_incremental_columns(strategy, model_columns) -%}
    {%- set schema_relation = tmp_relation -%}
    {%- if change_columns and strategy == 'merge' -%}
      {#- The merge reads the changelog columns from the new rows; the table's columns are
          compared with the others. -#}
      {%- set model_columns = model_columns | rejectattr('name', 'in', change_columns) | list -%}
      {%- set schema_relation = make_temp_relation(this, '__dbt_tmp_data') -%}
      {%- call statement('create_tmp_data_relation') -%}
        create or replace temporary view {{ schema_relation }} as
        select {{ model_columns | map(attribute='quoted') | join(', ') }} from {{ tmp_relation }}
      {%- endcall -%}
    {%- endif -%}
    {#- Checked on every run: partition_by must still name columns the model produces. -#}
    {%- do lakehouse_partition_clause_for(model_columns | map(attribute='name') | list) -%}
    {%- set dest_columns = process_schema_changes(on_schema_change, schema_relation, existing_relation) -%}
    {%- if not dest_columns -%}
      {%- set dest_columns = adapter.get_columns_in_relation(existing_relation) -%}
    {%- endif -%}
    {%- if materialize_source -%}
      {%- do adapter.materialize_temp_view(tmp_relation.identifier) -%}
    {%- endif -%}
    {%- set new_keys_may_be_null = true -%}
    {%- if strategy == 'merge' and not lakehouse_merge_setting('latest_by') -%}
      {%- set new_keys_may_be_null = lakehouse_check_new_keys(tmp_relation, unique_key) -%}
    {%- endif -%}
    {%- set incremental_predicates = config.get('predicates') or config.get('incremental_predicates') -%}
    {%- set strategy_sql_macro_func = adapter.get_incremental_strategy_macro(context, strategy) -%}
    {%- set build_sql = strategy_sql_macro_func({
          'target_relation': target_relation,
          'temp_relation': tmp_relation,
          'unique_key': unique_key,
          'dest_columns': dest_columns,
          'incremental_predicates': incremental_predicates,
          'null_safe_keys': new_keys_may_be_null}) -%}
  {%- endif -%}

  {#- A first build or a --full-refresh upgrades in its CREATE OR REPLACE instead. -#}
  {%- do lakehouse_apply_format_version(target_relation, format_upgrade) -%}
  {%- call statement('main') -%}
    {{ build_sql }}
  {%- endcall -%}

  {%- if incremental_run -%}
    {% do adapter.drop_temp_view(tmp_relation.identifier) %}
    {%- if schema_relation.identifier != tmp_relation.identifier -%}{% do adapter.drop_temp_view(schema_relation.identifier) %}{%- endif -%}
  {%- endif -%}
  {%- if python_view is not none -%}{% do adapter.drop_temp_view(python_view) %}{%- endif -%}

  {% do lakehouse_apply_write_order(target_relation) %}
  {% set should_revoke = should_revoke(existing_relation, full_refresh_mode) %}
  {% do apply_grants(target_relation, grant_config, should_revoke) %}
  {% do persist_docs(target_relation, model) %}

  {{ run_hooks(post_hooks) }}
  {% do lakehouse_maintenance_after_run(target_relation) %}
  {% do lakehouse_delta_after_write(target_relation) %}
  {% do lakehouse_report_node(lakehouse_incremental_code(strategy, incremental_run)) %}

  {{ return({'relations': [target_relation]}) }}
{%- endmaterialization %}
