{% macro lakehouse_reused(relation) %}
  {#- A reused node (reuse/, docs/reuse.md): no statement, dbt's `reused` result; a
      dual-format table's Delta log is still brought to `main` when an earlier mirror failed
      (a reused node must not leave its Delta readers behind: the mirror sees the log already
      there otherwise and writes nothing). -#}
  {%- call noop_statement('main', 'REUSED', 'REUSED', 0) -%}{%- endcall -%}
  {%- do lakehouse_delta_after_write(relation) -%}
  {%- do lakehouse_report_node('REUSED', 0, 'REUSED') -%}
{% endmacro %}
