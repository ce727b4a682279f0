"""Profile targets: an unknown key or an out-of-range value is refused, naming the nearest key."""

from __future__ import annotations

import re
from typing import Any

import pytest
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.lakehouse.credentials import LakehouseCredentials


def validate(**target: Any) -> None:
    LakehouseCredentials.validate({"schema": "analytics", **target})


def test_known_keys_and_dbt_keys_pass() -> None:
    validate(
        threads=4,
        type="lakehouse",
        catalog="lakehouse",
        depot="dataos://lake",
        aws_region="us-east-1",
        commit_retries=0,
        spark={"master": "local[2]", "driver_memory": "2g"},
    )


def test_typos_name_the_nearest_key_and_every_problem_is_reported() -> None:
    with pytest.raises(DbtRuntimeError) as raised:
        validate(aws_regon="us-east-1", spark={"mastr": "local[2]"}, commit_retries=-1)
    text = str(raised.value)
    assert "Unknown profile key 'aws_regon'. Did you mean 'aws_region'?" in text
    assert "Unknown profile `spark:` key 'mastr'. Did you mean 'master'?" in text
    assert "commit_retries must be a whole number from 0 to 20; got -1." in text


@pytest.mark.parametrize("value", [-1, 21, True, "3"])
def test_commit_retries_out_of_range_is_refused(value: object) -> None:
    with pytest.raises(Exception, match="commit_retries"):
        validate(commit_retries=value)


def test_a_key_far_from_any_known_one_lists_the_accepted_keys() -> None:
    with pytest.raises(DbtRuntimeError) as raised:
        validate(colour="blue")
    text = str(raised.value)
    assert "Unknown profile key 'colour'. Accepted: apikey, aws_endpoint" in text
    assert "Did you mean" not in text


@pytest.mark.parametrize("value", [True, False])
def test_write_audit_publish_takes_a_boolean(value: bool) -> None:
    validate(write_audit_publish=value)
    credentials = LakehouseCredentials.from_dict(
        {"schema": "analytics", "write_audit_publish": value}
    )
    assert credentials.write_audit_publish is value


@pytest.mark.parametrize("value", ["yes", 1, "true"])
def test_write_audit_publish_refuses_other_values(value: object) -> None:
    with pytest.raises(DbtRuntimeError, match="write_audit_publish must be true or false"):
        validate(write_audit_publish=value)


@pytest.mark.parametrize(
    ("engine", "problem"),
    [
        ({"keep_warm_minute": 5}, "Unknown `engine:` key 'keep_warm_minute'. Did you mean"),
        ({"keep_warm_minutes": -1}, "engine.keep_warm_minutes must be a number of minutes"),
        ({"keep_warm_minutes": "ten"}, "engine.keep_warm_minutes must be a number of minutes"),
        ({"keep_warm_minutes": True}, "engine.keep_warm_minutes must be a number of minutes"),
        ({"warm_up_seconds": -5}, "engine.warm_up_seconds must be a number of seconds"),
        ({"warm_up_seconds": "1m"}, "engine.warm_up_seconds must be a number of seconds"),
        ("warm", "engine must be a mapping"),
    ],
)
def test_engine_options_are_checked(engine: object, problem: str) -> None:
    with pytest.raises(DbtRuntimeError, match=re.escape(problem)):
        LakehouseCredentials.validate({"type": "lakehouse", "schema": "s", "engine": engine})


def test_engine_keep_warm_minutes_reaches_the_spec() -> None:
    creds = LakehouseCredentials.from_dict(
        {
            "schema": "s",
            "engine": {"keep_warm_minutes": 2.5, "warm_up_seconds": 20},
            "warehouse": "/tmp/w",
        }
    )
    assert creds.engine.keep_warm_minutes == 2.5
    assert creds.engine.warm_up_seconds == 20
