"""Azurite, Microsoft's Azure Storage emulator (npm), serving the Blob API for the abfss tests.

The version is pinned by `azurite/package.json` and `azurite/package-lock.json` beside this
module (every package with its integrity hash). `install()` runs `npm ci` on a copy of the two
files in the jar cache, keyed by the lock's hash, so node_modules never lands in the repo and
is reinstalled only when the lock changes; scripts/install-tests.sh calls it, a test never does.

`AzuriteServer` runs `azurite-blob` on 127.0.0.1, on a port it picks itself and announces, in
memory, without telemetry, with one storage account of random name and key (given through
AZURITE_ACCOUNTS in its environment, never its command line). Azurite checks Shared Key and
SAS signatures as Azure does; it does not serve ADLS Gen2's DFS API (Azure/Azurite#409, #553).
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import secrets
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from datetime import timezone
from pathlib import Path
from typing import Any

from dbt.adapters.lakehouse.engine.jars import cache_dir
from functional.infra.processes import STARTUP_TIMEOUT_S, ServerError, _stop_process, spawn_logged

PACKAGE_DIR = Path(__file__).with_name("azurite")
_LISTENING = re.compile(r"Azurite Blob service successfully listens on http://127\.0\.0\.1:(\d+)")


def install_dir() -> Path:
    lock = (PACKAGE_DIR / "package-lock.json").read_bytes()
    return cache_dir() / "azurite" / hashlib.sha256(lock).hexdigest()[:16]


def azurite_blob() -> Path | None:
    """The installed `azurite-blob` launcher, or None."""
    path = install_dir() / "node_modules" / ".bin" / "azurite-blob"
    return path if path.is_file() else None


def install() -> Path:
    """`npm ci` of the pinned lock into the cache (a no-op when it is there)."""
    found = azurite_blob()
    if found is not None:
        return found
    npm = shutil.which("npm")
    if npm is None:
        raise ServerError("npm is not on PATH: the abfss tests' Azurite needs Node.js and npm.")
    target = install_dir()
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="npm-", dir=target.parent))
    for name in ("package.json", "package-lock.json"):
        shutil.copy(PACKAGE_DIR / name, scratch / name)
    # ci: exactly the lock, integrity-checked; no install scripts, no dev packages.
    command = [npm, "ci", "--omit=dev", "--ignore-scripts", "--no-audit", "--no-fund"]
    result = subprocess.run(command, cwd=scratch, capture_output=True, text=True, timeout=900)
    if result.returncode != 0:
        shutil.rmtree(scratch, ignore_errors=True)
        raise ServerError(f"npm ci of Azurite failed:\n{result.stderr[-3000:]}")
    try:
        scratch.rename(target)
    except OSError:  # another process installed it meanwhile
        shutil.rmtree(scratch, ignore_errors=True)
    found = azurite_blob()
    assert found is not None
    return found


@dataclass
class AzuriteServer:
    """An Azurite Blob service on 127.0.0.1 with one account and one container."""

    log_dir: Path
    container: str = "lake"
    account: str = field(default_factory=lambda: "lake" + secrets.token_hex(4))
    key: str = field(default_factory=lambda: base64.b64encode(os.urandom(32)).decode())
    port: int = 0
    process: Any = None

    @property
    def endpoint(self) -> str:
        """The account's Blob endpoint, path-style as emulators serve it."""
        return f"http://127.0.0.1:{self.port}/{self.account}"

    @property
    def log_path(self) -> Path:
        return self.log_dir / "azurite.log"

    def container_client(self, container: str | None = None, credential: Any = None) -> Any:
        from azure.core.credentials import AzureNamedKeyCredential
        from azure.storage.blob import ContainerClient

        return ContainerClient(
            self.endpoint,
            container or self.container,
            credential=credential or AzureNamedKeyCredential(self.account, self.key),
            retry_total=0,
        )

    def sas(self, permission: str, expires_in_s: float = 3600) -> str:
        """A service SAS for the container, signed with the account key."""
        from datetime import datetime, timedelta

        from azure.storage.blob import ContainerSasPermissions, generate_container_sas

        return generate_container_sas(
            self.account,
            self.container,
            account_key=self.key,
            permission=ContainerSasPermissions.from_string(permission),
            start=datetime.now(timezone.utc) - timedelta(minutes=5),
            expiry=datetime.now(timezone.utc) + timedelta(seconds=expires_in_s),
        )

    def start(self) -> AzuriteServer:
        launcher = azurite_blob()
        if launcher is None:
            raise ServerError("Azurite is not installed: run `bash scripts/install-tests.sh`.")
        self.log_dir.mkdir(parents=True, exist_ok=True)
        command = [
            str(launcher),
            "--blobHost",
            "127.0.0.1",
            "--blobPort",
            "0",
            "--inMemoryPersistence",
            "--extentMemoryLimit",
            "256",
            "--disableTelemetry",
            # The Python SDK may be newer than the emulator's API versions; the calls used here
            # exist in both.
            "--skipApiVersionCheck",
        ]
        env = {**os.environ, "AZURITE_ACCOUNTS": f"{self.account}:{self.key}"}
        self.process = spawn_logged(command, self.log_path, cwd=self.log_dir, env=env)
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while not self.port:
            if self.process.poll() is not None:
                raise ServerError(f"Azurite exited early:\n{self._tail()}")
            if time.monotonic() > deadline:
                self.stop()
                raise ServerError(f"Azurite did not start:\n{self._tail()}")
            match = _LISTENING.search(self._tail())
            self.port = int(match.group(1)) if match else 0
            time.sleep(0.1)
        self.container_client().create_container()
        return self

    def _tail(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-4000:]
        except OSError:
            return ""

    def stop(self) -> None:
        _stop_process(self.process)
        self.process = None


if __name__ == "__main__":
    print(f"test tool cached: {install()}")
