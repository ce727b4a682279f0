{#- dbt's seed materialization, except for how the rows arrive: dbt's own reads the whole CSV
    into an agate table in Python before anything else (load_agate_table), which costs more than
    the load itself for large seeds. Here Spark reads the file when it reads it exactly as agate
    would (adapter.load_seed_file); otherwise the agate table is loaded as dbt does. Either way
    the rows land in one CREATE OR REPLACE TABLE ... AS SELECT, whether the table is new,
    refreshed or reloaded: one commit, history kept, types as dbt infers them or
    `column_types`. -#}

{% materialization seed, adapter='lakehouse' %}

  {%- set identifier = model['alias'] -%}
  {%- set full_refresh_mode = (should_full_refresh()) -%}
  {%- set old_relation = adapter.get_relation(database=database, schema=schema, identifier=identifier) -%}
  {%- set exists_as_view = (old_relation is not none and old_relation.is_view) -%}
  {%- set grant_config = config.get('grants') -%}
  {%- set target_relation = this.incorporate(type='table') -%}
  {#- A temporary view takes one plain name: a seed file named `a.b.csv` must not split it. -#}
  {%- set view_name = modules.re.sub('[^0-9A-Za-z_]', '_', target_relation.schema ~ '__' ~ target_relation.identifier ~ '__dbt_seed') -%}

  {% if exists_as_view %}
    {{ exceptions.raise_compiler_error("Cannot seed to '{}', it is a view".format(old_relation.render())) }}
  {% endif %}

  {#- Reused (reuse/, docs/reuse.md): the CSV and the settings shaping its rows are those of the
      load its table's main holds; the file is not even read. -#}
  {%- set reuse = adapter.reuse_seed_plan(target_relation, old_relation, model, full_refresh_mode,
                                          (pre_hooks + post_hooks) | length > 0) -%}
  {%- if reuse['reuse'] -%}
    {#- dbt's seed task reads this result; its rows only for `dbt seed --show`, sampled as a
        load samples them (the file read as a build reads it; its temporary view dropped). -#}
    {#- (`flags` in a materialization does not carry `--show`: the invocation's arguments do.) -#}
    {%- set show = invocation_args_dict.get('show', false) -%}
    {%- set shown = adapter.load_seed_file(model, view_name) if show else none -%}
    {%- if shown is not none -%}{% do adapter.drop_temp_view(view_name) %}{%- endif -%}
    {%- do store_result('agate_table', response='OK', agate_table=(shown.sample if shown is not none else (load_agate_table() if show else none))) -%}
    {%- do lakehouse_reused(target_relation) -%}
    {{ return({'relations': [target_relation]}) }}
  {%- endif -%}

  {%- set seed_load = adapter.load_seed_file(model, view_name) -%}
  {%- if seed_load is none -%}
    {%- set seed_load = adapter.load_seed_rows(view_name, load_agate_table()) -%}
  {%- endif -%}
  {%- do store_result('agate_table', response='OK', agate_table=seed_load.sample) -%}

  {{ run_hooks(pre_hooks, inside_transaction=False) }}
  {{ run_hooks(pre_hooks, inside_transaction=True) }}

  {%- set create_table_sql = lakehouse_create_seed_table(target_relation, seed_load, view_name) -%}

  {% set code = 'CREATE' if full_refresh_mode else 'INSERT' %}
  {% call noop_statement('main', code ~ ' ' ~ seed_load.row_count, code, seed_load.row_count) %}
    {{ create_table_sql }};
  {% endcall %}

  {% set should_revoke = should_revoke(old_relation, full_refresh_mode) %}
  {% do apply_grants(target_relation, grant_config, should_revoke=should_revoke) %}
  {% do persist_docs(target_relation, model) %}

  {{ run_hooks(post_hooks, inside_transaction=True) }}
  {{ adapter.commit() }}
  {{ run_hooks(post_hooks, inside_transaction=False) }}
  {% do lakehouse_delta_after_write(target_relation) %}
  {% do lakehouse_report_node(code, seed_load.row_count) %}

  {{ return({'relations': [target_relation]}) }}

{% endmaterialization %}

{% macro lakehouse_create_seed_table(relation, seed_load, view_name) %}
  {#- The table's column names follow `quote_columns` as dbt defines it (quoted unless it is
      false); the temporary view's are read quoted, whatever they hold. -#}
  {%- set column_override = config.get('column_types', {}) -%}
  {%- set quote_columns = config.get('quote_columns', none) -%}
  {%- set select_sql -%}
    select
    {%- for col_name in seed_load.column_names %}
      {%- set type = column_override.get(col_name, seed_load.sql_types[loop.index0]) %}
      cast({{ adapter.quote(col_name) }} as {{ type }}) as {{ adapter.quote_seed_column(col_name, quote_columns) }}{{ ',' if not loop.last }}
    {%- endfor %}
    from {{ adapter.quote(view_name) }}
  {%- endset -%}
  {%- set sql = lakehouse_create_table_sql(relation, select_sql, seed_load.column_names) -%}
  {%- call statement('_') -%}
    {{ sql }}
  {%- endcall -%}
  {%- do adapter.drop_temp_view(view_name) -%}
  {{ return(sql) }}
{% endmacro %}
