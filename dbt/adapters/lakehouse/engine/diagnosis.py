"""Error diagnosis beside the engine: what the text of a Spark, Iceberg or Py4J error means.

Owns an engine error's text (engine_error_text), the type it raises as (engine_error_type), a
first line with the fix for errors a user can act on (explain_engine_error, CatalogContext). A
statement's own errors, as each engine line words them, are read in sql_errors.py."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from dbt.adapters.lakehouse.engine.role_errors import explain_role_denied
from dbt.adapters.lakehouse.engine.sql_errors import explain_sql_error, failed_check_message
from dbt.adapters.lakehouse.exceptions import (
    AccessDeniedError,
    CatalogUnreachableError,
    CommitConflictError,
    DataCheckError,
    LakehouseDatabaseError,
    NamespaceMissingError,
    RelationMissingError,
    ViewsUnsupportedError,
)

# Spark and Iceberg report these conditions only as text (class names, error classes); this is
# the one place that reads it.
_NAMESPACE_MISSING = ("[SCHEMA_NOT_FOUND]", "NoSuchNamespaceException", "Namespace does not exist")
_RELATION_MISSING = ("[TABLE_OR_VIEW_NOT_FOUND]", "NoSuchTableException", "NoSuchViewException")
_COMMIT_CONFLICT = (
    "CommitFailedException",
    "Found conflicting files",
    "Found new conflicting delete files",
    "Cannot commit, found new",
    "Requirement failed: branch main has changed",
    "Requirement failed: table metadata changed",
    "Commit failed: Requirement failed",
    # A MERGE overtaken between its scan and its runtime filter: nothing written, so retried.
    "Runtime file filtering is not possible: the table has been concurrently modified",
    # Two `CREATE OR REPLACE VIEW`s of one view at once (Iceberg's JDBC catalog, the embedded
    # one): the loser replaced nothing, and its retry leaves the view as the statement says.
    "View was updated concurrently",
)
_ACCESS_DENIED = (
    "Status Code: 403",
    "AccessDeniedException",
    "NotAuthorizedException",
    "org.apache.iceberg.exceptions.ForbiddenException",
)


def engine_error_type(text: str) -> type[LakehouseDatabaseError]:
    """The error type for an engine error's text (engine_error_text)."""
    if failed_check_message(text) is not None:
        return DataCheckError
    if any(marker in text for marker in _COMMIT_CONFLICT):
        return CommitConflictError
    if any(marker in text for marker in _NAMESPACE_MISSING):
        return NamespaceMissingError
    if any(marker in text for marker in _RELATION_MISSING):
        return RelationMissingError
    if "MISSING_CATALOG_ABILITY" in text or _VIEWS_UNSUPPORTED.search(text):
        return ViewsUnsupportedError
    if any(marker in text for marker in _ACCESS_DENIED):
        return AccessDeniedError
    if "RESTException" in text and any(marker in text for marker in _REST_UNREACHABLE):
        return CatalogUnreachableError
    return LakehouseDatabaseError


# Iceberg's SparkCatalog over a catalog without views: `Creating a view is not supported by
# catalog: lakehouse` (also Replacing, Dropping, ...); Spark's own: `... does not support views`.
_VIEWS_UNSUPPORTED = re.compile(
    r"(?i)(?:a view is not supported by catalog:?\s*`?(?P<catalog>[\w-]+)?|does not support views)"
)


def engine_error_text(exc: BaseException) -> str:
    """The readable part of a Spark, Iceberg or Py4J error, without the JVM stack trace."""
    java_exception = getattr(exc, "java_exception", None)
    if java_exception is not None and type(exc).__name__ == "Py4JJavaError":
        messages: list[str] = []
        current = java_exception
        while current is not None and len(messages) < 4:
            text = str(current.toString())
            if not messages or text not in messages[-1]:
                messages.append(text)
            current = current.getCause()
        return "\n  caused by: ".join(messages)
    text = str(exc).strip()
    # PySpark appends the JVM stack trace after this marker when it is enabled.
    return text.split("\n\nJVM stacktrace:")[0]


