"""fake-gcs-server, the GCS emulator behind the GCS depot tests, and the REST catalog on it.

The emulator is a Go program built from the Go module proxy: `fake_gcs_server/go.mod` and its
`go.sum` beside this module pin the version and every dependency's checksum, and
`python -m functional.infra.gcs` (scripts/install-tests.sh) runs `go build` into the jar cache,
`<cache>/tools/fake-gcs-server-<hash of go.mod + go.sum>`, so a version bump rebuilds and the
binary is never committed. Go fetches a newer toolchain through the same proxy when the
installed one is older than go.mod's `go` line.

`FakeGcsServer` runs it on 127.0.0.1 on a free port (in-memory backend, plain HTTP, upload
URLs pointing back at that port), creates the test bucket through the JSON API, and lists
objects with it; it dies with the test process and `stop()` ends it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from dbt.adapters.lakehouse.engine.jars import GCS_CONNECTOR_JARS, cache_dir
from functional.infra.processes import ServerError, _stop_process, _tail, free_port, spawn_logged
from functional.infra.servers import RestCatalog

MODULE_DIR = Path(__file__).with_name("fake_gcs_server")
PACKAGE = "github.com/fsouza/fake-gcs-server"
STARTUP_TIMEOUT_S = 30.0


def binary_path() -> Path:
    digest = hashlib.sha256()
    for name in ("go.mod", "go.sum"):
        digest.update((MODULE_DIR / name).read_bytes())
    return cache_dir() / "tools" / f"fake-gcs-server-{digest.hexdigest()[:16]}"


def build() -> Path:
    """The emulator's binary, built with `go build` from the pinned module on first use."""
    target = binary_path()
    if target.is_file():
        return target
    go = shutil.which("go") or (
        "/usr/local/go/bin/go" if Path("/usr/local/go/bin/go").is_file() else None
    )
    if go is None:
        raise ServerError(
            "`go` is not installed: the GCS tests build fake-gcs-server from the Go module "
            "proxy (install Go, https://go.dev/dl/, or Debian's golang-go, then run "
            "`bash scripts/install-tests.sh`)."
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="fake-gcs-", dir=target.parent))
    # go.sum must already hold every checksum: nothing unpinned is fetched.
    env = {**os.environ, "GOFLAGS": "-mod=readonly"}
    result = subprocess.run(
        [go, "build", "-o", str(scratch / "fake-gcs-server"), PACKAGE],
        cwd=MODULE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    if result.returncode != 0:
        shutil.rmtree(scratch, ignore_errors=True)
        raise ServerError(f"go build {PACKAGE} failed:\n{result.stderr[-4000:]}")
    (scratch / "fake-gcs-server").replace(target)  # atomic; another worker may have built it
    shutil.rmtree(scratch, ignore_errors=True)
    return target


@dataclass
class FakeGcsServer:
    """fake-gcs-server on 127.0.0.1 with one bucket; no authentication (emulators take none)."""

    log_dir: Path
    bucket: str = "lakehouse-gcs-test"
    project: str = "lakehouse-test"
    port: int = 0
    process: subprocess.Popen[bytes] | None = None

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.log_dir / "fake-gcs-server.log"

    def start(self) -> FakeGcsServer:
        binary = build()
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.port = self.port or free_port()
        command = [
            str(binary),
            "-scheme", "http",
            "-host", "127.0.0.1",
            "-port", str(self.port),
            "-backend", "memory",
            "-external-url", self.endpoint,
            "-public-host", f"127.0.0.1:{self.port}",
            "-log-level", "warn",
        ]  # fmt: skip
        self.process = spawn_logged(command, self.log_path)
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while True:
            if self.process.poll() is not None:
                raise ServerError(f"fake-gcs-server exited early:\n{_tail(self.log_path)}")
            try:
                self.create_bucket(self.bucket)
                return self
            except OSError:
                if time.monotonic() > deadline:
                    self.stop()
                    raise ServerError(
                        f"fake-gcs-server did not start:\n{_tail(self.log_path)}"
                    ) from None
                time.sleep(0.1)

    def _call(self, method: str, path: str, body: dict | None = None) -> dict:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            f"{self.endpoint}{path}",
            data=data,
            method=method,
            headers={"Content-Type": "application/json"},
        )
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(request, timeout=10) as response:
            text = response.read()
        return json.loads(text) if text.strip() else {}

    def create_bucket(self, name: str) -> None:
        try:
            self._call("POST", f"/storage/v1/b?project={self.project}", {"name": name})
        except urllib.error.HTTPError as exc:
            if exc.code != 409:  # already there
                raise

    def object_names(self, prefix: str = "", bucket: str | None = None) -> list[str]:
        """Every object's name under `prefix`, as the emulator holds them."""
        names: list[str] = []
        token = ""
        while True:
            path = (
                f"/storage/v1/b/{quote(bucket or self.bucket, safe='')}/o"
                f"?prefix={quote(prefix, safe='')}&maxResults=1000"
                + (f"&pageToken={quote(token, safe='')}" if token else "")
            )
            answer = self._call("GET", path)
            names += [item["name"] for item in answer.get("items", [])]
            token = answer.get("nextPageToken", "")
            if not token:
                return sorted(names)

    def stop(self) -> None:
        _stop_process(self.process)
        self.process = None


@dataclass
class GcsRestCatalog(RestCatalog):
    """The tests' REST catalog server (RestCatalogServer.java) with its warehouse on the
    emulator: table metadata written by the server through Hadoop's GCS connector."""

    gcs: FakeGcsServer | None = None

    def server_env(self) -> dict[str, str]:
        assert self.gcs is not None
        return {
            "REST_CATALOG_TOKEN": self.token,
            "REST_CATALOG_WAREHOUSE": self.warehouse,
            "GCS_ROOT_URL": self.gcs.endpoint,
            "GCS_PROJECT": self.gcs.project,
        }

    def extra_classpath(self) -> list[Path]:
        return GCS_CONNECTOR_JARS.install()


if __name__ == "__main__":
    # scripts/install-tests.sh: build the emulator so that no test builds anything.
    try:
        print(f"test tool cached: {build()}")
    except ServerError as exc:
        print(f"note: {exc}", file=sys.stderr)
