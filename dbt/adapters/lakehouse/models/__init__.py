"""What models write: incremental strategies and their checks, partition_by, Python models, seeds
and their types.
"""
