"""Audited runs (write-audit-publish on Iceberg branches)."""
