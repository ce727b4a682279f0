{% materialization materialized_view, adapter='lakehouse' %}
  {#- An Iceberg table built from the model's SQL. What it was built from (its record) is in
      the snapshot summary of the commit that writes its rows (commit lineage), mirrored in its
      table properties right after (docs/materialized-views.md). A run reads only metadata:
      - noop: no upstream's main moved, the SQL and the watched settings are unchanged (the
        properties rewritten if they do not mirror the record);
      - create / rebuild: CREATE OR REPLACE TABLE ... TBLPROPERTIES (record) AS, one commit;
      - overwrite (on_configuration_change: continue): INSERT OVERWRITE keeps the old
        partitioning and properties;
      - append: filters and projections over one upstream that only appended since: the
        query over the appended rows is inserted;
      - merge: a GROUP BY of sum/count/min/max over the same: the aggregate over the
        appended rows is merged into the view, group by group (a small view is rewritten
        whole, regrouped: mv/aggregate.py);
      - skip: an audited run (its upstreams' rows are on its branch, not main). -#}
  {%- set identifier = model['alias'] -%}
  {%- set existing = adapter.get_relation(database=database, schema=schema, identifier=identifier) -%}
  {%- set target_relation = api.Relation.create(identifier=identifier, schema=schema,
                                                database=database, type='materialized_view') -%}
  {%- if model.language != 'sql' -%}
    {{ exceptions.raise_compiler_error("materialized_view model '" ~ model.name ~ "' is " ~ model.language ~ ": only SQL models can be materialized views (their SQL is what is recorded). Use materialized: table.") }}
  {%- endif -%}
  {%- set contract_config = config.get('contract') -%}
  {%- if contract_config and contract_config.enforced -%}
    {{ exceptions.raise_compiler_error("materialized_view model '" ~ model.name ~ "' enforces a contract, which materialized views do not support yet. Use materialized: table.") }}
  {%- endif -%}
  {%- do adapter.mv_check_freshness(config.get('mv_freshness'), model.name) -%}
  {%- do lakehouse_maintenance_check() -%}
  {%- set found = lakehouse_mv_upstreams() -%}
  {#- The watched settings (a change is a configuration change) and how a GROUP BY is folded. -#}
  {%- set settings = {} -%}
  {%- for key in ['partition_by', 'table_properties', 'write_order_by', 'format_version', 'mv_regroup_max_bytes'] -%}
    {%- do settings.update({key: config.get(key)}) -%}
  {%- endfor -%}
  {%- set plan = adapter.mv_refresh_plan(target_relation, existing, found[0], found[1], compiled_code,
                                         settings, should_full_refresh(),
                                         config.get('on_configuration_change'), model.unique_id) -%}
  {{ run_hooks(pre_hooks) }}
  {%- if plan['action'] in ('noop', 'skip') -%}
    {{ log(plan['message'], info=True) }}
    {%- if plan.get('mirror') -%}
      {#- The properties lag behind the record committed with the rows: copied, no rows read. -#}
      {{ lakehouse_mv_mirror(target_relation, plan) }}
    {%- endif -%}
  {%- else -%}
    {{ log(plan['message']) }}
    {#- dbt's own wording for a replace (dbt-tests-adapter looks for it). -#}
    {%- if existing is not none and plan['action'] in ('create', 'rebuild') -%}
      {{ log('Applying REPLACE to: ' ~ target_relation) }}
    {%- endif -%}
    {%- if existing is not none and existing.is_view -%}
      {{ adapter.drop_relation(existing) }}
    {%- endif -%}
    {%- if plan['action'] in ('overwrite', 'append', 'merge') -%}
      {%- if plan['action'] == 'append' -%}
        {#- The query over the upstream's appended rows only (mv/incremental.py). -#}
        {%- call statement('main') -%}
          insert into {{ target_relation }}
          {{ plan['sql'] }}
        {%- endcall -%}
        {%- do adapter.drop_temp_view(plan['view']) -%}
      {%- elif plan['action'] == 'merge' -%}
        {#- The GROUP BY over the appended rows, merged group by group (mv/aggregate.py). -#}
        {%- call statement('main') -%}
          {{ plan['sql'] }}
        {%- endcall -%}
        {%- do adapter.drop_temp_view(plan['view']) -%}
      {%- else -%}
        {%- call statement('main') -%}
          -- lakehouse:conf spark.sql.sources.partitionOverwriteMode=static
          insert overwrite table {{ target_relation }}
          {{ compiled_code }}
        {%- endcall -%}
      {%- endif -%}
      {#- The rows' commit carried the record (lineage); the properties mirror it. Only the
          record: continue keeps the configured properties as they were. -#}
      {{ lakehouse_mv_mirror(target_relation, plan) }}
    {%- else -%}
      {%- call statement('main') -%}
        {{ lakehouse_create_table_sql(target_relation, compiled_code, properties=plan['properties']) }}
      {%- endcall -%}
      {% do lakehouse_apply_write_order(target_relation) %}
      {%- if plan['unset'] -%}
        {#- Iceberg's replace keeps earlier properties: upstreams no longer read are unset. -#}
        {{ lakehouse_mv_mirror(target_relation, {'properties': {}, 'unset': plan['unset']}) }}
      {%- endif -%}
    {%- endif -%}
  {%- endif -%}

  {%- if plan['action'] not in ('noop', 'skip') -%}
    {#- A fresh view is left untouched: not even a metadata commit. -#}
    {% set should_revoke = should_revoke(existing, full_refresh_mode=True) %}
    {% do apply_grants(target_relation, config.get('grants'), should_revoke) %}
    {% do persist_docs(target_relation, model) %}
  {%- endif -%}
  {{ run_hooks(post_hooks) }}
  {%- if plan['action'] not in ('noop', 'skip') -%}
    {% do lakehouse_maintenance_after_run(target_relation) %}
  {%- endif -%}
  {%- set codes = {'noop': 'NO CHANGE', 'skip': 'SKIP AUDITED', 'overwrite': 'OVERWRITE', 'append': 'INSERT', 'merge': 'MERGE',
                   'rebuild': 'REFRESH', 'create': 'CREATE'} -%}
  {% do lakehouse_report_node(codes[plan['action']]) %}
  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}

{% macro lakehouse_mv_upstreams() %}
  {#- The model's upstream relations ([tables or views], [names of ephemeral models]): refs
      and sources, from the graph, as the names dbt renders for them. -#}
  {%- set relations = [] -%}
  {%- set untracked = [] -%}
  {%- for unique_id in model.depends_on.nodes -%}
    {%- set node = graph.nodes.get(unique_id) or graph.sources.get(unique_id) -%}
    {%- if node is none -%}
    {%- elif node.resource_type == 'source' -%}
      {#- A DataOS dataset address names a table in its depot's catalog (relation.py). -#}
      {%- set named = api.Relation.create(database=node.database, schema=node.schema, identifier=node.identifier) -%}
      {%- do relations.append(named.in_dataset(node)) -%}
    {%- elif node.config.materialized == 'ephemeral' -%}
      {%- do untracked.append(unique_id) -%}
    {%- else -%}
      {%- do relations.append(api.Relation.create(database=node.database, schema=node.schema, identifier=node.alias)) -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return([relations, untracked]) }}
{% endmacro %}

{% macro lakehouse_mv_mirror(relation, plan) %}
  {#- The view's record into its table properties (`properties` set, `unset` removed). -#}
  {%- if plan['properties'] -%}
    {%- call statement('mv_record') -%}
      alter table {{ relation }} set tblproperties (
        {%- for name, value in plan['properties'].items() %}
        {{ lakehouse_sql_string(name) }} = {{ lakehouse_sql_string(value) }}{{ ',' if not loop.last }}
        {%- endfor %})
    {%- endcall -%}
  {%- endif -%}
  {%- if plan['unset'] -%}
    {%- call statement('mv_unset') -%}
      alter table {{ relation }} unset tblproperties if exists (
        {%- for key in plan['unset'] %}{{ lakehouse_sql_string(key) }}{{ ', ' if not loop.last }}{% endfor -%})
    {%- endcall -%}
  {%- endif -%}
{% endmacro %}
