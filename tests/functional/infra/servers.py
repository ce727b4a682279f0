"""The servers behind the `s3_rest` test profile: a moto S3 server and an Iceberg REST catalog,
and S3Proxy, an S3 server that authenticates every request (for tests that need a refused key).

Both run as child processes bound to 127.0.0.1 on free ports, are waited for until they answer,
and are stopped by `stop()` (the conftest's session fixtures call it). The REST catalog is
RestCatalogServer.java beside this file, compiled with javac on first use into the jar cache,
keyed by the source's hash and the classpath, so it is recompiled only when either changes.
Secrets reach the children through their environment, never their command line.
How the children are started, waited for and stopped: processes.py.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dbt.adapters.lakehouse.engine.jars import (
    H2_JARS,
    S3A_JARS,
    CachedJarSet,
    cache_dir,
    iceberg_runtime_jar,
    maven_jar,
)
from functional.infra.processes import (
    STARTUP_TIMEOUT_S,
    ServerError,
    _stop_process,
    _tail,
    free_port,
    spawn_logged,
)

SOURCE = Path(__file__).with_name("RestCatalogServer.java")
MAIN_CLASS = "RestCatalogServer"
READY_PREFIX = "rest-catalog listening on 127.0.0.1:"


# --- S3 (moto) -------------------------------------------------------------------------------


@dataclass
class S3Server:
    """A moto S3 server on 127.0.0.1 with one bucket, and the keys to reach it.

    moto accepts any key pair; these are random per server so a test can grep for them.
    """

    log_dir: Path
    bucket: str = "lakehouse-test"
    region: str = "us-east-1"
    access_key: str = field(default_factory=lambda: "AKIATEST" + secrets.token_hex(6).upper())
    secret_key: str = field(default_factory=lambda: "s3secret-" + secrets.token_urlsafe(18))
    port: int = 0
    process: subprocess.Popen[bytes] | None = None

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.log_dir / "moto.log"

    def client(self, **overrides: Any) -> Any:
        """A boto3 S3 client for this server; keyword arguments override the defaults."""
        import boto3

        options: dict[str, Any] = {
            "endpoint_url": self.endpoint,
            "region_name": self.region,
            "aws_access_key_id": self.access_key,
            "aws_secret_access_key": self.secret_key,
        }
        options.update(overrides)
        return boto3.client("s3", **options)

    def start(self) -> S3Server:
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.port = self.port or free_port()
        command = [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)]
        self.process = spawn_logged(command, self.log_path)
        self._wait_until_answering("moto server")
        return self

    def _wait_until_answering(self, name: str) -> None:
        """Wait until the server lists buckets, then create this server's bucket."""
        assert self.process is not None
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while True:
            if self.process.poll() is not None:
                raise ServerError(f"{name} exited early:\n{_tail(self.log_path)}")
            try:
                self.client().list_buckets()
                break
            except Exception as exc:
                if time.monotonic() > deadline:
                    self.stop()
                    raise ServerError(
                        f"{name} not answering on {self.endpoint}: {exc}\n" + _tail(self.log_path)
                    ) from exc
                time.sleep(0.2)
        self.client().create_bucket(Bucket=self.bucket)

    def stop(self) -> None:
        _stop_process(self.process)
        self.process = None


# --- S3 that checks keys (S3Proxy) ------------------------------------------------------------

# moto authenticates only botocore-style signatures (it re-signs with botocore's header choice
# and refuses the JVM's AWS SDK v1 even with the right keys); S3Proxy verifies SigV4 as AWS
# does, for one key pair per server. Fetched by scripts/install-tests.sh, never by a test.
S3PROXY_JARS = CachedJarSet(
    need="s3proxy",
    sources=(
        maven_jar(
            "org.gaul",
            "s3proxy",
            "2.9.0",
            "238f813ff9d6d295273f809f383d31307d88d8f56acc40109b68a5d49186a0eb",
            "LAKEHOUSE_S3PROXY_JAR",
            classifier="jar-with-dependencies",
        ),
    ),
)


@dataclass
class AuthS3Server(S3Server):
    """An S3Proxy server on 127.0.0.1 (files on local disk) that accepts only its own key pair."""

    @property
    def log_path(self) -> Path:
        return self.log_dir / "s3proxy.log"

    def client(self, **overrides: Any) -> Any:
        from botocore.config import Config

        # S3Proxy 2.9 refuses the newer botocore's default request checksums (NotImplemented).
        checksums = Config(
            request_checksum_calculation="when_required",
            response_checksum_validation="when_required",
        )
        return super().client(**{"config": checksums, **overrides})

    def start(self) -> AuthS3Server:
        located = S3PROXY_JARS.locate()
        if located is None:
            raise ServerError(
                "The S3Proxy jar is not in the cache: run `bash scripts/install-tests.sh`."
            )
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.port = self.port or free_port()
        data = self.log_dir / "s3proxy-data"
        data.mkdir(exist_ok=True)
        settings = self.log_dir / "s3proxy.properties"
        settings.touch(mode=0o600)  # it holds the secret key: not on the command line
        settings.write_text(
            f"s3proxy.endpoint=http://127.0.0.1:{self.port}\n"
            "s3proxy.authorization=aws-v2-or-v4\n"
            f"s3proxy.identity={self.access_key}\n"
            f"s3proxy.credential={self.secret_key}\n"
            "jclouds.provider=filesystem-nio2\n"
            f"jclouds.filesystem.basedir={data}\n"
        )
        java = shutil.which("java") or "java"
        command = [java, "-Xmx256m", "-jar", str(located[0]), "--properties", str(settings)]
        self.process = spawn_logged(command, self.log_path)
        self._wait_until_answering("S3Proxy")
        return self


