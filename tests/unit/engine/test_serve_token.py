"""Who may use a served endpoint (engine/serve/token.py): the bind rule, the token's length,
and the Thrift check's Java source, which holds the digest and never the token."""

from __future__ import annotations

import hashlib

import pytest

from dbt.adapters.lakehouse.engine.serve.token import (
    MIN_TOKEN_LENGTH,
    TOKEN_ENV,
    check_token,
    is_loopback,
    thrift_auth_source,
    token_digest,
)
from dbt.adapters.lakehouse.exceptions import EngineSetupError

TOKEN = "a-token-of-twenty-chars"  # noqa: S105 - a test value


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "::1", "localhost", "LOCALHOST"])
def test_loopback_addresses(host: str) -> None:
    assert is_loopback(host)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "10.0.0.5", "example.com", ""])  # noqa: S104
def test_other_addresses(host: str) -> None:
    assert not is_loopback(host)


def test_loopback_without_a_token_gets_a_new_random_one() -> None:
    made = {check_token("127.0.0.1", None) for _ in range(3)}
    assert len(made) == 3 and all(len(t) >= MIN_TOKEN_LENGTH for t in made)
    assert len(check_token("localhost", "  ")) >= MIN_TOKEN_LENGTH


def test_another_address_without_a_token_is_refused_naming_the_fix() -> None:
    with pytest.raises(EngineSetupError) as refused:
        check_token("0.0.0.0", None)  # noqa: S104
    assert TOKEN_ENV in refused.value.msg and "127.0.0.1" in refused.value.msg


def test_a_short_token_is_refused_without_showing_it() -> None:
    with pytest.raises(EngineSetupError) as refused:
        check_token("0.0.0.0", "short-secret")  # noqa: S104
    assert "12 characters" in refused.value.msg and "short-secret" not in refused.value.msg


def test_a_given_token_is_kept() -> None:
    assert check_token("0.0.0.0", f" {TOKEN} ") == TOKEN  # noqa: S104


def test_the_thrift_check_holds_the_digest_only() -> None:
    digest = token_digest(TOKEN)
    assert digest == hashlib.sha256(TOKEN.encode()).hexdigest()
    source = thrift_auth_source("pkg", "Check", digest)
    assert digest in source and TOKEN not in source
    assert "implements org.apache.hive.service.auth.PasswdAuthenticationProvider" in source


def test_the_thrift_check_takes_nothing_but_a_digest() -> None:
    with pytest.raises(ValueError):
        thrift_auth_source("pkg", "Check", TOKEN)
