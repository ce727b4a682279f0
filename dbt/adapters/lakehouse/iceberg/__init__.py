"""Reading Iceberg's own metadata: table names as Spark and Iceberg's procedures take them, commit
lineage, table stats, commit history.
"""
