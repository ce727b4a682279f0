"""Engine error texts captured from the real stack (Spark 3.5 + Iceberg 1.10.2 + s3a against
moto with IAM auth on, and the REST client against a closed port and a 401 server)."""

HEAD_403 = (
    "java.io.UncheckedIOException: java.nio.file.AccessDeniedException: s3://bkt/wh/s: "
    "getFileStatus on s3://bkt/wh/s: com.amazonaws.services.s3.model.AmazonS3Exception: "
    "FORBIDDEN (Service: Amazon S3; Status Code: 403; Error Code: 403 FORBIDDEN; Request ID: "
    "null; S3 Extended Request ID: null; Proxy: null), S3 Extended Request ID: null:403 FORBIDDEN"
)
# The same request on the 4.1 line (Hadoop 3.4, AWS SDK v2).
HEAD_403_SDK_V2 = (
    "java.nio.file.AccessDeniedException: s3://bkt/wh/s: getFileStatus on s3://bkt/wh/s: "
    "software.amazon.awssdk.services.s3.model.S3Exception: FORBIDDEN (Service: S3, Status Code: "
    "403, Request ID: QJArLET4eu):null"
)
PUT_403 = (
    "org.apache.spark.SparkException: Job aborted.\n  caused by: "
    "java.nio.file.AccessDeniedException: s3://bkt/wh/s/t/data/00000-1.parquet: PUT 0-byte "
    "object  on s3://bkt/wh/s/t/data/00000-1.parquet: com.amazonaws.services.s3.model."
    "AmazonS3Exception: Access Denied (Service: Amazon S3; Status Code: 403; Error Code: "
    "AccessDenied; Request ID: 1)"
)
SIGNATURE_403 = PUT_403.replace("Error Code: AccessDenied", "Error Code: SignatureDoesNotMatch")
REST_DOWN = (
    "org.apache.iceberg.exceptions.RESTException: Error occurred while processing GET request\n"
    "  caused by: org.apache.iceberg.shaded.org.apache.hc.client5.http.HttpHostConnectException: "
    "Connect to http://127.0.0.1:55387 failed: Connection refused"
)
REST_401 = "org.apache.iceberg.exceptions.NotAuthorizedException: Not authorized: Token is invalid"
REST_403 = "org.apache.iceberg.exceptions.ForbiddenException: Forbidden: no CREATE on ns"
CONFLICT = (
    "org.apache.iceberg.exceptions.CommitFailedException: Commit failed: Requirement failed: "
    "branch main has changed: expected id 111 != 222"
)
