{% macro lakehouse_report_node(code, rows_given=none, message=none) %}
  {#- The node's adapter_response, replacing its main statement's: what all its statements
      committed and the Spark jobs they ran (report/), under `code`, so run_results.json and
      dbt's console line ([MERGE 1,234 in 4.2s]) show the whole node, not its last statement. -#}
  {%- set main = load_result('main') -%}
  {%- set response = adapter.node_response(code, rows_given, main.response if main else none, message) -%}
  {%- do store_result('main', response=response, agate_table=(main.table if main else none)) -%}
{% endmacro %}

{% macro lakehouse_incremental_code(strategy, incremental_run) %}
  {#- What an incremental run did, by strategy; its first run and --full-refresh create. -#}
  {%- set codes = {'append': 'INSERT', 'merge': 'MERGE', 'delete+insert': 'DELETE+INSERT',
                   'insert_overwrite': 'OVERWRITE', 'microbatch': 'OVERWRITE'} -%}
  {{ return(codes.get(strategy, strategy | upper) if incremental_run else 'CREATE') }}
{% endmacro %}
