{% macro lakehouse__listagg(measure, delimiter_text, order_by_clause, limit_num) -%}
  {#- Spark 3.5 has no ordered listagg: values are collected with their sort keys as structs,
      sorted (sort_array compares struct fields left to right), then joined. The keys of
      `order by` must share one direction; NULL measures are skipped, as listagg does. -#}
  {%- if not order_by_clause -%}
    {%- set collected = 'collect_list(' ~ measure ~ ')' -%}
  {%- else -%}
    {%- set items = modules.re.sub('(?i)^\\s*order\\s+by\\s+', '', order_by_clause).split(',') -%}
    {%- set keys = [] -%}
    {%- set directions = [] -%}
    {%- for item in items -%}
      {%- set parts = modules.re.match('(?is)^\\s*(.+?)(?:\\s+(asc|desc))?\\s*$', item) -%}
      {%- do keys.append(parts.group(1)) -%}
      {%- do directions.append((parts.group(2) or 'asc') | lower) -%}
    {%- endfor -%}
    {%- if directions | unique | list | length > 1 or modules.re.match('(?i)distinct\\s', measure | trim) -%}
      {{ exceptions.raise_compiler_error("listagg on Spark supports `order by` keys that all sort the same way and no DISTINCT together with order by; got measure " ~ measure ~ " with " ~ order_by_clause ~ ".") }}
    {%- endif -%}
    {%- set fields = [] -%}
    {%- for key in keys -%}
      {%- do fields.append("'k" ~ loop.index ~ "', " ~ key) -%}
    {%- endfor -%}
    {%- set collected -%}
      transform(sort_array(collect_list(named_struct({{ fields | join(', ') }}, 'v', {{ measure }})), {{ 'true' if directions[0] == 'asc' else 'false' }}), x -> x.v)
    {%- endset -%}
  {%- endif -%}
  {%- if limit_num -%}
    {%- set collected = 'slice(' ~ collected ~ ', 1, ' ~ limit_num ~ ')' -%}
  {%- endif -%}
  array_join({{ collected }}, {{ delimiter_text }})
{%- endmacro %}
