"""An S3 depot's `spec.s3` section read into the draft, its storage resolved (the region and
endpoint by precedence: the profile's aws_region / aws_endpoint, the depot, then the AWS
variables, each checked) and its AWS keys (the depot's, else the environment's, as a pair).
The IAM role a depot acts as is aws_role.py's."""

from __future__ import annotations

from collections.abc import Mapping

from dbt.adapters.lakehouse.profile.depot.aws_role import S3_FILE_IO, AwsRole, resolve_role
from dbt.adapters.lakehouse.profile.depot.draft import (
    _bucket_section,
    _Draft,
    _first,
)
from dbt.adapters.lakehouse.profile.depot.model import _SECRET_KEYS, S3Storage, Storage, _Context
from dbt.adapters.lakehouse.profile.depot.storage.kind import Section
from dbt.adapters.lakehouse.profile.secrets import safe_url

SECTION_KEYS = ("bucket", "relativePath", "region", "endpoint")
_AWS_KEYS = ("aws_access_key", "aws_secret_key", "aws_session_token")


def resolve_s3_storage(draft: _Draft, ctx: _Context, problems: list[str]) -> S3Storage | None:
    region, _ = _first(
        ("profile aws_region", ctx.aws_region),
        ("depot spec.s3.region", draft.region),
        ("AWS_REGION", ctx.getenv("AWS_REGION")),
        ("AWS_DEFAULT_REGION", ctx.getenv("AWS_DEFAULT_REGION")),
    )
    endpoint, endpoint_from = _first(
        ("profile aws_endpoint", ctx.aws_endpoint),
        ("depot spec.s3.endpoint", draft.endpoint),
        ("AWS_ENDPOINT", ctx.getenv("AWS_ENDPOINT")),
    )
    ok = True
    if region is None:
        ok = False
        problems.append(
            "S3 storage needs an AWS region, and none is set. Given: no profile aws_region, no "
            "depot spec.s3.region, no AWS_REGION (or AWS_DEFAULT_REGION) environment variable. "
            "Accepted: set one of those three, e.g. us-east-1 (S3-compatible stores such as "
            "MinIO accept us-east-1)."
        )
    if endpoint is not None and not endpoint.lower().startswith(("http://", "https://")):
        ok = False
        problems.append(
            f"The S3 endpoint from {endpoint_from} is not an http(s) URL; got "
            f"{safe_url(endpoint)!r}. Accepted: http://host:port or https://host."
        )
    if not ok or draft.bucket is None or region is None:
        return None
    return S3Storage(draft.bucket, draft.relative_path, region, endpoint)


def check_s3_secrets(
    draft: _Draft, ctx: _Context, values: dict[str, str], problems: list[str], own: bool
) -> None:
    """AWS keys are checked as a pair on any depot; an S3 depot without any takes them from
    the environment, and without those too the default AWS chain."""
    if any(k in values for k in _AWS_KEYS):
        _check_key_pair(values, _AWS_KEYS, "depot secrets", problems)
    elif own:
        # No keys in the depot: the DataOS variables; none there either: the default chain.
        env_names = {
            "aws_access_key": "AWS_ACCESS_KEY_ID",
            "aws_secret_key": "AWS_SECRET_ACCESS_KEY",
            "aws_session_token": "AWS_SESSION_TOKEN",
        }
        from_env = {k: v for k, name in env_names.items() if (v := ctx.getenv(name))}
        _check_key_pair(
            from_env,
            ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"),
            "the environment",
            problems,
        )
        values.update(from_env)


def _check_key_pair(
    values: Mapping[str, str], names: tuple[str, str, str], where: str, problems: list[str]
) -> None:
    given = [bool(values.get(k)) for k in _SECRET_KEYS[:3]]
    access, secret, token = given
    if access == secret and (access or not token):
        return
    access_name, secret_name, token_name = names
    missing = [n for n, v in zip(names[:2], given[:2], strict=True) if not v]
    present = [n for n, v in zip(names, given, strict=True) if v]
    problems.append(
        f"AWS credentials in {where} are incomplete, missing {' and '.join(missing)}. "
        f"Given: {', '.join(present)} (values not shown). Accepted: both "
        f"{access_name} and {secret_name} (plus {token_name} for temporary credentials), or "
        "none of them to use the default AWS credential chain."
    )


def resolve_s3_role(
    draft: _Draft, ctx: _Context, storage: Storage | None, problems: list[str]
) -> AwsRole | None:
    """The IAM role of a resolved S3 storage: the depot's and the profile's aws_role_* keys."""
    if not isinstance(storage, S3Storage):
        return None
    default_io = S3_FILE_IO if draft.catalog_type == "glue" else ""
    io_impl = draft.properties.get("io-impl", default_io)
    return resolve_role(
        draft.secrets,
        ctx.aws_role,
        region=storage.region,
        s3_endpoint=storage.endpoint,
        uses_s3a=io_impl != S3_FILE_IO,
        problems=problems,
    )


SECTION = Section(
    SECTION_KEYS, _bucket_section("region", "endpoint"), resolve_s3_storage, check_s3_secrets
)
