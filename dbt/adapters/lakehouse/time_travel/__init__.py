"""Time travel (`lakehouse.as_of`, sources' `as_of`) and `lakehouse_rollback`."""
