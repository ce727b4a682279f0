"""Table maintenance through Iceberg's procedures, and the partitions `scope: run` compaction
reaches.

config.py checks what the user asked for; expiry.py and audit_branches.py keep open audit
branches publishable; procedures.py and compaction.py run one operation on one table, measured
by metadata.py and reported by report.py; run.py goes over many tables; adapter.py is the
adapter's side.
"""
