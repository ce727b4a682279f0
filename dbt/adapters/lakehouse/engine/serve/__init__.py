"""Serving the profile's lakehouse to other clients from its warm engine's JVM
(docs/serving.md): `token.py` who may connect (bind rule, the token's digest, the Thrift
password check compiled in the JVM), `endpoints.py` the HiveServer2 and Spark Connect
endpoints started and stopped through py4j, every client in a session of its own."""
