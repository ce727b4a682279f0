"""Where SQL runs: the engine spec a profile implies, the Spark driver's lifecycle (JVM launch,
jars, cluster masters) or a Spark Connect client, and what a
statement carries (scoped conf, errors read back).
"""