# --- what an engine error means for the user ---------------------------------------------------
# s3a reports a refused request as `AccessDeniedException: <path>: <operation> on <path>: ...`;
# its operation names are Hadoop's, so they are translated to the S3 actions an IAM policy grants.
_S3A_DENIED = re.compile(
    r"AccessDeniedException: (?P<path>s3a?://[^\s:]+)(?::\s*(?P<op>[^:]+?) on s3a?://[^\s:]+)?:"
)
_S3_ERROR_CODE = re.compile(r"Error Code: (?P<code>[^;)]+)")
# AWS SDK v2 (Hadoop 3.4, the 4.1 line) names no error code; its message leads instead.
_S3_V2_MESSAGE = re.compile(r": (?P<code>Access Denied|[A-Za-z]+) \(Service: S3, Status Code: 403")
_S3_PATH = re.compile(r"s3a?://[^\s:,;)'\"]+")
_S3A_OPERATIONS = (
    (("getfilestatus", "innergetfilestatus", "headobject", "head"), "s3:GetObject / s3:ListBucket"),
    (("list", "listobjects", "liststatus", "listfiles"), "s3:ListBucket"),
    (("put", "writing", "upload", "multipart", "mkdirs", "create"), "s3:PutObject"),
    (("delete", "remove"), "s3:DeleteObject"),
    (("copy", "rename"), "s3:GetObject + s3:PutObject"),
    (("open", "read", "get", "reopen", "lazyseek", "seek"), "s3:GetObject"),
)
_CONNECT_FAILED = re.compile(r"Connect to (?P<target>\S+) (?:\[[^\]]*\] )?failed: (?P<why>[^\n]+)")
_REST_UNREACHABLE = (
    "HttpHostConnectException",
    "ConnectException",
    "ConnectTimeoutException",
    "SocketTimeoutException",
    "UnknownHostException",
    "NoRouteToHostException",
)


# Iceberg's hadoop catalog lists the root namespace of a warehouse folder that does not exist
# as `Namespace does not exist: ` followed by the root's empty name.
_ROOT_NAMESPACE_MISSING = re.compile(r"Namespace does not exist: ?(?:\n|$)")


def _explain_warehouse_missing(catalogs: Mapping[str, CatalogContext]) -> str:
    hadoop = [c for c in catalogs.values() if c.kind == "hadoop"]
    which = (
        f"the hadoop catalog `{hadoop[0].name}` of depot '{hadoop[0].depot}'"
        if len(hadoop) == 1
        else "a hadoop catalog"
    )
    return (
        f"Iceberg could not list the namespaces of {which}: its warehouse folder does not "
        "exist (Iceberg names it as a namespace with an empty name). Fix: create the folder "
        "(spec.file.path of a file depot, relativePath in an S3 or GCS depot's bucket), or correct "
        "the catalog's warehouse; `dbt debug` checks it."
    )


def s3_action_for(operation: str | None) -> str:
    """The IAM action behind an s3a operation name (`getFileStatus`, `PUT 0-byte object`)."""
    words = (operation or "").lower()
    for keys, action in _S3A_OPERATIONS:
        if any(key in words for key in keys):
            return action
    return f"the S3 request behind s3a's {operation!r}" if operation else "an S3 request"


@dataclass(frozen=True)
class CatalogContext:
    """What a message may say about one catalog of the session: no secrets, only where it
    looks things up. `default`: the catalog two-part names resolve in."""

    name: str
    kind: str
    depot: str
    region: str | None = None
    endpoint: str | None = None
    default: bool = False
    bucket: str | None = None
    role_arn: str | None = None  # the IAM role its AWS clients act as (engine/role_errors.py)

    def described(self) -> str:
        if self.kind == "glue":
            where = self.endpoint or f"AWS's Glue endpoint of {self.region}"
            return (
                f"the glue catalog of depot '{self.depot}', region {self.region}, endpoint {where}"
            )
        return f"the {self.kind} catalog of depot '{self.depot}'"


