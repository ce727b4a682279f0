"""A stand-in for Google's OAuth2 token endpoint, for the GCS tests of a service-account key.

fake-gcs-server takes any token, so the part of a key's path the emulator cannot play is the
exchange of the key for a token: `TokenServer` serves the JWT bearer grant on 127.0.0.1 (a free
port, a daemon thread, stopped by `stop()`), verifies each assertion's RS256 signature with the
key's public half, and records the issuer of every grant it accepts.
"""

from __future__ import annotations

import base64
import http.server
import json
import secrets
import threading
import urllib.parse
from typing import Any


class TokenServer:
    """Google's OAuth2 token endpoint as a service-account key uses it (the JWT bearer grant),
    on 127.0.0.1: it verifies each assertion's RS256 signature with the key's public half and
    counts the grants, so a test sees the key really signed requests. (fake-gcs-server itself
    takes any token; this is the only part of the key's path the emulator cannot play.)"""

    def __init__(self, public_key: Any) -> None:
        self.public_key = public_key
        self.issuers: list[str] = []
        self.refused = 0
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                length = int(self.headers.get("Content-Length") or 0)
                form = urllib.parse.parse_qs(self.rfile.read(length).decode())
                issuer = server.verify(form.get("assertion", [""])[0])
                if issuer is None:
                    server.refused += 1
                    status, body = 400, {"error": "invalid_grant"}
                else:
                    server.issuers.append(issuer)
                    token = "ya29.test-" + secrets.token_urlsafe(12)
                    status, body = 200, {"access_token": token, "expires_in": 3600}
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.http = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.uri = f"http://127.0.0.1:{self.http.server_address[1]}/token"
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    def verify(self, assertion: str) -> str | None:
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import padding

        try:
            head, claims, signature = assertion.split(".")
            self.public_key.verify(
                base64.urlsafe_b64decode(signature + "=="),
                f"{head}.{claims}".encode(),
                padding.PKCS1v15(),
                hashes.SHA256(),
            )
            return str(json.loads(base64.urlsafe_b64decode(claims + "=="))["iss"])
        except (ValueError, KeyError, InvalidSignature):
            return None

    def stop(self) -> None:
        self.http.shutdown()
        self.http.server_close()


def new_service_account_key() -> tuple[str, Any]:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = private.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    return pem, private.public_key()
