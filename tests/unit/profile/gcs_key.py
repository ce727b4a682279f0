"""A throwaway service-account key for the GCS tests: a real RSA key, made per test session."""

from __future__ import annotations

import json
from functools import cache


@cache
def service_account_key(token_uri: str = "https://oauth2.googleapis.com/token") -> str:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = private.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    return json.dumps(
        {
            "type": "service_account",
            "project_id": "lake-project",
            "private_key_id": "0123456789abcdef0123456789abcdef01234567",
            "private_key": pem,
            "client_email": "dbt@lake-project.iam.gserviceaccount.com",
            "token_uri": token_uri,
        }
    )
