"""What a secret is and how one is shown: the `Secret` type, which conf keys and URIs hold
secrets, Spark's redaction regex, and scrubbing of error text, all from one pattern list, so
the places that hide a secret cannot disagree about what one is."""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import urlsplit

MASK = "****"

# Words that make a conf key or property a secret, as regex fragments: `access[.-]?key` covers
# s3a's fs.s3a.access.key, Iceberg S3FileIO's s3.access-key-id and the AWS SDK's system
# property aws.accessKeyId alike; `private[.-]?key` the GCS connector's
# fs.gs.auth.service.account.private.key(.id).
SECRET_KEY_WORDS = (
    "secret",
    "password",
    "token",
    "access[.-]?key",
    "apikey",
    "api[.-]key",
    "credential",
    # An STS external id (client.assume-role.external-id): shared between two parties only.
    "external[.-]?id",
    # Azure: fs.azure.account.key.<host>, adls.auth.shared-key.account.key, a connection string
    # (it carries AccountKey= or SharedAccessSignature=).
    "account[._-]?key",
    "connection[._-]?string",
    "private[.-]?key",
)
# Spark masks the values of matching keys in SET, the UI and event logs (spark.redaction.regex,
# a Java regex matched against keys); the same pattern decides what is kept out of SparkConf.
REDACTION_REGEX = "(?i)" + "|".join(SECRET_KEY_WORDS)
_SECRET_KEY_RE = re.compile(REDACTION_REGEX)
# `sig=` is the signature of an Azure SAS token in a URL.
_SECRET_IN_URI = re.compile(r"(?i)(password|secret|token|sig)=")


class Secret:
    """A credential that never prints: str(), repr() and format() all give "****"."""

    __slots__ = ("_value",)
    _value: str

    def __init__(self, value: str) -> None:
        if not isinstance(value, str):
            raise TypeError(f"Secret wraps a str, got {type(value).__name__}")
        object.__setattr__(self, "_value", value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Secret is immutable")

    def reveal(self) -> str:
        return self._value

    def __str__(self) -> str:
        return MASK

    def __repr__(self) -> str:
        return MASK

    def __format__(self, format_spec: str) -> str:
        return format(MASK, format_spec)

    def __bool__(self) -> bool:
        return bool(self._value)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Secret):
            return self._value == other._value
        return NotImplemented

    # Hashable so the frozen dataclasses that hold secrets stay hashable.
    def __hash__(self) -> int:
        return hash((Secret, self._value))


def is_secret_key(key: str) -> bool:
    return bool(_SECRET_KEY_RE.search(key))


def uri_has_secret(uri: str) -> bool:
    """A JDBC URL may carry ?password=, an HTTP one user:password@."""
    parts = urlsplit(uri.removeprefix("jdbc:"))
    return "@" in parts.netloc or bool(_SECRET_IN_URI.search(uri))


def safe_url(url: str) -> str:
    """A URL fit for a message: no user:password@, no query string."""
    parts = urlsplit(url)
    if not parts.scheme or not parts.netloc:
        return url if not uri_has_secret(url) else "<hidden>"
    host = parts.netloc.rpartition("@")[2]
    return f"{parts.scheme}://{host}{parts.path}"


def scrub(text: str, values: Iterable[str]) -> str:
    """`text` with each of `values` replaced by the mask."""
    # Longest first, so a secret containing another is masked whole.
    for value in sorted(values, key=len, reverse=True):
        if len(value) >= 4:
            text = text.replace(value, MASK)
    return text