def explain_engine_error(
    text: str,
    catalog_uri: str | None = None,
    catalogs: Mapping[str, CatalogContext] | None = None,
) -> str | None:
    """A first line that says what went wrong and the fix, for errors a user can act on.

    `catalog_uri` (already free of credentials) names the remote catalog when the engine's text
    only gives a host. `catalogs` (the session's, by name) says where a catalog named in the
    text looks things up, and what kind a remote one is. None when the text is not one of
    these errors.
    """
    in_sql = explain_sql_error(text)
    if in_sql is not None:
        return in_sql
    if "Status Code: 403" in text or "AccessDeniedException" in text:
        return explain_role_denied(_explain_s3_denied(text), text, catalogs or {})
    region = _explain_wrong_region(text)
    if region is not None:
        return region
    if _NO_AWS_CREDENTIALS in text:
        return (
            "The AWS SDK found no credentials for Iceberg's Glue or S3 client (given: no keys "
            "it could read). Fix: set secrets.aws_access_key and secrets.aws_secret_key in "
            "the depot (or AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY), or give this machine "
            "an AWS profile or role the default chain finds."
        )
    catalogs = catalogs or {}
    if _ROOT_NAMESPACE_MISSING.search(text):
        return _explain_warehouse_missing(catalogs)
    missing = _explain_glue_missing(text, catalogs)
    if missing is not None:
        return missing
    views = _VIEWS_UNSUPPORTED.search(text)
    if views is not None:
        named = views.group("catalog")
        catalog = f"The catalog '{named}'" if named else "This catalog"
        return (
            f"{catalog} cannot hold views: Iceberg's hadoop and glue catalogs have none (jdbc, "
            "rest and nessie catalogs do). Fix: materialize the model as a table "
            "({{ config(materialized='table') }}), or build it in a depot whose catalog is "
            "jdbc, rest or nessie."
        )
    if "[SQLITE_BUSY" in text:  # the xerial driver's code, past the busy timeout
        return (
            "The embedded lakehouse's catalog file stayed locked by another process's write "
            "for longer than LAKEHOUSE_CATALOG_WAIT (120 s unless set). Fix: let the program "
            "holding it finish (a SQLite tool with a write transaction open, or a hung process "
            "on this warehouse) and rerun, or set LAKEHOUSE_CATALOG_WAIT higher."
        )
    if "NotAuthorizedException" in text:
        return _catalog_refused(
            text,
            catalog_uri,
            _remote_kind(catalogs),
            ("NotAuthorizedException:", "Not authorized:"),
            "rejected the token (401 NotAuthorized",
            "set secrets.apikey in the depot (or LAKEHOUSE_APIKEY) to a valid, unexpired API key "
            "for this catalog; `dbt debug` checks it.",
        )
    if "org.apache.iceberg.exceptions.ForbiddenException" in text:
        return _catalog_refused(
            text,
            catalog_uri,
            "REST",
            ("ForbiddenException:", "Forbidden:"),
            "accepted the token but refused the operation (403 Forbidden",
            "grant this API key the privilege on the namespace or table, or use a key that has it.",
        )
    if "RESTException" in text and any(marker in text for marker in _REST_UNREACHABLE):
        match = _CONNECT_FAILED.search(text)
        target = catalog_uri or (match.group("target") if match else "its uri")
        why = match.group("why").strip() if match else _reason_of(text)
        return (
            f"The Iceberg REST catalog at {target} is unreachable ({why}). Fix: start the "
            "catalog or correct its uri (catalog.uri in the depot, METASTORE_URL, or uri in "
            "the catalogs.yml entry); `dbt debug` checks it."
        )
    return None


def _remote_kind(catalogs: Mapping[str, CatalogContext]) -> str:
    """REST or Nessie: the kind of the session's one remote catalog (a token goes to either)."""
    kinds = {c.kind for c in catalogs.values() if c.kind in ("rest", "nessie")}
    return {"nessie": "Nessie"}.get(kinds.pop(), "REST") if len(kinds) == 1 else "REST"


_NO_AWS_CREDENTIALS = "Unable to load credentials from"
# S3 (SDK v1 and v2 alike) and other AWS services, when the request's region is not the
# bucket's or the endpoint's.
_REGION_WRONG = re.compile(
    r"the region '(?P<given>[a-z0-9-]+)' is wrong; expecting '(?P<expected>[a-z0-9-]+)'"
)
_REDIRECT_REGION = re.compile(r"permanent redirect response to region \[(?P<expected>[a-z0-9-]+)\]")
_PERMANENT_REDIRECT = "must be addressed using the specified endpoint"
_SCOPED_REGION = "Credential should be scoped to a valid region"
_NOT_FOUND = re.compile(
    r"\[(?P<kind>TABLE_OR_VIEW_NOT_FOUND|SCHEMA_NOT_FOUND)\] The (?:table or view|schema) "
    r"(?P<name>(?:`[^`]*`\.?)+)"
)
_REGION_FIX = "set the depot's spec.s3.region (or the profile's aws_region) to"


def _explain_wrong_region(text: str) -> str | None:
    wrong = _REGION_WRONG.search(text)
    if wrong is not None:
        given, expected = wrong.group("given"), wrong.group("expected")
        return (
            f"AWS refused a request signed for region {given}: the bucket (or service endpoint) "
            f"is in {expected}. Given: region {given}. Accepted: {expected}. Fix: "
            f"{_REGION_FIX} {expected}."
        )
    redirect = _REDIRECT_REGION.search(text)
    if redirect is not None or _PERMANENT_REDIRECT in text:
        region = redirect.group("expected") if redirect else None
        where = region or "another region (`aws s3api get-bucket-location` names it)"
        return (
            f"S3 redirected the request: the bucket is in {where}, not in the depot's region. "
            f"Fix: {_REGION_FIX} {region or 'the bucket region'}."
        )
    if _SCOPED_REGION in text:
        return (
            "AWS refused the request's signature: the client's region is not the region of the "
            f"endpoint it called (e.g. a glue.endpoint of another region). Fix: {_REGION_FIX} "
            "the endpoint's region, or remove the endpoint so the region's own one is used."
        )
    return None