# --- the Iceberg REST catalog ----------------------------------------------------------------


def pyspark_jars() -> Path:
    """The classpath entry for every jar of the pyspark wheel (Spark, Hadoop client, Scala)."""
    import pyspark

    return Path(pyspark.__file__).parent / "jars" / "*"


def server_classpath() -> list[Path]:
    """Iceberg (catalog + REST classes), Spark's Hadoop client, H2 and s3a (table files)."""
    jars = [iceberg_runtime_jar(), *H2_JARS.install(), *S3A_JARS.install()]
    return [*jars, pyspark_jars()]


def compiled_java(source: Path, classpath: list[Path], cache_name: str) -> Path:
    """The folder holding the classes of `source` (a one-file Java program beside this module),
    compiled once per source and classpath into `<cache>/<cache_name>/<hash>`."""
    digest = hashlib.sha256(source.read_bytes())
    digest.update(os.pathsep.join(str(p) for p in classpath).encode())
    target = cache_dir() / cache_name / digest.hexdigest()[:16]
    if (target / f"{source.stem}.class").is_file():
        return target
    java_home = os.environ.get("JAVA_HOME")
    javac = shutil.which("javac") or (
        str(Path(java_home) / "bin" / "javac")
        if java_home and (Path(java_home) / "bin" / "javac").is_file()
        else None
    )
    if javac is None:
        raise ServerError(f"javac is not on PATH: the test server {source.stem} needs a JDK 17.")
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="build-", dir=target.parent))
    result = subprocess.run(
        [javac, "-d", str(scratch), "-cp", os.pathsep.join(map(str, classpath)), str(source)],
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        shutil.rmtree(scratch, ignore_errors=True)
        raise ServerError(f"javac {source.name} failed:\n{result.stderr[-4000:]}")
    try:
        scratch.rename(target)  # atomic; another test worker may have won the race
    except OSError:
        shutil.rmtree(scratch, ignore_errors=True)
    return target


def compiled_server(classpath: list[Path]) -> Path:
    """The folder holding RestCatalogServer.class."""
    return compiled_java(SOURCE, classpath, "rest-catalog")


@dataclass
class RestCatalog:
    """An Iceberg REST catalog server whose tables live under `warehouse` on `s3` (or on
    another store a subclass configures: infra/gcs.py)."""

    s3: S3Server | None
    log_dir: Path
    warehouse: str
    token: str = field(default_factory=lambda: "rest-token-" + secrets.token_urlsafe(18))
    port: int = 0
    process: subprocess.Popen[bytes] | None = None

    @property
    def uri(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log_path(self) -> Path:
        """The server's access log: one `METHOD /path STATUS` line per request."""
        return self.log_dir / "rest-catalog.log"

    def status_counts(self) -> dict[int, int]:
        counts: dict[int, int] = {}
        for line in self.log_path.read_text(errors="replace").splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[2].isdigit():
                counts[int(parts[2])] = counts.get(int(parts[2]), 0) + 1
        return counts

    def server_env(self) -> dict[str, str]:
        """The server's settings and its storage's keys (through the environment, never argv)."""
        assert self.s3 is not None
        return {
            "REST_CATALOG_TOKEN": self.token,
            "REST_CATALOG_WAREHOUSE": self.warehouse,
            "S3_ENDPOINT": self.s3.endpoint,
            "AWS_ACCESS_KEY_ID": self.s3.access_key,
            "AWS_SECRET_ACCESS_KEY": self.s3.secret_key,
            "AWS_REGION": self.s3.region,
        }

    def extra_classpath(self) -> list[Path]:
        """Jars the server runs with beyond those it is compiled against (another storage's)."""
        return []

    def start(self) -> RestCatalog:
        self.log_dir.mkdir(parents=True, exist_ok=True)
        classpath = server_classpath()
        classes = compiled_server(classpath)
        java = shutil.which("java") or "java"
        env = {**os.environ, **self.server_env()}
        command = [
            java,
            "-Xmx384m",
            "-cp",
            os.pathsep.join(map(str, [classes, *classpath, *self.extra_classpath()])),
            MAIN_CLASS,
            str(self.port),
        ]
        self.process = spawn_logged(command, self.log_path, cwd=self.log_dir, env=env)
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while True:
            if self.process.poll() is not None:
                raise ServerError(f"REST catalog exited early:\n{_tail(self.log_path)}")
            port = self._announced_port()
            if port:
                self.port = port
                return self
            if time.monotonic() > deadline:
                self.stop()
                raise ServerError(f"REST catalog did not start:\n{_tail(self.log_path)}")
            time.sleep(0.1)

    def _announced_port(self) -> int | None:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return None
        for line in text.splitlines():
            if line.startswith(READY_PREFIX):
                return int(line[len(READY_PREFIX) :].strip())
        return None

    def stop(self) -> None:
        _stop_process(self.process)
        self.process = None


if __name__ == "__main__":
    # scripts/install-tests.sh: fetch the test servers' jars so that no test downloads anything.
    from functional.infra.connect import SPARK_CONNECT_JARS
    from functional.infra.nessie import NESSIE_JARS

    for jar_set in (S3PROXY_JARS, NESSIE_JARS, SPARK_CONNECT_JARS):
        for path in jar_set.install():
            print(f"test tool cached: {path}")
