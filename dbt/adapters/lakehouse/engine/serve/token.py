"""Who may use a served endpoint: the bind address allowed without a token, the token's digest,
and the Java class that checks a Thrift password against that digest.

The token itself never reaches a file, a log or the JVM's conf dumps: Spark Connect's
interceptor is handed it once (Spark redacts conf keys naming `token`, and the key is removed
again once the server holds it), and the Thrift check is a class compiled in the engine's JVM
whose source holds only the token's SHA-256.
"""

from __future__ import annotations

import hashlib
import ipaddress
import secrets

from dbt.adapters.lakehouse.exceptions import EngineSetupError

TOKEN_ENV = "LAKEHOUSE_SERVE_TOKEN"
# The message a Thrift client's driver shows (beeline prints it after "Peer indicated failure").
REFUSED = "dbt-lakehouse serve refused the password: it is not the serve token"
# A token shorter than this is refused: it guards the profile's depots and their credentials.
MIN_TOKEN_LENGTH = 16


def is_loopback(host: str) -> bool:
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip()).is_loopback
    except ValueError:
        return False


def check_token(host: str, token: str | None) -> str:
    """The token both endpoints require: the one given, or a new random one when bound to this
    machine only. Another address without a token is refused, as is a short token."""
    if token is None or not token.strip():
        if not is_loopback(host):
            raise EngineSetupError(
                f"dbt-lakehouse serve binds {host!r} only with a token: every client that "
                "reaches that address could otherwise use the profile's depots with its "
                f"credentials. Fix: set {TOKEN_ENV} (or --token) to a secret of at least "
                f"{MIN_TOKEN_LENGTH} characters, or bind 127.0.0.1 (the default)."
            )
        return secrets.token_urlsafe(24)
    token = token.strip()
    if len(token) < MIN_TOKEN_LENGTH:
        raise EngineSetupError(
            f"The serve token is {len(token)} characters long; at least {MIN_TOKEN_LENGTH} are "
            f"required. Fix: a longer {TOKEN_ENV} (`python -c 'import secrets; "
            "print(secrets.token_urlsafe(24))'` makes one)."
        )
    return token


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def thrift_auth_source(package: str, name: str, digest: str) -> str:
    """Java source of Hive's `PasswdAuthenticationProvider` accepting the serve token as the
    password (any user name): SASL PLAIN, as dbt v2, dbt-spark's PyHive, beeline and JDBC send
    it. Compiled in the JVM by Janino (Spark's own compiler); the source holds only the digest.
    """
    if not all(c in "0123456789abcdef" for c in digest) or len(digest) != 64:
        raise ValueError("a SHA-256 hex digest is expected")
    return f"""
package {package};

public class {name} implements org.apache.hive.service.auth.PasswdAuthenticationProvider {{
    private static final String DIGEST = "{digest}";

    public void Authenticate(String user, String password)
            throws javax.security.sasl.AuthenticationException {{
        byte[] given;
        try {{
            given = java.security.MessageDigest.getInstance("SHA-256").digest(
                (password == null ? "" : password).getBytes("UTF-8"));
        }} catch (Exception e) {{
            throw new javax.security.sasl.AuthenticationException("SHA-256 is unavailable");
        }}
        byte[] wanted = new byte[32];
        for (int i = 0; i < 32; i++) {{
            wanted[i] = (byte) Integer.parseInt(DIGEST.substring(2 * i, 2 * i + 2), 16);
        }}
        if (!java.security.MessageDigest.isEqual(given, wanted)) {{
            throw new javax.security.sasl.AuthenticationException("{REFUSED}");
        }}
    }}
}}
"""
