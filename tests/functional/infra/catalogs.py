"""Catalog servers for tests/functional/lakehouse/catalogs/test_catalogs.py: a real PostgreSQL
(the jdbc catalog's database) and moto's Glue (on the moto server the `s3_server` fixture starts).

PostgreSQL comes from the OS packages (Debian: `postgresql`, which scripts/install-tests.sh installs
when no server binaries are found). `initdb` and `postgres` refuse to run as root, so as root
they run as the `postgres` OS user, in a data folder of a fresh temporary directory that user
owns. The server listens on 127.0.0.1 only (and on a Unix socket in that folder), on a free
port; its superuser connects only over that socket, and the catalog's user, which the server
creates with a random password, logs in over TCP with that password (scram-sha-256). Like the
other test servers it dies with the test process (a parent-death signal) and `stop()` ends it
(a fast shutdown) and removes its folder. The password reaches psql through its environment
or stdin, never a command line.
"""

from __future__ import annotations

import os
import pwd
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from functional.infra.processes import ServerError, dying_with_parent, free_port

STARTUP_TIMEOUT_S = 60.0
_PG_BIN_GLOB = "/usr/lib/postgresql/*/bin"


def postgres_bin_dir() -> Path | None:
    """The folder with `initdb`, `postgres` and `psql` of the newest PostgreSQL server found:
    on PATH, else Debian's /usr/lib/postgresql/<version>/bin. None when there is none."""
    needed = ("initdb", "postgres", "pg_isready", "psql")
    on_path = shutil.which("initdb")
    if on_path:
        # Debian links some of them into /usr/local/bin; the real folder has all of them.
        folder = Path(on_path).resolve().parent
        if all((folder / name).is_file() for name in needed):
            return folder
    candidates = []
    for folder in Path("/").glob(_PG_BIN_GLOB.lstrip("/")):
        if all((folder / name).is_file() for name in needed):
            version = folder.parent.name
            candidates.append((int(version) if version.isdigit() else 0, folder))
    return max(candidates)[1] if candidates else None


def _as_postgres_user() -> dict[str, Any]:
    """Popen arguments that run the server as the `postgres` OS user when we are root."""
    if os.geteuid() != 0:
        return {}
    try:
        account = pwd.getpwnam("postgres")
    except KeyError as exc:
        raise ServerError(
            "PostgreSQL refuses to run as root, and there is no `postgres` OS user to run it "
            "as (Debian's postgresql package creates one)."
        ) from exc
    return {"user": account.pw_uid, "group": account.pw_gid, "extra_groups": []}


