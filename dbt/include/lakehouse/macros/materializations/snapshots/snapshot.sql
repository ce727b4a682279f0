{% materialization snapshot, adapter='lakehouse' %}
  {#- dbt's own snapshot flow fits Iceberg as is: the staging relation is a temporary view and
      the final write is one MERGE (lakehouse__snapshot_merge_sql), so a failed snapshot leaves
      the table as it was. dbt-spark's materialization is skipped because it insists on a
      `file_format` config. -#}
  {%- do lakehouse_delta_prepare(adapter.get_relation(database=this.database, schema=this.schema, identifier=this.identifier)) -%}
  {%- do lakehouse_audit_prepare(this.incorporate(type='table')) -%}
  {%- do lakehouse_note_config_sql(['check_cols', 'unique_key', 'updated_at']) -%}
  {#- An existing snapshot table asked for a higher format_version is upgraded before dbt's
      flow writes (a new one gets it in its CREATE); a downgrade is refused here. -#}
  {%- do lakehouse_apply_format_version(this, lakehouse_format_version_upgrade(this)) -%}
  {#- Reused (reuse/, docs/reuse.md): its source did not move since its last run and its query
      and settings are those that run recorded, so dbt's flow would find no change: nothing
      runs (no staging query, no MERGE, no commit). -#}
  {%- set existing = adapter.get_relation(database=this.database, schema=this.schema, identifier=this.identifier) -%}
  {%- set reuse = adapter.reuse_plan(this.incorporate(type='table'), existing, model['compiled_code'], '',
        model, false, (pre_hooks + post_hooks) | length > 0, 'snapshot') -%}
  {%- if reuse['reuse'] -%}
    {%- do lakehouse_reused(this.incorporate(type='table')) -%}
    {{ return({'relations': [this.incorporate(type='table')]}) }}
  {%- endif -%}
  {#- dbt's flow describes the target and the staging view seven times; each description is
      kept until a statement of the flow writes that relation (describe_memo.py). -#}
  {%- do adapter.remember_descriptions(true) -%}
  {%- set result = materialization_snapshot_default() -%}
  {%- do adapter.remember_descriptions(false) -%}
  {%- do lakehouse_delta_after_write(this.incorporate(type='table')) -%}
  {%- do lakehouse_report_node('SNAPSHOT') -%}
  {{ return(result) }}
{% endmaterialization %}

{% macro lakehouse__snapshot_merge_sql(target, source, insert_cols) -%}
  {#- dbt's merge with Spark spellings. Inserts name their columns (dbt-spark's `insert *`
      fails once a source column was dropped, and would take the staging-only columns). -#}
  {%- set columns = config.get("snapshot_table_column_names") or get_snapshot_table_column_names() -%}
  {%- set valid_to_current = config.get("dbt_valid_to_current") -%}
  merge into {{ target }} as DBT_INTERNAL_DEST
  using {{ source }} as DBT_INTERNAL_SOURCE
  on DBT_INTERNAL_SOURCE.{{ columns.dbt_scd_id }} = DBT_INTERNAL_DEST.{{ columns.dbt_scd_id }}
  when matched
    {%- if valid_to_current %}
    and (DBT_INTERNAL_DEST.{{ columns.dbt_valid_to }} = {{ valid_to_current }}
         or DBT_INTERNAL_DEST.{{ columns.dbt_valid_to }} is null)
    {%- else %}
    and DBT_INTERNAL_DEST.{{ columns.dbt_valid_to }} is null
    {%- endif %}
    and DBT_INTERNAL_SOURCE.dbt_change_type in ('update', 'delete')
    then update set {{ columns.dbt_valid_to }} = DBT_INTERNAL_SOURCE.{{ columns.dbt_valid_to }}
  when not matched
    and DBT_INTERNAL_SOURCE.dbt_change_type = 'insert'
    then insert ({{ insert_cols | join(', ') }})
    values ({% for col in insert_cols %}DBT_INTERNAL_SOURCE.{{ col }}{{ ', ' if not loop.last }}{% endfor %})
{%- endmacro %}

{% macro lakehouse__post_snapshot(staging_relation) %}
  {#- The staging relation is a session-local temporary view (make_temp_relation). -#}
  {% do adapter.drop_temp_view(staging_relation.identifier) %}
{% endmacro %}
