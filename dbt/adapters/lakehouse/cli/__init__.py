"""The `dbt-lakehouse` command."""
