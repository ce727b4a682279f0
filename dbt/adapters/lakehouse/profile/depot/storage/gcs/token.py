"""An OAuth2 access token for the GCS preflight, from the same credentials the JVM's GCS client
uses: the depot's service-account key, else the default Google chain (a service-account key file
named by GOOGLE_APPLICATION_CREDENTIALS, else the metadata server on Google Cloud). Nothing here
is logged; a failure is told by its kind and the server's error code, never the key.
"""

from __future__ import annotations

import base64
import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from pathlib import Path

from dbt.adapters.lakehouse.profile.depot.storage.gcs.section import key_problems, parsed_key

SCOPE = "https://www.googleapis.com/auth/devstorage.read_write"
GOOGLE_TOKEN_URI = "https://oauth2.googleapis.com/token"
METADATA_TOKEN_URL = (
    "http://metadata.google.internal/computeMetadata/v1/instance/service-accounts/default/token"
)

# (method, url, headers, body, timeout) -> (status, body): the one HTTP seam of the GCS checks.
HttpRequest = Callable[[str, str, Mapping[str, str], bytes | None, float], tuple[int, bytes]]


class TokenError(Exception):
    """No token: the message says which credential failed and how to fix it (no secret)."""


def urllib_request(
    method: str, url: str, headers: Mapping[str, str], body: bytes | None, timeout: float
) -> tuple[int, bytes]:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    request = urllib.request.Request(url, data=body, headers=dict(headers), method=method)
    try:
        with opener.open(request, timeout=timeout) as response:
            return int(response.status), response.read(65536)
    except urllib.error.HTTPError as exc:
        return int(exc.code), exc.read(65536)


def key_token(key_json: str, request: HttpRequest, timeout: float, source: str) -> str:
    """Exchange a service-account key for an access token (the JWT bearer grant)."""
    problems = key_problems(key_json)
    if problems:
        raise TokenError(f"{source}: {problems[0]}")
    key = parsed_key(key_json)
    token_uri = key.get("token_uri", GOOGLE_TOKEN_URI)
    try:
        assertion = _signed_jwt(key, token_uri)
    except Exception as exc:  # a malformed PEM, or `cryptography` missing
        raise TokenError(
            f"{source}: its private_key cannot sign ({type(exc).__name__}). Fix: use the key "
            "file exactly as Google Cloud downloaded it (the private_key keeps its \\n escapes)."
        ) from None
    body = urllib.parse.urlencode(
        {"grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer", "assertion": assertion}
    ).encode()
    headers = {"Content-Type": "application/x-www-form-urlencoded"}
    try:
        status, answer = request("POST", token_uri, headers, body, timeout)
    except OSError as exc:
        raise TokenError(
            f"{source}: the token server {token_uri} did not answer within {timeout:g}s "
            f"({type(exc).__name__}). Fix: check the network (proxy, firewall) to {token_uri}."
        ) from None
    token = _json(answer).get("access_token")
    if status != 200 or not isinstance(token, str):
        error = _json(answer).get("error") or f"HTTP {status}"
        raise TokenError(
            f"{source}: Google refused the service-account key ({error}). Fix: the key may be "
            "deleted or disabled (IAM > Service accounts > Keys), or its account disabled; "
            "create a new key and put its JSON in the depot's secrets.gcs_key_json."
        )
    return token


def default_chain_token(
    request: HttpRequest, timeout: float, env: Mapping[str, str] | None = None
) -> str:
    """The default chain as the connector walks it: GOOGLE_APPLICATION_CREDENTIALS, then the
    metadata server."""
    env = os.environ if env is None else env
    path = env.get("GOOGLE_APPLICATION_CREDENTIALS")
    if path:
        try:
            text = Path(path).expanduser().read_text()
        except OSError as exc:
            raise TokenError(
                f"GOOGLE_APPLICATION_CREDENTIALS names {path}, which cannot be read "
                f"({type(exc).__name__}). Fix: point it at a service-account key file."
            ) from None
        return key_token(text, request, timeout, f"the key file {path}")
    try:
        status, answer = request(
            "GET", METADATA_TOKEN_URL, {"Metadata-Flavor": "Google"}, None, min(timeout, 3.0)
        )
    except OSError:
        status, answer = 0, b""
    token = _json(answer).get("access_token")
    if status == 200 and isinstance(token, str):
        return token
    raise TokenError(
        "No Google credentials: the depot has no secrets.gcs_key_json, "
        "GOOGLE_APPLICATION_CREDENTIALS is not set, and no metadata server answered (not on "
        "Google Cloud). Fix: add secrets.gcs_key_json (a service-account key's JSON) to the "
        "depot, or set GOOGLE_APPLICATION_CREDENTIALS=<key file>."
    )


def _signed_jwt(key: Mapping[str, str], audience: str) -> str:
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import padding, rsa

    now = int(time.time())
    header = {"alg": "RS256", "typ": "JWT", "kid": key["private_key_id"]}
    claims = {
        "iss": key["client_email"],
        "scope": SCOPE,
        "aud": audience,
        "iat": now,
        "exp": now + 600,
    }
    signing_input = f"{_b64(json.dumps(header))}.{_b64(json.dumps(claims))}".encode()
    private = serialization.load_pem_private_key(key["private_key"].encode(), password=None)
    if not isinstance(private, rsa.RSAPrivateKey):
        raise TypeError("not an RSA key")
    signature = private.sign(signing_input, padding.PKCS1v15(), hashes.SHA256())
    return f"{signing_input.decode()}.{_b64(signature)}"


def _b64(data: str | bytes) -> str:
    raw = data.encode() if isinstance(data, str) else data
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _json(body: bytes) -> dict[str, object]:
    try:
        value = json.loads(body or b"{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
