"""storageType s3: an S3 (or S3-compatible) bucket and prefix, reached as the depot's keys, the
default AWS chain, or an IAM role (profile/depot/aws_role.py).

Spark conf: hadoop-aws s3a under HadoopFileIO, or Iceberg's S3FileIO (conf.py), acting as a
role (role_conf.py); `dbt debug`: bucket, region and permissions with boto3 (preflight.py), as
the role (preflight_role.py); Delta: object_store's AWS options.
"""

from __future__ import annotations

from collections.abc import Mapping

from dbt.adapters.lakehouse.profile.depot.aws_role import S3_FILE_IO
from dbt.adapters.lakehouse.profile.depot.draft import _Draft
from dbt.adapters.lakehouse.profile.depot.model import Depot, S3Storage
from dbt.adapters.lakehouse.profile.depot.storage.kind import (
    HADOOP_FILE_IO,
    ConfParts,
    FileIoProperties,
    PreflightClients,
    StorageKind,
    StorageOptions,
)
from dbt.adapters.lakehouse.profile.depot.storage.report import PreflightReport
from dbt.adapters.lakehouse.profile.depot.storage.s3.conf import (
    claim_bucket,
    put_secret,
    s3a_conf,
    s3fileio_conf,
)
from dbt.adapters.lakehouse.profile.depot.storage.s3.preflight import S3Checks
from dbt.adapters.lakehouse.profile.depot.storage.s3.preflight_role import assume_for_checks
from dbt.adapters.lakehouse.profile.depot.storage.s3.role_conf import (
    BASE_KEY_PROPERTIES,
    SDK_DEFAULT_CHAIN,
    iceberg_role_conf,
    s3a_role_conf,
)
from dbt.adapters.lakehouse.profile.depot.storage.s3.section import (
    SECTION,
    resolve_s3_role,
)
from dbt.adapters.lakehouse.profile.secrets import Secret

_AWS_SECRET_OPTIONS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")


class S3Kind(StorageKind[S3Storage]):
    claim = staticmethod(claim_bucket)
    resolve_role = staticmethod(resolve_s3_role)

    def check_catalog(self, draft: _Draft, problems: list[str], own: bool) -> None:
        # AWS Glue is AWS's: its tables live on S3 (sparkconf.py and add_catalog_conf rely on
        # no resolved Depot breaking this).
        if draft.catalog_type == "glue" and not own and draft.storage_type is not None:
            problems.append(
                f"The glue catalog needs S3 storage; got storageType {draft.storage_type}. "
                "Accepted: storageType s3 with glue, or a rest, hadoop, jdbc or nessie catalog "
                "for other storage."
            )

    def add_catalog_conf(self, depot: Depot, prefix: str, default: bool, parts: ConfParts) -> None:
        storage = self.storage(depot)
        secrets, conf = depot.secrets, parts.conf
        glue = depot.catalog.type == "glue"
        if glue:
            # Glue is found in the bucket's region; its client reads the depot's keys from the
            # JVM's system properties (sparkconf.GLUE_KEY_PROPERTIES says why).
            conf[f"{prefix}.client.region"] = storage.region
            if secrets.aws_access_key and secrets.aws_secret_key:
                for name, prop in BASE_KEY_PROPERTIES.items():
                    put_secret(parts.secret_system, prop, getattr(secrets, name))
            parts.jar_needs.add("aws-sdk-v2")
        io_impl = depot.catalog.properties.get("io-impl", S3_FILE_IO if glue else HADOOP_FILE_IO)
        conf[f"{prefix}.io-impl"] = io_impl
        if io_impl == S3_FILE_IO:
            s3fileio_conf(
                storage, secrets, prefix, conf, parts.secret_catalog, depot.aws_role is None
            )
            parts.jar_needs.add("aws-sdk-v2")
        else:
            # The default depot's settings are the session's; a mounted one's are its
            # catalog's own, so each keeps its own keys and endpoint.
            scope = s3a_conf(
                storage,
                secrets,
                conf,
                parts.secret_hadoop,
                parts.secret_catalog,
                None if default else prefix,
            )
            if depot.aws_role is not None:
                conf.update(s3a_role_conf(depot.aws_role, secrets, scope))
            elif not (secrets.aws_access_key and secrets.aws_secret_key):
                conf[f"{scope}aws.credentials.provider"] = SDK_DEFAULT_CHAIN
            parts.jar_needs.add("s3a")
        # Iceberg's AWS clients (S3FileIO, Glue) act as the role too (role_conf.py).
        if depot.aws_role is not None and (glue or io_impl == S3_FILE_IO):
            role = iceberg_role_conf(depot.aws_role, secrets, prefix, storage.region)
            conf.update(role.conf)
            parts.secret_catalog.update(role.secret)
            parts.secret_system.update(role.system_properties)

    def error_context(self, depot: Depot) -> Mapping[str, str | None]:
        storage = self.storage(depot)
        return {"region": storage.region, "bucket": storage.bucket}

    def preflight(
        self, depot: Depot, clients: PreflightClients, timeout: float, report: PreflightReport
    ) -> list[str]:
        role = depot.aws_role
        if role is None:
            S3Checks(self.storage(depot), depot.secrets, clients.s3, timeout, report).run()
            return []
        # S3 is checked as the role, with its temporary credentials (hidden like the keys).
        secrets = assume_for_checks(role, depot.secrets, clients.sts, timeout, report)
        if secrets is None:
            return []
        checks = S3Checks(self.storage(depot), secrets, clients.s3, timeout, report)
        checks.principal = f"role {role.arn}"
        checks.run()
        return secrets.values()

    def pyiceberg_properties(self, depot: Depot) -> FileIoProperties:
        """pyiceberg's S3 FileIO as s3conf gives the JVM's S3FileIO: region, endpoint, keys."""
        storage, secrets = self.storage(depot), depot.secrets
        public = {"s3.region": storage.region}
        secret: dict[str, Secret] = {}
        if storage.endpoint:
            public["s3.endpoint"] = storage.endpoint
            # Path-style, as s3_conf gives the JVM: S3-compatible stores rarely have bucket DNS.
            public["s3.force-virtual-addressing"] = "false"
        if secrets.aws_access_key and secrets.aws_secret_key:
            secret["s3.access-key-id"] = secrets.aws_access_key
            secret["s3.secret-access-key"] = secrets.aws_secret_key
            if secrets.aws_session_token:
                secret["s3.session-token"] = secrets.aws_session_token
        return public, secret

    def delta_options(self, depot: Depot) -> StorageOptions:
        storage = self.storage(depot)
        options = StorageOptions(_AWS_SECRET_OPTIONS, AWS_REGION=storage.region)
        if storage.endpoint:
            options["AWS_ENDPOINT_URL"] = storage.endpoint
            if storage.endpoint.lower().startswith("http://"):
                options["AWS_ALLOW_HTTP"] = "true"
        for key, secret in zip(
            _AWS_SECRET_OPTIONS,
            (
                depot.secrets.aws_access_key,
                depot.secrets.aws_secret_key,
                depot.secrets.aws_session_token,
            ),
            strict=True,
        ):
            if secret:
                options[key] = secret.reveal()
        return options


KIND = S3Kind("s3", S3Storage, SECTION)
