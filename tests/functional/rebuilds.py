"""Reuse off for a test class whose claim is what a build does on a rerun of unchanged models.

Reuse is on by default (docs/reuse.md): a rerun with nothing changed reuses every node and runs
no statement. dbt-tests-adapter's classes that rerun unchanged models to see a rebuild's
statements, warnings or statuses (and ours that count a rebuild's commits) build every run with
this profile setting, as a user with `reuse: false` would.
"""

from __future__ import annotations

import pytest


class BuildsEveryRun:
    @pytest.fixture(scope="class")
    def dbt_profile_target(self, dbt_profile_target: dict) -> dict:
        return {**dbt_profile_target, "reuse": False}
