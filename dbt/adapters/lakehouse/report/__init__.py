"""What each dbt node did and cost: its Iceberg commits' rows, files and bytes, and the Spark
jobs it ran, reported in dbt's adapter_response (work.py, spark_jobs.py, response.py)."""
