{#- dbt clone (docs/models.md#dbt-clone). A table of the state's manifest becomes a zero-copy
    clone, or a copy where the catalogs need one (models/clone.py says which and why); a view,
    or any node when can_clone_table() says no, becomes a view, as dbt's own clone does. -#}

{% macro lakehouse__can_clone_table() %}
  {{ return(True) }}
{% endmacro %}

{%- materialization clone, adapter='lakehouse' -%}
  {%- if not defer_relation -%}
    {{ log("No relation found in state manifest for " ~ model.unique_id, info=True) }}
    {{ return({'relations': []}) }}
  {%- endif -%}

  {%- set existing_relation = load_cached_relation(this) -%}
  {%- if existing_relation and not flags.FULL_REFRESH -%}
    {{ log("Relation " ~ existing_relation ~ " already exists", info=True) }}
    {{ return({'relations': []}) }}
  {%- endif -%}

  {%- set source = load_cached_relation(defer_relation) -%}
  {%- if not (source and source.is_table and can_clone_table()) -%}
    {%- set search_name = "materialization_view_" ~ adapter.type() -%}
    {{ return(context[search_name]()) }}
  {%- endif -%}

  {%- set target_relation = this.incorporate(type='table') -%}
  {%- if target_relation.render() == source.render() -%}
    {{ log("Target relation and defer relation are the same, skipping clone for relation: " ~ target_relation.render()) }}
    {{ return({'relations': [target_relation]}) }}
  {%- endif -%}

  {%- set clone_mode = adapter.clone_mode(target_relation, source) -%}
  {{ log("Cloning " ~ source.render() ~ " into " ~ target_relation.render() ~ " (" ~ clone_mode.mode ~ ": " ~ clone_mode.reason ~ ")") }}
  {%- if clone_mode.mode == 'copy' -%}
    {%- if existing_relation is not none and existing_relation.is_view -%}
      {{ adapter.drop_relation(existing_relation) }}
    {%- endif -%}
    {%- set partitioning = adapter.partition_transforms(source) -%}
    {% call statement('main') %}
      create or replace table {{ target_relation }}
      using iceberg
      {% if partitioning %}partitioned by ({{ partitioning | join(', ') }}){% endif %}
      as select * from {{ source }}
    {% endcall %}
  {%- else -%}
    {%- do lakehouse_zero_copy_clone(target_relation, source, existing_relation) -%}
  {%- endif -%}

  {% set should_revoke = should_revoke(existing_relation, full_refresh_mode=True) %}
  {% do apply_grants(target_relation, config.get('grants'), should_revoke=should_revoke) %}
  {% do persist_docs(target_relation, model) %}
  {% do lakehouse_report_node('CLONE', message='CLONE ' ~ clone_mode.mode) %}
  {{ return({'relations': [target_relation]}) }}
{%- endmaterialization -%}

{% macro lakehouse_zero_copy_clone(target_relation, source, existing_relation) %}
  {#- register_table needs the name free, and the clone's own folder is where a table of its
      name lives: an existing table's location, else that of an empty table created for the
      catalog to place and dropped again. Never purged: a Nessie catalog creates tables with
      GC off, and an existing one may share its files. -#}
  {%- set metadata_rows = run_query("select file, latest_snapshot_id from " ~ source ~ ".metadata_log_entries order by timestamp desc limit 1").rows -%}
  {%- if existing_relation is not none and existing_relation.is_view -%}
    {{ adapter.drop_relation(existing_relation) }}
    {%- set existing_relation = none -%}
  {%- endif -%}
  {%- if existing_relation is none -%}
    {% call statement('clone_placeholder') %}
      create table {{ target_relation }} (placed int) using iceberg
    {% endcall %}
  {%- endif -%}
  {%- set location = adapter.clone_location(target_relation) -%}
  {% call statement('clone_free_name') %}
    drop table {{ target_relation }}
  {% endcall %}
  {%- do adapter.cache_dropped(target_relation) -%}
  {%- for sql in adapter.clone_sql(target_relation, source, metadata_rows, location) -%}
    {% call statement('clone_step') %}{{ sql }}{% endcall %}
  {%- endfor -%}
  {%- do adapter.cache_added(target_relation) -%}
{% endmacro %}
