"""A local DataOS Depot Service on 127.0.0.1 (stdlib http.server), serving the public shapes
(docs/profiles-and-depots.md, "Inside DataOS"):

- `GET /ds/api/v2/depots/{depot}`: the 1.x depot JSON (`{name, type, s3{...}}`);
- `GET /ds/api/v2/depots/{depot}/secrets?acl=r|rw`: `{id, data: [{key, base64Value}]}`;
- `GET /ds/api/v2/tenants/{tenant}/resolve?address=dataos://{depot}`: the tenant-scoped answer;
- `GET /ds/api/v2/tenants/{tenant}/depots/{depot}/secrets?purpose=r|rw`.

Every request must carry header `apikey` (401 otherwise). `calls` counts requests by path.
`fault` makes every answer one fault: "slow" (sleeps `delay` seconds), "401", "403", "404",
"malformed" (a body that is not JSON), "bad_secret" (a secret that is not base64).
"""

from __future__ import annotations

import base64
import json
import ssl
import threading
import time
from collections import Counter
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit


def secret_payload(values: Mapping[str, str], *, as_json: bool = False) -> dict[str, Any]:
    """A Depot Service secret: one item whose base64Value is `k=v` lines (or JSON)."""
    text = json.dumps(dict(values)) if as_json else "\n".join(f"{k}={v}" for k, v in values.items())
    encoded = base64.b64encode(text.encode()).decode()
    return {"id": "tenant:secret", "data": [{"key": "credentials", "base64Value": encoded}]}


class LocalDepotService:
    def __init__(
        self,
        apikey: str,
        depots: Mapping[str, Mapping[str, Any]],
        secrets: Mapping[str, Mapping[str, str]],
        *,
        secrets_as_json: bool = False,
    ) -> None:
        self.apikey = apikey
        self.depots = dict(depots)
        self.secrets = dict(secrets)
        self.secrets_as_json = secrets_as_json
        self.fault: str | None = None
        self.delay = 3.0
        self.calls: Counter[str] = Counter()
        # path -> the query string of its latest request (e.g. the purpose asked for).
        self.last_query: dict[str, str] = {}
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._tls = False

    @property
    def port(self) -> int:
        assert self._server is not None
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"{'https' if self._tls else 'http'}://127.0.0.1:{self.port}/ds"

    def start(self, tls: ssl.SSLContext | None = None) -> LocalDepotService:
        """Serve on a free port of 127.0.0.1; over HTTPS with `tls` (a server context)."""
        service = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                service._answer(self)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                return  # quiet: the tests read `calls`

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        if tls is not None:
            self._server.socket = tls.wrap_socket(self._server.socket, server_side=True)
            self._tls = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def _answer(self, request: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(request.path)
        with self._lock:
            self.calls[parts.path] += 1
            self.last_query[parts.path] = parts.query
        if self.fault == "slow":
            time.sleep(self.delay)
        if request.headers.get("apikey") != self.apikey:
            return _send(request, 401, {"message": "invalid apikey"})
        if self.fault in ("401", "403", "404"):
            return _send(request, int(self.fault), {"message": self.fault})
        if self.fault == "malformed":
            return _send_raw(request, 200, b"<html>gateway says hello</html>")
        segments = [unquote(s) for s in parts.path.split("/") if s]
        query = parse_qs(parts.query)
        answer = self._route(segments, query)
        if answer is None:
            return _send(request, 404, {"message": "not found"})
        return _send(request, 200, answer)

    def _route(self, segments: list[str], query: Mapping[str, list[str]]) -> Any | None:
        # /ds/api/v2/depots/{d}[/secrets]  or  /ds/api/v2/tenants/{t}/(resolve|depots/{d}/secrets)
        if segments[:3] != ["ds", "api", "v2"]:
            return None
        rest = segments[3:]
        if rest[:1] == ["tenants"] and len(rest) >= 3:
            if rest[2] == "resolve":
                address = (query.get("address") or [""])[0]
                name = address.removeprefix("dataos://").split(":")[0].split("?")[0]
                depot = self.depots.get(name)
                if depot is None:
                    return None
                # The SDK's model of the answer (dataos-sdk-py 1.0.6, tenant resolve): the depot's
                # storage block beside `format`, its secrets' references and the resolution.
                secrets = [{"id": f"{rest[1]}:{name}-rw", "purpose": "rw", "type": "key-value",
                            "provider": "dataos"}]  # fmt: skip
                return {"depot": name, "format": "ICEBERG", "secrets": secrets,
                        "resolution": {"depot": name, "collection": None, "dataset": None},
                        **depot}  # fmt: skip
            if rest[2] == "depots" and len(rest) == 5 and rest[4] == "secrets":
                return self._secret(rest[3])
            return None
        if rest[:1] == ["depots"] and len(rest) == 2:
            depot = self.depots.get(rest[1])
            return None if depot is None else {"name": rest[1], **depot}
        if rest[:1] == ["depots"] and len(rest) == 3 and rest[2] == "secrets":
            return self._secret(rest[1])
        return None

    def _secret(self, name: str) -> Any | None:
        values = self.secrets.get(name)
        if values is None:
            return None
        if self.fault == "bad_secret":
            return {"id": "x", "data": [{"key": "credentials", "base64Value": "%%not base64%%"}]}
        return secret_payload(values, as_json=self.secrets_as_json)


def _send(request: BaseHTTPRequestHandler, status: int, body: Any) -> None:
    _send_raw(request, status, json.dumps(body).encode())


def _send_raw(request: BaseHTTPRequestHandler, status: int, payload: bytes) -> None:
    try:
        request.send_response(status)
        request.send_header("Content-Type", "application/json")
        request.send_header("Content-Length", str(len(payload)))
        request.end_headers()
        request.wfile.write(payload)
    except (BrokenPipeError, ConnectionResetError):
        pass  # the client gave up (a slow answer past its timeout)
