{% materialization snapshot, adapter='lakehouse' %}
  {#- dbt's own snapshot flow fits Iceberg as is: the staging relation is a temporary view and
      the final write is one MERGE (dbt-spark's snapshot_merge_sql). dbt-spark's materialization
      is skipped because it insists on a `file_format` config. -#}
  {{ return(materialization_snapshot_default()) }}
{% endmaterialization %}
