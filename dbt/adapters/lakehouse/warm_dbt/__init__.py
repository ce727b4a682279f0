"""The warm dbt (docs/warm-dbt.md): `dbt` commands forked from a process that has dbt imported.
client.py runs in the `dbt` process before dbt loads; zygote.py is the process it hands the
command to; switch.py turns it on and off for a Python environment and lists the zygotes."""
