"""The Depot Service reached the way a DataOS 1.x workload reaches it when only `DATAOS_FQDN` is
set: `https://<fqdn>/ds`, over TLS, with the run-as apikey in the `apikey` header. A local
Depot Service serves HTTPS on 127.0.0.1 with a certificate made for the test, which the client
trusts through SSL_CERT_FILE as it would trust a platform's CA; resolution only, as each command
does it before Spark (the whole build from a served depot is test_dataos_resolvers.py's, on
s3_rest). Local profile only: no engine, nothing that differs by profile."""

from __future__ import annotations

import datetime
import ipaddress
import ssl
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from dbt.adapters.lakehouse.exceptions import DepotConfigError
from dbt.adapters.lakehouse.profile.depot import depot_service, resolve_depot
from functional.infra.depot_service import LocalDepotService

pytestmark = pytest.mark.only_profile("local")

APIKEY, ACCESS, SECRET = "runAs-fqdn-4411", "AKIAFQDN0001", "fqdnSecret-88e2"
DEPOT = "fqdn-lake"


def _certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its key, as PEM files."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "service.pem", folder / "service.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


@pytest.fixture(scope="module")
def https_service(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[LocalDepotService, Path]]:
    cert, key = _certificate(tmp_path_factory.mktemp("tls"))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    storage = {"bucket": "lake", "relativePath": "wh", "format": "ICEBERG",
               "icebergCatalogType": "hadoop", "metastoreType": "rest",
               "metastoreUrl": "https://127.0.0.1:1/iceberg", "region": "us-east-1"}  # fmt: skip
    service = LocalDepotService(
        APIKEY,
        {DEPOT: {"type": "S3", "s3": storage}},
        {DEPOT: {"awsaccesskeyid": ACCESS, "awssecretaccesskey": SECRET}},
    ).start(tls=context)
    yield service, cert
    service.stop()


@pytest.fixture(autouse=True)
def _asked_anew(monkeypatch: pytest.MonkeyPatch) -> None:
    # A command keeps the service's answers in memory; each test here is a command of its own.
    monkeypatch.setattr(depot_service, "_ANSWERS", {})


def _resolve(service: LocalDepotService, tmp_path: Path) -> object:
    env = {"DATAOS_FQDN": f"127.0.0.1:{service.port}", "DATAOS_RUN_AS_APIKEY": APIKEY}
    return resolve_depot(depot=f"dataos://{DEPOT}", depots_file=None, warehouse=None,
                         aws_region=None, aws_endpoint=None, env=env, cwd=tmp_path,
                         home=tmp_path)  # fmt: skip


def test_dataos_fqdn_reaches_the_service_over_https(
    https_service: tuple[LocalDepotService, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    service, cert = https_service
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # the platform's CA, as the client trusts it
    before = service.calls.copy()
    depot = _resolve(service, tmp_path)
    assert service.calls - before == {
        f"/ds/api/v2/depots/{DEPOT}": 1,
        f"/ds/api/v2/depots/{DEPOT}/secrets": 1,
    }
    assert service.last_query[f"/ds/api/v2/depots/{DEPOT}/secrets"] == "acl=rw"
    assert depot.source == (  # type: ignore[attr-defined]
        f"DataOS Depot Service at https://127.0.0.1:{service.port}/ds (legacy /api/v2 paths)"
    )
    secrets = depot.secrets  # type: ignore[attr-defined]
    assert secrets.aws_secret_key.reveal() == SECRET
    assert secrets.apikey.reveal() == APIKEY  # the run-as apikey is the REST token


def test_an_untrusted_certificate_is_one_line(
    https_service: tuple[LocalDepotService, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    service, _ = https_service
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "no-such-ca.pem"))
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    with pytest.raises(DepotConfigError) as raised:
        _resolve(service, tmp_path)
    text = raised.value.msg
    assert "\n" not in text and "is unreachable" in text and "DATAOS_FQDN" in text
    assert APIKEY not in text and SECRET not in text
