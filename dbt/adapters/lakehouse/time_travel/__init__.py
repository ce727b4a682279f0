"""Time travel (`lakehouse.as_of`, sources' `as_of`: as_of.py) and `lakehouse_rollback`
(rollback.py), both read against a table's history (history.py); adapter.py is the adapter's
side.
"""
