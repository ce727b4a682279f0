"""Incremental models that read only what changed upstream: `lakehouse.changes(ref(...))`.

plan.py decides, from the snapshot of the upstream a model consumed last (recorded in the
model's own snapshot summaries) and the upstream's history, what to read; adapter.py reads it
with Iceberg's changelog and registers what the model's commits record.
"""
