{#- Audited runs (profile key write_audit_publish): every table a run writes takes its commits
    on the run's Iceberg branch, and `main` moves only when every node passed (the adapter
    publishes at the end of the run; see audit/run.py). These macros are the materializations'
    part, and the two run-operations that end a branch a failed run left. -#}

{% macro lakehouse_audit_prepare(relation) %}
  {#- Call before a node's first write to `relation`: returns the run's branch when the write
      goes there (the table then takes branch writes), else none. -#}
  {%- if not execute or model is not defined or model is none -%}
    {{ return(none) }}
  {%- endif -%}
  {{ return(adapter.prepare_audited_write(relation, config.get('write_audit_publish'),
                                          model.get('unique_id', ''), model.get('resource_type', ''))) }}
{% endmacro %}

{% macro lakehouse_branch_replace_sql(relation, select_sql) %}
  {#- An existing table replaced on the run's branch: schema and partition spec brought to the
      model's (table-level changes, which main's readers see at once: Iceberg keeps one schema
      per table), then one INSERT OVERWRITE of all rows, committed on the branch. -#}
  {%- set columns = get_column_schema_from_query(select_sql) -%}
  {%- set plan = adapter.plan_branch_replace(relation, columns, config.get('partition_by'), model.name) -%}
  {%- if plan['add'] or plan['drop'] -%}
    {%- set add_columns = [] -%}
    {%- for column in plan['add'] -%}
      {%- do add_columns.append(api.Column.create(column['name'], column['data_type'])) -%}
    {%- endfor -%}
    {%- set drop_columns = [] -%}
    {%- for name in plan['drop'] -%}
      {%- do drop_columns.append(api.Column.create(name, 'string')) -%}
    {%- endfor -%}
    {%- do alter_relation_add_remove_columns(relation, add_columns, drop_columns) -%}
  {%- endif -%}
  {%- for change in plan['widen'] -%}
    {%- do alter_column_type(relation, change['column_name'], change['new_type']) -%}
  {%- endfor -%}
  {%- for partition_field in plan['partition_drop'] -%}
    {%- call statement('audit_partition_drop') -%}
      alter table {{ relation }} drop partition field {{ partition_field }}
    {%- endcall -%}
  {%- endfor -%}
  {%- for partition_field in plan['partition_add'] -%}
    {%- call statement('audit_partition_add') -%}
      alter table {{ relation }} add partition field {{ partition_field }}
    {%- endcall -%}
  {%- endfor -%}
  {%- set properties = lakehouse_tblproperties_clause() -%}
  {%- if properties | trim -%}
    {%- call statement('audit_properties') -%}
      alter table {{ relation }} set {{ properties }}
    {%- endcall -%}
  {%- endif -%}
  {%- set cols = columns | map(attribute='quoted') | join(', ') -%}
  {%- set sql -%}
    -- lakehouse:conf spark.sql.sources.partitionOverwriteMode=static
    insert overwrite {{ relation }} ({{ cols }})
    select {{ cols }} from (
      {{ select_sql }}
    ) as DBT_INTERNAL_AUDITED_ROWS
  {%- endset -%}
  {{ return(sql) }}
{% endmacro %}

{% macro lakehouse_project_tables() %}
  {#- The tables this project writes (models other than views and ephemerals, seeds,
      snapshots): where a run's branch can be. -#}
  {%- set relations = [] -%}
  {%- for node in lakehouse_table_nodes() -%}
    {%- do relations.append(lakehouse_node_relation(node)) -%}
  {%- endfor -%}
  {{ return(relations) }}
{% endmacro %}

{% macro lakehouse_publish(branch=none) %}
  {#- dbt run-operation lakehouse_publish --args '{branch: audit_...}': fast-forward main of
      every table of the project holding the branch, after checking that none moved. -#}
  {%- if execute -%}
    {%- do adapter.publish_audit_branch(branch, lakehouse_project_tables(), lakehouse_delta_tables()) -%}
  {%- endif -%}
{% endmacro %}

{% macro lakehouse_discard(branch=none) %}
  {#- dbt run-operation lakehouse_discard --args '{branch: audit_...}': drop the branch and
      its rows; main stays as it is. -#}
  {%- if execute -%}
    {%- do adapter.discard_audit_branch(branch, lakehouse_project_tables()) -%}
  {%- endif -%}
{% endmacro %}
