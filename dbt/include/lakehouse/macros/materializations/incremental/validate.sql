{% macro lakehouse_validate_incremental_strategy(raw_strategy, unique_key) %}
  {#- Precedence: an explicit incremental_strategy wins; without one, `merge` when a unique_key
      is set, else `append`. A name outside the built-in list is accepted only when the project
      defines its macro get_incremental_<name>_sql (a custom strategy). -#}
  {%- set custom = [] -%}
  {%- if raw_strategy -%}
    {%- set macro_name = 'get_incremental_' ~ (raw_strategy | replace('+', '_')) ~ '_sql' -%}
    {%- if context.get(macro_name) is not none -%}{%- do custom.append(macro_name) -%}{%- endif -%}
  {%- endif -%}
  {{ return(adapter.resolve_incremental_strategy(raw_strategy, unique_key, model.name, custom)) }}
{% endmacro %}
