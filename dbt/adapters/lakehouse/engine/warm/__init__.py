"""The warm engine: a Spark driver JVM that outlives each dbt command (docs/warm-engine.md).

Starting a JVM and loading Spark and Iceberg costs every command seconds before its first
statement. On a local master the first command starts an engine (server.py: a supervisor
process owning the JVM) and later commands attach to it (client.py) with a Spark session of
their own; identity.py decides which engine a profile may use, so one never runs with another
profile's launch settings or JVM-wide credentials.

Why PySpark's gateway and not a local Spark Connect server: attached through py4j, a command
has the same SparkSession API and the same Java objects as on a driver it started itself, so
commit lineage, audited publishing, the Delta log and docs stats work unchanged; the Connect
path refuses audited runs and dual-format models and has no commit lineage, and Spark 3.5's
Connect server has no authentication, where py4j's gateway takes a secret on every connection.
"""
