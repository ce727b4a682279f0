{#- DDL for the tables this adapter writes: always Iceberg, always replaced atomically. -#}

{% macro lakehouse__create_table_as(temporary, relation, compiled_code, language='sql') -%}
  {%- if language != 'sql' -%}
    {#- The materializations run a Python model first and pass `select * from <its view>`. -#}
    {{ exceptions.raise_compiler_error("dbt-lakehouse: create_table_as takes SQL; run the " ~ language ~ " model '" ~ model.name ~ "' through its materialization (table or incremental).") }}
  {%- endif -%}
  {%- if temporary -%}
    create or replace temporary view {{ relation.include(database=false, schema=false) }} as
    {{ compiled_code }}
  {%- else -%}
    {{ lakehouse_create_table_sql(relation, compiled_code) }}
  {%- endif -%}
{%- endmacro %}

{% macro lakehouse_create_table_sql(relation, select_sql, column_names=none, properties={}) -%}
  {#- column_names: the query's columns when the caller has them already, so partition_by is
      validated without planning the query once more. properties: written in the same commit
      as the rows (a materialized view's record); not on the contract path. -#}
  {#- Every path below replaces an existing table with the asked format version in its
      properties (an upgrade in the same commit); a downgrade is refused before any of them. -#}
  {%- do lakehouse_format_version_upgrade(relation) -%}
  {%- set contract_config = config.get('contract') -%}
  {%- if contract_config and contract_config.enforced -%}
    {{ get_assert_columns_equivalent(select_sql) }}
    {%- set select_sql = get_select_subquery(select_sql) -%}
    {%- set contract = adapter.contract_table(model['columns'], model['constraints']) -%}
    {%- if contract.required -%}
      {{ return(lakehouse_contract_table_sql(relation, select_sql, contract)) }}
    {%- endif -%}
  {%- endif -%}
  {#- In an audited run, an existing table is replaced on the run's branch (CREATE OR REPLACE
      would leave it without `main`); a new one is created by a plain CTAS, whose only ref
      is then the branch. -#}
  {%- set audit_branch = lakehouse_audit_prepare(relation) -%}
  {%- if audit_branch -%}
    {%- set existing = adapter.get_relation(relation.database, relation.schema, relation.identifier) -%}
    {%- if existing is not none and not existing.is_view -%}
      {{ return(lakehouse_branch_replace_sql(relation, select_sql)) }}
    {%- endif -%}
  {%- endif -%}
  create {{ 'or replace ' if not audit_branch }}table {{ relation }}
  using iceberg
  {% if column_names is none -%}
    {{ lakehouse_partition_clause(select_sql) }}
  {%- else -%}
    {{ lakehouse_partition_clause_for(column_names) }}
  {%- endif %}
  {{ comment_clause() }}
  {%- set required = dict(properties) -%}
  {%- if audit_branch -%}{%- do required.update({'write.wap.enabled': 'true'}) -%}{%- endif %}
  {{ lakehouse_tblproperties_clause(required) }}
  as
  {{ select_sql }}
{%- endmacro %}

{% macro lakehouse_contract_table_sql(relation, select_sql, contract) -%}
  {#- A contract with NOT NULL columns. Spark 3.5 makes every column of a CTAS nullable, so a
      contracted table is created from the contract's column list (required fields), and Spark
      fails any write of a NULL into it, naming the column.
      - A table that already has the contract's shape (columns, types, required fields,
        partitioning, identifier fields; the common rebuild) has its rows replaced by one
        INSERT OVERWRITE: one commit, so a NULL leaves it as it was and readers never see it
        empty.
      - Otherwise (a first build, or the contract or partitioning changed) the rows go into a
        staging table of the contract's columns first, so a NULL fails before the table is
        touched; the table is then re-created and filled from it (more than one commit: a
        reader in between sees it empty, never a NULL). The staging table is dropped whether
        or not the check passed. -#}
  {%- set staging = relation.incorporate(path={'identifier': relation.identifier ~ '__dbt_contract'}) -%}
  {%- set column_names = model['columns'].values() | map(attribute='name') | list -%}
  {%- set columns_ddl -%}
  (
    {{ contract.columns | join(',\n    ') }}
  )
  {%- endset -%}
  {%- set audit_branch = lakehouse_audit_prepare(relation) -%}
  {%- set existing = adapter.get_relation(relation.database, relation.schema, relation.identifier) -%}
  {%- set existing_table = existing is not none and not existing.is_view -%}
  {%- if existing_table and not audit_branch
         and adapter.contract_fits(existing, model['columns'], contract, config.get('partition_by'), model.name) -%}
    {%- set properties = lakehouse_tblproperties_clause() | trim -%}
    {%- if properties %}
  alter table {{ relation }} set {{ properties }};
    {%- endif %}
  -- lakehouse:conf spark.sql.sources.partitionOverwriteMode=static
  insert overwrite {{ relation }}
  {{ select_sql }}
  {%- else -%}
  create or replace table {{ staging }} {{ columns_ddl }}
  using iceberg;
  insert into {{ staging }}
  {{ select_sql }};
  {% if audit_branch and existing_table -%}
    {#- An audited replace writes the branch; the schema is the table's, its NULLs checked above. -#}
    {{ lakehouse_branch_replace_sql(relation, select_sql) }};
  {%- else -%}
  create {{ 'or replace ' if not audit_branch }}table {{ relation }} {{ columns_ddl }}
  using iceberg
  {{ lakehouse_partition_clause_for(column_names) }}
  {{ comment_clause() }}
  {{ lakehouse_tblproperties_clause({'write.wap.enabled': 'true'} if audit_branch else {}) }};
  {% if contract.identifier_fields -%}
  alter table {{ relation }} set identifier fields {{ contract.identifier_fields | join(', ') }};
  {% endif -%}
  insert into {{ relation }}
  select * from {{ staging }};
  {%- endif %}
  -- lakehouse:finally
  drop table if exists {{ staging }} purge
  {%- endif %}
{%- endmacro %}

{% macro lakehouse_partition_clause(compiled_code) -%}
  {#- Validated against the model's own columns before anything is written. -#}
  {%- if config.get('partition_by') -%}
    {{ lakehouse_partition_clause_for(get_columns_in_query(compiled_code)) }}
  {%- endif -%}
{%- endmacro %}

{% macro lakehouse_partition_clause_for(column_names) -%}
  {%- set partition_by = config.get('partition_by') -%}
  {%- if partition_by -%}
    {{ adapter.partition_clause(partition_by, column_names, model.name) }}
  {%- endif -%}
{%- endmacro %}

{% macro lakehouse_configured_properties() -%}
  {#- `table_properties` is ours; dbt-spark's `tblproperties` is honoured too, ours wins. -#}
  {%- set properties = {} -%}
  {%- for key in ['tblproperties', 'table_properties'] -%}
    {%- set value = config.get(key) -%}
    {%- if value is not none and value is not mapping -%}
      {{ exceptions.raise_compiler_error("Invalid " ~ key ~ " for model '" ~ model.name ~ "': expected a mapping of Iceberg table properties such as {'write.merge.mode': 'merge-on-read'}, got " ~ value) }}
    {%- endif -%}
    {%- do properties.update(value or {}) -%}
  {%- endfor -%}
  {{ return(properties) }}
{%- endmacro %}

{% macro lakehouse_format_version_upgrade(relation) -%}
  {#- The format version an existing table must be upgraded to (none: it is there already,
      nothing is asked, or there is no table yet); a downgrade fails here, naming the table,
      before anything is written. -#}
  {%- set existing = adapter.get_relation(relation.database, relation.schema, relation.identifier) -%}
  {%- if existing is none or existing.is_view -%}{{ return(none) }}{%- endif -%}
  {{ return(adapter.format_version_upgrade(existing, config.get('format_version'),
                                           lakehouse_configured_properties(), model.name)) }}
{%- endmacro %}

{% macro lakehouse_apply_format_version(relation, version) -%}
  {#- An in-place upgrade (incremental runs, snapshots): a metadata-only commit of its own, just
      before the write, so that write's deletes are already the new version's. -#}
  {%- if version -%}
    {%- call statement('format_version_upgrade') -%}
      alter table {{ relation }} set tblproperties ('format-version' = '{{ version }}')
    {%- endcall -%}
  {%- endif -%}
{%- endmacro %}

{% macro lakehouse_tblproperties_clause(required={}) -%}
  {#- The configured properties, then the asked format version (format_version, or the
      depot's default), the dual-format table's; `required` (set by the adapter) wins. -#}
  {%- set properties = lakehouse_configured_properties() -%}
  {%- do properties.update(adapter.format_version_properties(config.get('format_version'), properties, model.name, model.database)) -%}
  {%- do properties.update(lakehouse_delta_properties()) -%}
  {%- do properties.update(required) -%}
  {%- if properties -%}
    tblproperties (
      {%- for name, value in properties.items() %}
      {{ lakehouse_sql_string(name) }} = {{ lakehouse_sql_string(value) }}{{ ',' if not loop.last }}
      {%- endfor %}
    )
  {%- endif -%}
{%- endmacro %}

{% macro lakehouse_apply_write_order(relation) -%}
  {%- set write_order_by = config.get('write_order_by') -%}
  {%- if write_order_by -%}
    {%- if write_order_by is string -%}{%- set write_order_by = [write_order_by] -%}{%- endif -%}
    {% call statement('write_order_by') %}
      alter table {{ relation }} write ordered by {{ write_order_by | join(', ') }}
    {% endcall %}
  {%- endif -%}
{%- endmacro %}
