"""Materialized views (`materialized: materialized_view`): an Iceberg table built from the
model's SQL that records, in its own table properties, what it was built from (the snapshot of
`main` of every upstream table, their schemas, the SQL and the configuration).

state.py holds the pure decisions (property names, refresh plan, freshness status);
freshness.py judges a view's staleness against its `mv_freshness` thresholds;
incremental.py decides when a refresh may read only the appended rows, and aggregate.py how a
GROUP BY over them merges; reading.py reads the upstreams' and the view's metadata (never their
data); adapter.py is what the materialization and `lakehouse.mv_status` call, through
methods.py (the adapter's `@available` methods); docs/materialized-views.md says the rest.
"""
