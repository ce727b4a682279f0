{#- Iceberg table maintenance (maintenance.py): a model's `maintenance` config, checked before
    its build writes anything and run after it, and the `lakehouse_maintain` run-operation. -#}

{% macro lakehouse_maintenance_check() %}
  {#- Call before a materialization writes: a bad `maintenance` config is a compile error then,
      not after the table changed. -#}
  {%- if not execute or model is not defined or model is none -%}
    {{ return([]) }}
  {%- endif -%}
  {{ return(adapter.maintenance_plan(config.get('maintenance'), model.name, config.get('write_order_by'))) }}
{% endmacro %}

{% macro lakehouse_maintenance_after_run(relation) %}
  {#- Call after the write and the post-hooks: the model's `maintenance.after_run`. -#}
  {%- if execute and config.get('maintenance') -%}
    {%- do adapter.maintain_after_run(relation, config.get('maintenance'), model.name,
                                      config.get('write_order_by')) -%}
  {%- endif -%}
{% endmacro %}

{% macro lakehouse_maintain(select=none, operations=none, dry_run=false) %}
  {#- dbt run-operation lakehouse_maintain --args '{select: [orders, "tag:nightly"], operations: [compaction, snapshot_expiry], dry_run: false}'
      The project's tables (models other than views and ephemerals, seeds, snapshots), by
      name or `tag:<tag>` (absent: all of them); each keeps the options of its own
      `maintenance` config. One line per table and operation; failures are summed up at the end. -#}
  {%- if not execute -%}{{ return('') }}{%- endif -%}
  {%- set wanted = [] if select is none else ([select] if select is string else select) -%}
  {%- set nodes = [] -%}
  {%- set matched = [] -%}
  {%- for node in graph.nodes.values()
        if node.resource_type in ['model', 'seed', 'snapshot']
        and node.config.materialized not in ['view', 'ephemeral'] -%}
    {%- set hits = [] -%}
    {%- for entry in wanted -%}
      {%- if entry == node.name or (entry.startswith('tag:') and entry[4:] in node.tags) -%}
        {%- do hits.append(entry) -%}{%- do matched.append(entry) -%}
      {%- endif -%}
    {%- endfor -%}
    {%- if not wanted or hits -%}{%- do nodes.append(node) -%}{%- endif -%}
  {%- endfor -%}
  {%- set unmatched = [] -%}
  {%- for entry in wanted if entry not in matched -%}{%- do unmatched.append(entry) -%}{%- endfor -%}
  {%- if unmatched -%}
    {{ exceptions.raise_compiler_error(
        "lakehouse_maintain: select entries " ~ unmatched | join(', ') ~ " match no table of this "
        ~ "project (names of models other than views and ephemerals, seeds and snapshots, or "
        ~ "tag:<tag>). Nothing was changed.") }}
  {%- endif -%}
  {%- set tables = [] -%}
  {%- for node in nodes | sort(attribute='unique_id') -%}
    {%- set relation = adapter.get_relation(database=node.database, schema=node.schema, identifier=node.alias) -%}
    {%- if relation is none -%}
      {{ log(node.database ~ '.' ~ node.schema ~ '.' ~ node.alias ~ ': skipped: the table does not exist yet (build it first)', info=True) }}
    {%- else -%}
      {%- do tables.append({'relation': relation, 'config': node.config.get('maintenance'),
                            'write_order_by': node.config.get('write_order_by')}) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- do adapter.maintain_tables(tables, operations, dry_run) -%}
{% endmacro %}