@dataclass
class PostgresServer:
    """A PostgreSQL server on 127.0.0.1 with one database and one password-authenticated user
    that owns it (the jdbc catalog's)."""

    bin_dir: Path
    database: str = "iceberg_catalog"
    user: str = "lakehouse_catalog"
    password: str = field(default_factory=lambda: "pg-" + secrets.token_urlsafe(18))
    port: int = 0
    root: Path | None = None
    process: subprocess.Popen[bytes] | None = None

    @property
    def jdbc_url(self) -> str:
        return f"jdbc:postgresql://127.0.0.1:{self.port}/{self.database}"

    @property
    def log_path(self) -> Path:
        assert self.root is not None
        return self.root / "postgres.log"

    def start(self) -> PostgresServer:
        as_postgres = _as_postgres_user()
        # Not under pytest's tmp folders: those are 0700 root's, which the postgres user
        # cannot enter.
        self.root = Path(tempfile.mkdtemp(prefix="lakehouse-pg-"))
        if as_postgres:
            os.chown(self.root, as_postgres["user"], as_postgres["group"])
        data = self.root / "data"
        initdb = subprocess.run(
            [
                str(self.bin_dir / "initdb"),
                "-D",
                str(data),
                "-U",
                "lakehouse_admin",
                "--auth-local=trust",
                "--auth-host=scram-sha-256",
                "--encoding=UTF8",
                "--no-sync",
            ],
            capture_output=True,
            text=True,
            cwd=self.root,
            **as_postgres,
        )
        if initdb.returncode != 0:
            self._remove_root()
            raise ServerError(f"initdb failed:\n{initdb.stdout[-2000:]}{initdb.stderr[-2000:]}")
        self.port = self.port or free_port()
        command = [
            str(self.bin_dir / "postgres"),
            "-D",
            str(data),
            "-p",
            str(self.port),
            "-c",
            "listen_addresses=127.0.0.1",
            "-c",
            f"unix_socket_directories={self.root}",
            "-c",
            "fsync=off",
            "-c",
            "max_connections=50",
        ]
        log = os.open(self.log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        if as_postgres:
            os.chown(self.log_path, as_postgres["user"], as_postgres["group"])
        try:
            self.process = subprocess.Popen(
                # SIGINT: PostgreSQL's fast shutdown.
                dying_with_parent(command, signal.SIGINT),
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=self.root,
                **as_postgres,
            )
        finally:
            os.close(log)
        self._wait_until_ready()
        # Over the superuser's Unix socket; the password goes through stdin.
        self.admin_sql(
            f"CREATE ROLE {self.user} LOGIN PASSWORD '{self.password}';\n"
            f"CREATE DATABASE {self.database} OWNER {self.user};\n"
        )
        return self

    def _wait_until_ready(self) -> None:
        assert self.process is not None
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while True:
            if self.process.poll() is not None:
                text = self.log_path.read_text(errors="replace")[-3000:]
                self.stop()
                raise ServerError(f"postgres exited early:\n{text}")
            ready = subprocess.run(
                [str(self.bin_dir / "pg_isready"), "-h", "127.0.0.1", "-p", str(self.port)],
                capture_output=True,
            )
            if ready.returncode == 0:
                return
            if time.monotonic() > deadline:
                text = self.log_path.read_text(errors="replace")[-3000:]
                self.stop()
                raise ServerError(f"postgres not ready on 127.0.0.1:{self.port}:\n{text}")
            time.sleep(0.2)

    def _psql(self, sql: str, *, admin: bool, database: str) -> str:
        if admin:
            host, user, env = str(self.root), "lakehouse_admin", dict(os.environ)
        else:
            host, user = "127.0.0.1", self.user
            env = {**os.environ, "PGPASSWORD": self.password}
        result = subprocess.run(
            [
                str(self.bin_dir / "psql"),
                "-X",
                "-q",
                "-A",
                "-t",
                "-F",
                "|",
                "-v",
                "ON_ERROR_STOP=1",
                "-h",
                host,
                "-p",
                str(self.port),
                "-U",
                user,
                "-d",
                database,
            ],
            input=sql,
            capture_output=True,
            text=True,
            env=env,
        )
        if result.returncode != 0:
            # The statement may hold the password (CREATE ROLE): show psql's error only.
            error = result.stderr.replace(self.password, "****")
            raise ServerError(f"psql failed: {error.strip()}")
        return result.stdout

    def admin_sql(self, sql: str) -> str:
        """Run SQL as the server's superuser (Unix socket, trust)."""
        return self._psql(sql, admin=True, database="postgres")

    def query(self, sql: str) -> list[tuple[str, ...]]:
        """Rows of a query in the catalog database, as the catalog's user over TCP with its
        password (so it also proves password authentication works)."""
        text = self._psql(sql, admin=False, database=self.database)
        return [tuple(line.split("|")) for line in text.splitlines() if line]

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGINT)  # fast shutdown: ends client sessions
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)
        self._remove_root()

    def _remove_root(self) -> None:
        if self.root is not None:
            shutil.rmtree(self.root, ignore_errors=True)


# --- Glue (moto) -------------------------------------------------------------------------------


def glue_client(s3: Any, region: str | None = None) -> Any:
    """A boto3 Glue client on the moto server behind `s3` (moto answers every AWS service on
    its one endpoint), in `region` (moto keeps one Glue catalog per region)."""
    import boto3

    return boto3.client(
        "glue",
        endpoint_url=s3.endpoint,
        region_name=region or s3.region,
        aws_access_key_id=s3.access_key,
        aws_secret_access_key=s3.secret_key,
    )
