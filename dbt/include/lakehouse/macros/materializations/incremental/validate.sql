{% macro lakehouse_validate_incremental_strategy(raw_strategy, unique_key) %}
  {#- Precedence: an explicit incremental_strategy wins; without one, `merge` when a unique_key
      is set, else `append`. A name outside the built-in list is accepted only when the project
      defines its macro get_incremental_<name>_sql (a custom strategy). The strategy's configs
      are then checked together, all problems reported at once, before any SQL runs. -#}
  {%- set custom = [] -%}
  {%- if raw_strategy -%}
    {%- set macro_name = 'get_incremental_' ~ (raw_strategy | replace('+', '_')) ~ '_sql' -%}
    {%- if context.get(macro_name) is not none -%}{%- do custom.append(macro_name) -%}{%- endif -%}
  {%- endif -%}
  {%- set strategy = adapter.resolve_incremental_strategy(raw_strategy, unique_key, model.name, custom) -%}
  {%- set checked = {} -%}
  {%- for key in ['unique_key', 'merge_update_columns', 'merge_exclude_columns', 'delete_condition',
                  'latest_by', 'partition_by', 'on_schema_change', 'event_time'] -%}
    {%- do checked.update({key: config.get(key)}) -%}
  {%- endfor -%}
  {%- do checked.update({'unique_key': unique_key}) -%}
  {%- do checked.update({'incremental_predicates': config.get('predicates') or config.get('incremental_predicates')}) -%}
  {%- do adapter.validate_incremental_config(model.name, strategy, checked) -%}
  {{ return(strategy) }}
{% endmacro %}

{% macro lakehouse_validate_incremental_target(strategy, existing_relation) %}
  {#- What only the existing table can tell: insert_overwrite on a table whose current spec is
      unpartitioned would replace it whole (partition_by is applied at creation). -#}
  {%- if strategy == 'insert_overwrite' and not adapter.partition_transforms(existing_relation) -%}
    {{ exceptions.raise_compiler_error("incremental_strategy 'insert_overwrite' replaces the partitions present in the new rows, but table " ~ existing_relation ~ " of model '" ~ model.name ~ "' is unpartitioned (it was created before partition_by was set), so the whole table would be replaced. Run `dbt run --full-refresh -s " ~ model.name ~ "` to create it with partition_by, or use incremental_strategy 'replace' to replace the whole table on purpose. Nothing was written.") }}
  {%- endif -%}
{% endmacro %}

{% macro lakehouse_validate_incremental_columns(strategy, columns) %}
  {#- The configs that name columns, against the columns the model's query produces: run on
      the first build, a full refresh and an incremental run alike. -#}
  {%- set named = {} -%}
  {%- for key in ['unique_key', 'merge_update_columns', 'merge_exclude_columns', 'latest_by', 'event_time'] -%}
    {%- do named.update({key: config.get(key)}) -%}
  {%- endfor -%}
  {%- do adapter.validate_incremental_columns(model.name, strategy, named, columns) -%}
{% endmacro %}

{% macro lakehouse_note_config_sql(keys) %}
  {#- The SQL these configs contribute to the node's statements: an engine error on a column
      written there names the config instead of showing only the generated statement. -#}
  {%- set given = {} -%}
  {%- for key in keys -%}
    {%- do given.update({key: config.get(key)}) -%}
  {%- endfor -%}
  {%- do adapter.note_config_sql(given) -%}
{% endmacro %}

{% macro lakehouse_unique_key() %}
  {#- The model's unique_key; without one, for a strategy that needs a key (merge,
      delete+insert), the primary_key of its enforced contract (the table's Iceberg identifier
      fields), so it keys on what the table declares. -#}
  {%- set configured = config.get('unique_key') -%}
  {%- set contract_config = config.get('contract') -%}
  {%- set keyed = config.get('incremental_strategy') in ['merge', 'delete+insert'] -%}
  {%- if configured is not none or not keyed or not (contract_config and contract_config.enforced) -%}
    {{ return(configured) }}
  {%- endif -%}
  {%- set key = adapter.contract_primary_key(model['columns'], model.get('constraints')) -%}
  {{ return(key if key else none) }}
{% endmacro %}
