{% macro lakehouse__rename_relation(from_relation, to_relation) -%}
  {% call statement('rename_relation') -%}
    {% if from_relation.is_view %}
      alter view {{ from_relation }} rename to {{ to_relation }}
    {% else %}
      alter table {{ from_relation }} rename to {{ to_relation }}
    {% endif %}
  {%- endcall %}
{% endmacro %}
