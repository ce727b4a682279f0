{%- materialization test, adapter='lakehouse' -%}
  {#- A data test reused (reuse/tests.py, docs/reuse.md): when its query, settings and every
      table it reads are those of its recorded run, that run's result is the one-row table dbt's
      test runner reads (failures, should_warn, should_error), no statement run, so dbt says the
      same PASS, WARN or FAIL and count. Otherwise dbt's own test
      materialization runs it (store_failures, limit, fail_calc as dbt does them) and its
      result is kept for the store, written at the invocation's end. -#}
  {%- set limit = config.get('limit') -%}
  {%- set sql_header = config.get('sql_header') if flags.REQUIRE_SQL_HEADER_IN_TEST_CONFIGS else none -%}
  {#- The query dbt's materialization runs when it stores no failures (one that stores them is
      never reused), to the character: the statement that runs it takes the analysis the
      decision made (engine/prepared.py) only when the texts are the same. The block below is
      dbt's own `sql_with_limit`, its blanks included. -#}
  {% set sql_with_limit %}
    {{ get_limit_subquery_sql(sql, limit) }}
  {% endset %}
  {%- set query = get_test_sql(sql_with_limit, config.get('fail_calc'), config.get('warn_if'), config.get('error_if'), limit=none) -%}
  {%- set reuse = adapter.reuse_test_plan(model, query, sql_header, should_store_failures()) -%}
  {%- if reuse['reuse'] -%}
    {%- do store_result('main', response=adapter.reuse_test_response(), agate_table=reuse['table']) -%}
    {%- set outcome = {'relations': []} -%}
  {%- else -%}
    {%- set outcome = context['materialization_test_default']() -%}
  {%- endif -%}
  {%- set main = load_result('main') -%}
  {%- set response = adapter.reuse_test_done(model, main.response, main.table, reuse['reuse']) -%}
  {%- do store_result('main', response=response, agate_table=main.table) -%}
  {{ return(outcome) }}
{%- endmaterialization -%}
