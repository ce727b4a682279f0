"""The preflight of GCS storage, over the JSON API: the credentials give a token, the bucket
exists and answers, and they may list, write and delete under the prefix (a tiny probe object,
removed again). Each failure GCS can answer with is explained with its fix. HTTP goes through
one injected function (`token.HttpRequest`), so the checks are tested without the outside
world. An emulator endpoint without a key is checked unauthenticated, as the JVM's client runs.
"""

from __future__ import annotations

import json
import uuid
from urllib.parse import quote

from dbt.adapters.lakehouse.profile.depot.model import GcsStorage
from dbt.adapters.lakehouse.profile.depot.storage.gcs.token import (
    HttpRequest,
    TokenError,
    default_chain_token,
    key_token,
)
from dbt.adapters.lakehouse.profile.depot.storage.report import StoreChecks

PROBE_NAME = ".dbt-lakehouse-preflight"
GCS_API = "https://storage.googleapis.com"


class GcsChecks(StoreChecks[GcsStorage, HttpRequest]):
    """Credentials, bucket and list permission, then write and delete, in that order: a later
    check only runs when the earlier ones passed."""

    # The token's header, once _authorise has one (none for an emulator without a key).
    headers: dict[str, str]

    @property
    def bucket(self) -> str:
        return self.storage.bucket

    @property
    def base(self) -> str:
        return (self.storage.endpoint or GCS_API).rstrip("/")

    def run(self) -> None:
        if not self._authorise():
            return
        if not self._list():
            return
        self._write_and_delete()

    def _authorise(self) -> bool:
        key = self.secrets.gcs_key_json
        self.headers = {}
        try:
            if key:
                token = key_token(
                    key.reveal(), self.client, self.timeout, "The depot's secrets.gcs_key_json"
                )
                how = "the depot's service-account key"
            elif self.storage.endpoint:
                self.report.passed.append(
                    f"GCS emulator{self.where}: no key, requests are unauthenticated"
                )
                return True
            else:
                token = default_chain_token(self.client, self.timeout)
                how = "the default Google chain"
        except TokenError as exc:
            self.report.problems.append(str(exc))
            return False
        self.headers = {"Authorization": f"Bearer {token}"}
        self.report.passed.append(f"GCS credentials from {how} give an access token")
        return True

    def _call(self, method: str, url: str, body: bytes | None = None) -> tuple[int, bytes] | None:
        try:
            return self.client(method, url, self.headers, body, self.timeout)
        except OSError as exc:
            endpoint = self.storage.endpoint or GCS_API
            self.report.problems.append(
                f"GCS is unreachable: {endpoint} did not answer within {self.timeout:g}s "
                f"({type(exc).__name__}). Fix: check spec.gcs.endpoint (an emulator must be "
                "running), and the network (proxy, firewall)."
            )
            return None

    def _list(self) -> bool:
        url = (
            f"{self.base}/storage/v1/b/{quote(self.bucket, safe='')}/o"
            f"?maxResults=1&prefix={quote(self.prefix, safe='')}"
        )
        answer = self._call("GET", url)
        if answer is None:
            return False
        status, body = answer
        if status == 200:
            self.report.passed.append(
                f"GCS bucket '{self.bucket}'{self.where} is reachable; storage.objects.list on "
                f"{self.location} is allowed"
            )
            return True
        self.report.problems.append(self._problem(status, body, "storage.objects.list"))
        return False

    def _write_and_delete(self) -> None:
        name = f"{self.prefix}{PROBE_NAME}-{uuid.uuid4().hex[:12]}"
        bucket = quote(self.bucket, safe="")
        upload = (
            f"{self.base}/upload/storage/v1/b/{bucket}/o?uploadType=media"
            f"&name={quote(name, safe='')}"
        )
        answer = self._call("POST", upload, b"")
        if answer is None:
            return
        if answer[0] != 200:
            self.report.problems.append(self._problem(*answer, "storage.objects.create"))
            return
        answer = self._call("DELETE", f"{self.base}/storage/v1/b/{bucket}/o/{quote(name, safe='')}")
        if answer is None:
            return
        if answer[0] not in (200, 204):
            self.report.problems.append(
                self._problem(*answer, "storage.objects.delete")
                + f"\nThe probe object gs://{self.bucket}/{name} (empty) was left behind; "
                "remove it by hand."
            )
            return
        self.report.passed.append(
            f"storage.objects.create and storage.objects.delete on {self.location} are allowed "
            "(probe object removed)"
        )

    def _problem(self, status: int, body: bytes, permission: str) -> str:
        message = _error_message(body)
        says = f" (GCS said: {message})" if message else ""
        if status == 404 and permission == "storage.objects.list":
            return (
                f"GCS bucket '{self.bucket}' does not exist{self.where} (404). Given: "
                f"spec.gcs.bucket: {self.bucket}. Fix: create the bucket, or correct "
                "spec.gcs.bucket in the depot (the bucket name only; the folder goes in "
                "relativePath)."
            )
        if status == 401:
            return (
                f"GCS refused the credentials for {permission} on {self.location} (401){says}. "
                "Fix: correct the depot's secrets.gcs_key_json (or "
                "GOOGLE_APPLICATION_CREDENTIALS), or create a new key."
            )
        if status == 403:
            return (
                f"GCS denied {permission} on {self.location} (403){says}. Fix: grant the "
                f"service account {permission} on bucket '{self.bucket}' (the role Storage "
                "Object User, roles/storage.objectUser, has storage.objects.list, get, create "
                "and delete, which dbt-lakehouse needs), or use a key that has it."
            )
        return f"GCS {permission} on {self.location} failed with HTTP {status}{says}."


def _error_message(body: bytes) -> str:
    try:
        error = json.loads(body or b"{}").get("error")
    except (ValueError, AttributeError):
        return ""
    if isinstance(error, dict):
        return str(error.get("message") or "").strip()[:200]
    return ""
