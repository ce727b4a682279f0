"""`dbt init` offers every depot form, and each answer gives a profile target the adapter
accepts and resolves (driven through dbt's own InitTask prompt code)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from dbt.task.init import InitTask

from dbt.adapters.lakehouse.credentials import LakehouseCredentials
from dbt.adapters.lakehouse.profile.depot import resolve_depot
from dbt.include import lakehouse

TEMPLATE = yaml.safe_load((Path(lakehouse.PACKAGE_PATH) / "profile_template.yml").read_text())
CHOICES = list(TEMPLATE["prompts"]["_choose_lakehouse"])


def target_for(choice: int, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    answers = {"schema": "analytics", "depot": "dataos://lake", "threads": 2}

    def prompt(text: str, default: Any = None, **_: Any) -> Any:
        if text.startswith("[1]"):
            return choice
        return answers.get(text.split(" (")[0], default)

    monkeypatch.setattr("dbt.task.init.click.prompt", prompt)
    task = InitTask.__new__(InitTask)  # the prompt logic needs no task state
    target = task.generate_target_from_input(TEMPLATE["prompts"], {})
    return {**TEMPLATE["fixed"], **target}


# What the profile's env_var() calls give; dbt renders them before the adapter sees the target.
ENV = {
    "LAKEHOUSE_BUCKET": "my-bucket",
    "LAKEHOUSE_PREFIX": "warehouse/",
    "AWS_REGION": "us-east-1",
    "METASTORE_URL": "https://catalog.example/api",
    "AWS_ACCESS_KEY_ID": "AKIAEXAMPLE",
    "AWS_SECRET_ACCESS_KEY": "secret-example",
    "AWS_SESSION_TOKEN": "",
    "LAKEHOUSE_APIKEY": "apikey-example",
}


def _render(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _render(v) for k, v in value.items()}
    if isinstance(value, str) and "env_var(" in value:
        name = re.search(r"env_var\('([A-Z_]+)'", value)
        assert name is not None, value
        return ENV[name.group(1)]
    return value


def test_every_depot_form_is_offered() -> None:
    assert [c.split(" ")[0] for c in CHOICES] == ["embedded", "dataos://", "env", "inline"]


@pytest.mark.parametrize("choice", range(1, len(CHOICES) + 1))
def test_each_answer_is_a_valid_target(
    choice: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    target = target_for(choice, monkeypatch)
    LakehouseCredentials.validate(target)
    depot = target.get("depot")
    if isinstance(depot, dict):
        # The profile renders env_var() before the adapter sees it; here the values are given.
        rendered = _render(depot)
        assert "env_var" not in yaml.safe_dump(rendered)
        resolved = resolve_depot(
            depot=rendered,
            depots_file=None,
            warehouse=None,
            aws_region=None,
            aws_endpoint=None,
            env={},
        )
        assert resolved.storage.warehouse_uri == "s3://my-bucket/warehouse"
        assert resolved.catalog.type == "rest"
    elif depot is None:
        assert target["warehouse"] == "lakehouse_warehouse"
    else:
        assert depot in ("env", "dataos://lake")
