"""The Spark and Iceberg settings of a GCS depot's catalog (storageType gcs).

Two routes to a `gs://` warehouse, as for S3 (docs/runtime.md, "GCS"):
- default: Iceberg's HadoopFileIO over Hadoop's GCS connector (`gcs-connector`, hadoop3,
  shaded; jar set `gcs-connector`). It takes a service-account key as values
  (`fs.gs.auth.service.account.email` / `.private.key.id` / `.private.key`), so the key never
  touches a file, and it serves every catalog type, the hadoop catalog's rename commits
  included.
- `catalog.properties.io-impl: org.apache.iceberg.gcp.gcs.GCSFileIO`: Iceberg's own GCS client
  (its classes are in the runtime jar, the Google SDK in `iceberg-gcp-bundle`; jar set
  `gcp-bundle`). Iceberg 1.10's GCSFileIO takes no service-account key (only an OAuth2 token or
  the default chain), so a depot with a key is refused on this route.
With an emulator endpoint and no key, both run unauthenticated, as emulators expect. Secrets go
to the runtime-only conf (never SparkConf), like the S3 keys (storage/s3/conf.py).
"""

from __future__ import annotations

from dbt.adapters.lakehouse.exceptions import DepotConfigError
from dbt.adapters.lakehouse.profile.depot.model import Depot, GcsStorage
from dbt.adapters.lakehouse.profile.depot.storage.gcs.section import parsed_key
from dbt.adapters.lakehouse.profile.depot.storage.kind import HADOOP_FILE_IO, ConfParts

GCS_FILE_IO = "org.apache.iceberg.gcp.gcs.GCSFileIO"
GCS_FILESYSTEM = "com.google.cloud.hadoop.fs.gcs.GoogleHadoopFileSystem"
GCS_ABSTRACT_FILESYSTEM = "com.google.cloud.hadoop.fs.gcs.GoogleHadoopFS"
# A dead endpoint fails within seconds (the connector's default: 10 retries, 20 s timeouts).
GCS_LIMITS = {
    "http.connect-timeout": "5000",
    "http.read-timeout": "60000",
    "http.max.retry": "3",
}
KEY_SETTINGS = {
    "client_email": "auth.service.account.email",
    "private_key_id": "auth.service.account.private.key.id",
    "private_key": "auth.service.account.private.key",
}


def gcs_catalog_conf(depot: Depot, prefix: str, default: bool, parts: ConfParts) -> None:
    """Adds the catalog's GCS settings and the jar sets they need to the plan's parts.

    The default depot's connector settings are the session's Hadoop conf; a mounted one's are
    its catalog's own (`<prefix>.hadoop.fs.gs.*`), so each depot keeps its key and endpoint.
    """
    storage = depot.storage
    assert isinstance(storage, GcsStorage)  # the registry hands it GCS depots only
    conf, needs = parts.conf, parts.jar_needs
    io_impl = depot.catalog.properties.get("io-impl", HADOOP_FILE_IO)
    conf[f"{prefix}.io-impl"] = io_impl
    key = depot.secrets.gcs_key_json
    if io_impl == GCS_FILE_IO:
        if key:
            raise DepotConfigError(
                f"Depot '{depot.name}' sets catalog.properties.io-impl: {GCS_FILE_IO} and "
                "secrets.gcs_key_json; Iceberg 1.10's GCSFileIO takes no service-account key "
                "(only gcs.oauth2.token or the default Google chain). Accepted: drop io-impl "
                "(the default, HadoopFileIO over Hadoop's GCS connector, takes the key), or "
                "drop gcs_key_json and set GOOGLE_APPLICATION_CREDENTIALS=<key file>."
            )
        needs.add("gcp-bundle")
        if storage.project:
            conf[f"{prefix}.gcs.project-id"] = storage.project
        if storage.endpoint:
            conf[f"{prefix}.gcs.service.host"] = storage.endpoint
            conf[f"{prefix}.gcs.no-auth"] = "true"
    if io_impl != GCS_FILE_IO or depot.catalog.type == "hadoop":
        # The hadoop catalog commits by renaming files through Hadoop's FileSystem, whatever
        # the FileIO of the table files.
        needs.add("gcs-connector")
        _connector(storage, key.reveal() if key else None, prefix, default, parts)


