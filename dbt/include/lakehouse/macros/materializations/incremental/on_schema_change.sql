{% macro lakehouse__diff_column_data_types(source_columns, target_columns) %}
  {#- Types are compared as Iceberg stores them: a model's smallint or varchar(10) lands as int
      or string, so it is no change. The old type rides along for the messages. -#}
  {%- set result = [] -%}
  {%- for sc in source_columns -%}
    {%- set tc = target_columns | selectattr('name', 'equalto', sc.name) | list | first -%}
    {%- if tc and adapter.iceberg_type(sc.data_type) != adapter.iceberg_type(tc.data_type) -%}
      {%- do result.append({'column_name': tc.name, 'new_type': sc.data_type, 'old_type': tc.data_type}) -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(result) }}
{% endmacro %}

{% macro lakehouse__sync_column_schemas(on_schema_change, target_relation, schema_changes_dict) %}
  {#- Every type change is checked before the first ALTER, so a refused one leaves the table
      untouched. Then: add and drop columns, then widen types (Iceberg schema evolution,
      metadata only: no data file is rewritten). append_new_columns only adds. -#}
  {%- set add_columns = schema_changes_dict['source_not_in_target'] -%}
  {%- set remove_columns = schema_changes_dict['target_not_in_source'] -%}
  {%- set type_changes = [] -%}
  {%- if on_schema_change == 'sync_all_columns' -%}
    {%- set type_changes = adapter.plan_column_type_changes(model.name, schema_changes_dict['new_target_types']) -%}
  {%- endif -%}
  {%- do lakehouse_delta_check_schema_change(target_relation, add_columns, type_changes) -%}
  {%- if on_schema_change == 'append_new_columns' -%}
    {%- if add_columns -%}
      {%- do alter_relation_add_remove_columns(target_relation, add_columns, none) -%}
    {%- endif -%}
  {%- elif on_schema_change == 'sync_all_columns' -%}
    {%- if add_columns or remove_columns -%}
      {%- do alter_relation_add_remove_columns(target_relation, add_columns, remove_columns) -%}
    {%- endif -%}
    {%- for change in type_changes -%}
      {%- do alter_column_type(target_relation, change['column_name'], change['new_type']) -%}
    {%- endfor -%}
  {%- endif -%}
  {% set schema_change_message %}
    In {{ target_relation }}:
        Schema change approach: {{ on_schema_change }}
        Columns added: {{ add_columns }}
        Columns removed: {{ remove_columns }}
        Data types changed: {{ type_changes }}
  {% endset %}
  {% do log(schema_change_message) %}
{% endmacro %}
