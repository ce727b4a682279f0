"""Table maintenance through Iceberg's procedures, and the partitions `scope: run` compaction
reaches.
"""
