"""The project and depots of the GCS depot tests (test_gcs_depots.py): a seed, a table, a `merge`
incremental model, a snapshot and a time-travel model, and a GCS depot on the emulator."""

from __future__ import annotations

from typing import Any

from functional.infra.gcs import FakeGcsServer

SPARK: dict[str, Any] = {
    "master": "local[2]",
    "driver_memory": "2g",
}

PEOPLE_CSV = "id,name\n1,alice\n2,bob\n"
PEOPLE = [(1, "alice"), (2, "bob")]
PLAIN_SQL = (
    "{{ config(materialized='table') }}\nselect id, upper(name) as name from {{ ref('people') }}"
)
PLAIN = [(1, "ALICE"), (2, "BOB")]

ON_KEYED_SQL = """
{{ config(materialized='table', database='keyed') }}
select id, upper(name) as name from {{ ref('people') }}
"""
# Time travel: `merged` as it was at the snapshot given (left out of the first build).
MERGED_THEN_SQL = """
{{ config(materialized='table', tags=['travel']) }}
select * from {{ lakehouse.as_of(ref('merged'), snapshot_id=var('first_snapshot', 0)) }}
"""
SNAPSHOT_SQL = """
{% snapshot snap_merged %}
{{ config(unique_key='id', strategy='check', check_cols=['s']) }}
select * from {{ ref('merged') }}
{% endsnapshot %}
"""


def gcs_depot(gcs: FakeGcsServer, catalog: dict[str, Any], prefix: str) -> dict[str, Any]:
    return {
        "type": "lakehouse",
        "spec": {
            "storageType": "gcs",
            "gcs": {
                "bucket": gcs.bucket,
                "relativePath": prefix,
                "project": gcs.project,
                "endpoint": gcs.endpoint,
            },
        },
        "catalog": catalog,
    }


def target(depot: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "lakehouse", "threads": 2, "depot": depot, "spark": SPARK, **extra}
