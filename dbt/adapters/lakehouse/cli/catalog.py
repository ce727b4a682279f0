"""`dbt-lakehouse catalog`: the embedded lakehouse's catalog as other tools open it."""

from __future__ import annotations

import argparse
import json
from typing import Any

from dbt.adapters.lakehouse.cli.common import fail


def add_commands(commands: Any, profile_options: Any) -> None:
    catalog = commands.add_parser(
        "catalog", help="print the pyiceberg settings of the project's embedded lakehouse"
    )
    catalog.add_argument("--project-dir", help="the dbt project (default: the current folder)")
    catalog.add_argument("--json", action="store_true", help="the settings as one JSON object")
    profile_options(catalog)
    catalog.set_defaults(run=_catalog)


def _catalog(args: argparse.Namespace) -> int:
    from dbt.adapters.lakehouse.embedded.pyiceberg_catalog import (
        embedded_catalog_of,
        pyiceberg_properties,
    )

    try:
        catalog = embedded_catalog_of(
            args.project_dir, args.profiles_dir, args.profile, args.target
        )
    except Exception as exc:  # the profile or the depot: their messages name the fix
        return fail("catalog", str(getattr(exc, "msg", None) or exc))
    properties = pyiceberg_properties(catalog)
    if args.json:
        print(json.dumps({"name": catalog.name, "type": "sql", **properties}))
        return 0
    # Ready to paste: as ~/.pyiceberg.yaml (then `load_catalog(name)`), or in Python.
    keywords = ", ".join(f"{key}={value!r}" for key, value in properties.items())
    print(f"# {catalog.database_file}: the embedded lakehouse's Iceberg catalog (SQLite)")
    print("# In Python: from dbt.adapters.lakehouse import open_catalog; open_catalog()")
    print(f"#   or: SqlCatalog({catalog.name!r}, {keywords})")
    print("# As ~/.pyiceberg.yaml, for pyiceberg's load_catalog():")
    print(f"catalog:\n  {catalog.name}:\n    type: sql")
    for key, value in properties.items():
        print(f"    {key}: {value}")
    return 0
