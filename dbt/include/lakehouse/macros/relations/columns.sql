{% macro lakehouse__alter_relation_add_remove_columns(relation, add_columns, remove_columns) %}
  {#- Iceberg evolves schemas in metadata: adding and dropping columns rewrites no data. All
      drops go in one statement (one commit). -#}
  {% if add_columns %}
    {% call statement('add_columns') %}
      alter table {{ relation }} add columns (
        {%- for column in add_columns %}
          {{ column.quoted }} {{ column.data_type }}{{ ',' if not loop.last }}
        {%- endfor %}
      )
    {% endcall %}
  {% endif %}
  {% if remove_columns %}
    {% call statement('drop_columns') %}
      alter table {{ relation }} drop columns ({{ remove_columns | map(attribute='quoted') | join(', ') }})
    {% endcall %}
  {% endif %}
{% endmacro %}

{% macro lakehouse__alter_column_type(relation, column_name, new_column_type) %}
  {#- Iceberg type promotion in place (int to bigint, float to double, decimal precision up);
      callers check the change first (adapter.plan_column_type_changes). render(): under
      --empty a ref renders as a `limit 0` subquery, which ALTER cannot take. -#}
  {% call statement('alter_column_type') %}
    alter table {{ relation.render() }} alter column {{ adapter.quote(column_name) }} type {{ api.Column.translate_type(new_column_type) }}
  {% endcall %}
{% endmacro %}

{% macro lakehouse__alter_column_comment(relation, column_dict) %}
  {#- View column comments are written when the view is created (create_view_as). -#}
  {% if not relation.is_view %}
    {% for column_name in column_dict %}
      {% set comment = column_dict[column_name]['description'] | replace("\\", "\\\\") | replace("'", "\\'") %}
      {% call statement('alter_column_comment') %}
        alter table {{ relation }} alter column
          {{ adapter.quote(column_name) if column_dict[column_name]['quote'] else column_name }}
          comment '{{ comment }}'
      {% endcall %}
    {% endfor %}
  {% endif %}
{% endmacro %}
