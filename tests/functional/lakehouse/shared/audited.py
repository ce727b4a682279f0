"""The profiles of tests with audited runs: the default target, and `audited` with
`write_audit_publish: true` for the runs to audit, so the test's own SQL (the default target)
never audits, like a reader outside the run."""

from __future__ import annotations


def audited_profiles(dbt_profile_target: dict, unique_schema: str) -> dict:
    """`profiles_config_update` for a test class with both targets."""
    plain = {**dbt_profile_target, "schema": unique_schema}
    return {
        "test": {
            "target": "default",
            "outputs": {"default": plain, "audited": {**plain, "write_audit_publish": True}},
        }
    }
