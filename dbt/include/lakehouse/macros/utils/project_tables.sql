{#- The project's table nodes, for run-operations that act on many tables. -#}

{% macro lakehouse_table_nodes(dual_only=false) %}
  {#- Models other than views and ephemerals, seeds and snapshots, by unique_id; with
      dual_only, those whose table_formats hold delta. -#}
  {%- set nodes = [] -%}
  {%- for node in graph.nodes.values() | sort(attribute='unique_id')
        if node.resource_type in ['model', 'seed', 'snapshot']
        and node.config.materialized not in ['view', 'ephemeral'] -%}
    {%- if not dual_only or 'delta' in adapter.table_formats(node.config.get('table_formats'), node.name, node.database) -%}
      {%- do nodes.append(node) -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(nodes) }}
{% endmacro %}

{% macro lakehouse_selected_nodes(nodes, select, command, what) %}
  {#- The nodes a run-operation's `select` names (a name or `tag:<tag>`; absent: all of
      them). An entry that matches none is an error naming `what` could have matched. -#}
  {%- set wanted = [] if select is none else ([select] if select is string else select) -%}
  {%- set chosen = [] -%}
  {%- set matched = [] -%}
  {%- for node in nodes -%}
    {%- set hits = [] -%}
    {%- for entry in wanted -%}
      {%- if entry == node.name or (entry.startswith('tag:') and entry[4:] in node.tags) -%}
        {%- do hits.append(entry) -%}{%- do matched.append(entry) -%}
      {%- endif -%}
    {%- endfor -%}
    {%- if not wanted or hits -%}{%- do chosen.append(node) -%}{%- endif -%}
  {%- endfor -%}
  {%- set unmatched = [] -%}
  {%- for entry in wanted if entry not in matched -%}{%- do unmatched.append(entry) -%}{%- endfor -%}
  {%- if unmatched -%}
    {{ exceptions.raise_compiler_error(
        command ~ ": select entries " ~ unmatched | join(', ') ~ " match no " ~ what
        ~ " of this project (names of models other than views and ephemerals, seeds and "
        ~ "snapshots, or tag:<tag>). Nothing was changed.") }}
  {%- endif -%}
  {{ return(chosen) }}
{% endmacro %}

{% macro lakehouse_node_relation(node) %}
  {{ return(api.Relation.create(database=node.database, schema=node.schema,
                                identifier=node.alias, type='table')) }}
{% endmacro %}
