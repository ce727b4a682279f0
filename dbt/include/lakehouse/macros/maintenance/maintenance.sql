{#- Iceberg table maintenance (the maintenance/ package): a model's `maintenance` config, checked before
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

{% macro lakehouse_maintain(select=none, operations=none, dry_run=false, compaction=none,
                            snapshot_expiry=none, orphan_cleanup=none, metadata_cleanup=none,
                            delta_checkpoint=none) %}
  {#- dbt run-operation lakehouse_maintain --args '{select: [orders, "tag:nightly"], operations: [compaction, snapshot_expiry], dry_run: false}'
      The project's tables (models other than views and ephemerals, seeds, snapshots), by
      name or `tag:<tag>` (absent: all of them); each keeps the options of its own
      `maintenance` config, over which an operation's options given here are laid for this
      call (`snapshot_expiry: {retain_last: 2}`). One line per table and operation; failures
      are summed up at the end. -#}
  {%- if not execute -%}{{ return('') }}{%- endif -%}
  {%- set nodes = lakehouse_selected_nodes(lakehouse_table_nodes(), select, 'lakehouse_maintain', 'table') -%}
  {%- set tables = [] -%}
  {%- for node in nodes -%}
    {%- set relation = adapter.get_relation(database=node.database, schema=node.schema, identifier=node.alias) -%}
    {%- if relation is none -%}
      {{ log(node.database ~ '.' ~ node.schema ~ '.' ~ node.alias ~ ': skipped: the table does not exist yet (build it first)', info=True) }}
    {%- else -%}
      {%- do tables.append({'relation': relation, 'config': node.config.get('maintenance'),
                            'write_order_by': node.config.get('write_order_by')}) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- do adapter.maintain_tables(tables, operations, dry_run, {
        'compaction': compaction, 'snapshot_expiry': snapshot_expiry,
        'orphan_cleanup': orphan_cleanup, 'metadata_cleanup': metadata_cleanup,
        'delta_checkpoint': delta_checkpoint}) -%}
{% endmacro %}