def _explain_glue_missing(text: str, catalogs: Mapping[str, CatalogContext]) -> str | None:
    """A table or namespace Spark did not find, when the catalog it looked in is a glue one."""
    found = _NOT_FOUND.search(text)
    if found is None or not catalogs:
        return None
    parts = re.findall(r"`([^`]*)`", found.group("name"))
    table_wanted = found.group("kind") == "TABLE_OR_VIEW_NOT_FOUND"
    qualified = len(parts) == (3 if table_wanted else 2)
    if qualified and parts[0] in catalogs:
        context: CatalogContext | None = catalogs[parts[0]]
        parts = parts[1:]
    else:
        context = next((c for c in catalogs.values() if c.default), None)
    if context is None or context.kind != "glue" or not parts:
        return None
    if table_wanted and len(parts) >= 2:
        what = f"Glue database '{parts[-2]}' or its table '{parts[-1]}'"
    elif table_wanted:
        what = f"table '{parts[-1]}'"
    else:
        what = f"Glue database '{parts[-1]}'"
    return (
        f"Not found in Iceberg catalog '{context.name}': {what} does not exist in "
        f"{context.described()}. Glue keeps databases per AWS account and region. Given: "
        f"region {context.region}. Accepted: a database and table that exist in that region's "
        f"Glue catalog. Fix: create them (dbt creates a model's database), correct the source's "
        f"schema (the Glue database) and table name, or, when the database is in another "
        f"region, {_REGION_FIX} that region."
    )


def _explain_s3_denied(text: str) -> str:
    denied = _S3A_DENIED.search(text)
    path = denied.group("path") if denied else None
    if path is None:
        found = _S3_PATH.search(text)
        path = found.group(0) if found else None
    action = s3_action_for(denied.group("op") if denied else None)
    code_match = _S3_ERROR_CODE.search(text) or _S3_V2_MESSAGE.search(text)
    code = (
        code_match.group("code").strip().replace("Access Denied", "AccessDenied")
        if code_match
        else "403"
    )
    on = f" on {path}" if path else ""
    if "SignatureDoesNotMatch" in code:
        why = "the secret key does not match the access key"
        fix = "correct secrets.aws_secret_key in the depot (or AWS_SECRET_ACCESS_KEY)"
    elif "InvalidAccessKeyId" in code:
        why = "the access key is unknown to the store"
        fix = "correct secrets.aws_access_key in the depot (or AWS_ACCESS_KEY_ID)"
    elif "AccessDenied" in code:
        why = "the credentials lack the permission"
        fix = f"grant {action} on that prefix to these credentials"
    else:
        # A HEAD request's 403 carries no reason: wrong keys and a missing grant look alike.
        why = "the keys are wrong or lack the permission (S3 gives no reason for this request)"
        fix = (
            f"check the depot's aws_access_key / aws_secret_key, and that they are granted "
            f"{action} on that prefix; `dbt debug` tells which"
        )
    status = code if code.startswith("403") else f"403 {code}"
    return f"S3 denied {action}{on} ({status}): {why}. Fix: {fix}."


def _catalog_refused(
    text: str,
    catalog_uri: str | None,
    kind: str,
    markers: tuple[str, str],
    refusal: str,
    fix: str,
) -> str:
    """A catalog's refusal (`refusal` opens the parenthesis its own words close), with the fix."""
    where = f" at {catalog_uri}" if catalog_uri else ""
    return f"The Iceberg {kind} catalog{where} {refusal}: {_after(text, *markers)}). Fix: {fix}"


def _after(text: str, marker: str, redundant: str) -> str:
    """The engine's reason after `marker`, without Iceberg's repeat of the exception's name."""
    line = text.split(marker, 1)[1].strip().splitlines()[0] if marker in text else ""
    line = line.removeprefix(redundant).strip()
    return line[:200] or "no reason given"


def _reason_of(text: str) -> str:
    lowered = text.lower()
    if "refused" in lowered:
        return "connection refused"
    if "timed out" in lowered or "timeout" in lowered:
        return "timed out"
    if "unknownhost" in lowered:
        return "unknown host"
    return "no connection"
