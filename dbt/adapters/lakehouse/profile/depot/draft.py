"""A depot as written, before precedence and cross-field checks (`_Draft`), and the small
readers the depot schema (parse.py), the storage kinds' sections (storage/) and precedence
share, kept below all of them so none imports another's module for them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from dbt.adapters.lakehouse.profile.depot.keys import unknown_key_problems


@dataclass
class _Draft:
    """A depot's fields as written, before precedence and cross-field checks."""

    storage_type: str | None = None
    bucket: str | None = None
    relative_path: str = ""
    region: str | None = None
    endpoint: str | None = None
    project: str | None = None  # gcs only
    file_path: str | None = None
    account: str | None = None
    container: str | None = None
    catalog_type: str | None = "rest"
    catalog_uri: str | None = None
    catalog_warehouse: str | None = None
    properties: dict[str, str] = field(default_factory=dict)
    # The default `table_formats` of tables in this depot; checked where it is used.
    table_formats: Any = None
    # The default `format_version` of tables in this depot; checked in precedence.py.
    format_version: Any = None
    secrets: dict[str, str] = field(default_factory=dict)


def _check_keys(
    section: Mapping[Any, Any],
    accepted: tuple[str, ...],
    where: str,
    problems: list[str],
    hint: str = "",
) -> None:
    # The profile's own keys get the same wording (credentials.py), so a typo reads alike
    # wherever it is made.
    problems.extend(p + hint for p in unknown_key_problems(section, accepted, where))


def _opt_str(section: Mapping[Any, Any], key: str, where: str, problems: list[str]) -> str | None:
    value = section.get(key)
    if value is None:
        return None
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        return str(value).strip() or None
    problems.append(f"{where}.{key} must be a string; got {_kind(value)}.")
    return None


_BUCKET_NAME = r"[A-Za-z0-9][A-Za-z0-9._-]*"
_BUCKET_ACCEPTED = (
    "e.g. my-bucket (letters, digits, '.', '-', '_'); put the folder in relativePath, not the "
    "bucket."
)


def _valid_bucket(bucket: str, where: str, problems: list[str]) -> bool:
    """True when `bucket` is a bare bucket name; otherwise records why not."""
    must = f"{where} must be a bare bucket name"
    return _valid_name(bucket, _BUCKET_NAME, must, _BUCKET_ACCEPTED, problems)


def _valid_name(value: str, pattern: str, must: str, accepted: str, problems: list[str]) -> bool:
    """True when `value` matches `pattern`; otherwise records `must`, the value and what is
    accepted (a name, never a secret, so it is shown)."""
    if re.fullmatch(pattern, value):
        return True
    problems.append(f"{must}; got {value!r}. Accepted: {accepted}")
    return False


def _kind(value: object) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    return f"a {type(value).__name__}"


def _first(*candidates: tuple[str, str | None]) -> tuple[str | None, str | None]:
    for where, value in candidates:
        if value:
            return value, where
    return None, None


def _bucket_section(*names: str) -> Callable[[Mapping[Any, Any], _Draft, str, list[str]], None]:
    """The reader of a bucket's section (s3, gcs): the bare bucket name and the prefix under
    it, then each of `names` as a string into the draft's field of that name."""

    def read(section: Mapping[Any, Any], draft: _Draft, where: str, problems: list[str]) -> None:
        bucket = _opt_str(section, "bucket", where, problems)
        if bucket is None:
            problems.append(f"{where}.bucket is missing. Accepted: a bucket name, e.g. my-bucket.")
        elif _valid_bucket(bucket, f"{where}.bucket", problems):
            draft.bucket = bucket
        draft.relative_path = _opt_str(section, "relativePath", where, problems) or ""
        for name in names:
            setattr(draft, name, _opt_str(section, name, where, problems))

    return read
