"""dbt's suites here that run dbt under freezegun (sample mode, microbatch): a library first
imported while time is frozen keeps freezegun's fake datetime class. pydantic's schema builder
did, and a later test of the same process then failed to import pyiceberg (no schema for the
real datetime). So the pydantic-based libraries the tests read tables with are imported first."""

import pyiceberg.table  # noqa: F401