def _connector(
    storage: GcsStorage, key_json: str | None, prefix: str, default: bool, parts: ConfParts
) -> None:
    conf = parts.conf
    if default:
        scope, secret_scope, secret_target = "spark.hadoop.fs.gs.", "fs.gs.", parts.secret_hadoop
    else:
        scope = secret_scope = f"{prefix}.hadoop.fs.gs."
        secret_target = parts.secret_catalog
    conf["spark.hadoop.fs.gs.impl"] = GCS_FILESYSTEM
    conf["spark.hadoop.fs.AbstractFileSystem.gs.impl"] = GCS_ABSTRACT_FILESYSTEM
    conf.update({f"{scope}{name}": value for name, value in GCS_LIMITS.items()})
    if storage.project:
        conf[f"{scope}project.id"] = storage.project
    if storage.endpoint:
        conf[f"{scope}storage.root.url"] = storage.endpoint
        # Emulators (fake-gcs-server) answer the JSON API's atomic moveTo with 400; copy and
        # delete is what the connector does without it.
        conf[f"{scope}operation.move.enable"] = "false"
    if key_json:
        conf[f"{scope}auth.service.account.enable"] = "true"
        fields = parsed_key(key_json)
        for field, setting in KEY_SETTINGS.items():
            secret_target[f"{secret_scope}{setting}"] = fields[field]
        if "token_uri" in fields:
            conf[f"{scope}token.server.url"] = fields["token_uri"]
    elif storage.endpoint:
        conf[f"{scope}auth.service.account.enable"] = "false"
        conf[f"{scope}auth.null.enable"] = "true"
    if not default:
        _no_inherited_settings(storage, key_json, scope, conf)
    # No key and no emulator: the connector's default chain (GOOGLE_APPLICATION_CREDENTIALS,
    # then the metadata server).


# What a mounted depot's catalog would otherwise take from the session's Hadoop conf, that is
# from the profile's own GCS depot: its emulator, its unauthenticated mode, its key.
GCS_API_ROOT = "https://storage.googleapis.com/"
GOOGLE_TOKEN_URI = "https://oauth2.googleapis.com/token"


def _no_inherited_settings(
    storage: GcsStorage, key_json: str | None, scope: str, conf: dict[str, str]
) -> None:
    """A catalog's `hadoop.*` settings override the session's; what it leaves unset it inherits.
    So a mounted depot states its endpoint and its kind of credentials in full, and without a
    key of its own blanks the key settings (the connector treats empty as unset)."""
    conf.setdefault(f"{scope}storage.root.url", GCS_API_ROOT)
    conf.setdefault(f"{scope}operation.move.enable", "true")
    conf.setdefault(f"{scope}auth.null.enable", "false")
    conf.setdefault(f"{scope}auth.service.account.enable", "true")
    conf.setdefault(f"{scope}token.server.url", GOOGLE_TOKEN_URI)
    if not key_json:
        for setting in KEY_SETTINGS.values():
            conf[f"{scope}{setting}"] = ""


def claim_gcs_bucket(owners: dict[str, tuple[str, Depot]], catalog_name: str, depot: Depot) -> None:
    """Hadoop caches one GCS client per bucket, built from the settings of whichever catalog
    reached it first: two depots on one bucket must agree on endpoint and key."""
    storage = depot.storage
    assert isinstance(storage, GcsStorage)  # the registry hands it GCS depots only
    earlier = owners.setdefault(storage.bucket, (catalog_name, depot))
    other_name, other = earlier
    other_storage = other.storage
    assert isinstance(other_storage, GcsStorage)
    if other is depot or (
        other_storage.endpoint == storage.endpoint
        and other.secrets.gcs_key_json == depot.secrets.gcs_key_json
    ):
        return
    raise DepotConfigError(
        f"Depots '{other.name}' (catalog {other_name}) and '{depot.name}' (catalog "
        f"{catalog_name}) both use GCS bucket '{storage.bucket}' with a different key or "
        "endpoint; Hadoop keeps one GCS client per bucket, so one bucket has one set. "
        "Accepted: depots on different buckets, or the same key and endpoint for a shared bucket."
    )
