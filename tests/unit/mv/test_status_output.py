"""`dbt-lakehouse mv status` output (cli/mv.py): a view's line and one per upstream, and the
views a project's manifest names."""

from __future__ import annotations

import json
from pathlib import Path

from dbt.adapters.lakehouse.cli.mv import manifest_views, render_status
from dbt.adapters.lakehouse.mv.state import Recorded, UpstreamStatus

RECORD = Recorded(upstreams={"c.s.o": 2}, sql_hash="h", refreshed_at="2026-11-27T23:00:00Z")


def test_fresh_and_stale_views() -> None:
    fresh = [UpstreamStatus("c.s.o", 2, 2, 0, None)]
    assert render_status("c.s.v", RECORD, fresh) == (
        "c.s.v: fresh (refreshed 2026-11-27T23:00:00Z)\n  c.s.o: fresh (snapshot 2)"
    )
    stale = [
        UpstreamStatus("c.s.o", 2, 5, 3, "2026-11-27 23:10:00.000 UTC"),
        UpstreamStatus("c.s.p", 7, 8, 1, "2026-11-27 23:11:00.000 UTC"),
        UpstreamStatus(
            "c.s.q", 1, 9, None, None, "recorded snapshot 1 is no longer in its history"
        ),
    ]
    assert render_status("c.s.v", RECORD, stale).splitlines() == [
        "c.s.v: stale (refreshed 2026-11-27T23:00:00Z)",
        "  c.s.o: moved 3 snapshots since 2026-11-27 23:10:00.000 UTC (recorded 2, now 5)",
        "  c.s.p: moved 1 snapshot since 2026-11-27 23:11:00.000 UTC (recorded 7, now 8)",
        "  c.s.q: moved, recorded snapshot 1 is no longer in its history (now snapshot 9)",
    ]
    assert "not a materialized view" in render_status("c.s.t", Recorded(), [])


def test_views_of_the_manifest(tmp_path: Path) -> None:
    nodes = {
        "model.p.v": {
            "config": {"materialized": "materialized_view"},
            "relation_name": "`c`.`s`.`v`",
        },
        "model.p.t": {"config": {"materialized": "table"}, "relation_name": "`c`.`s`.`t`"},
    }
    (tmp_path / "target").mkdir()
    (tmp_path / "target" / "manifest.json").write_text(json.dumps({"nodes": nodes}))
    assert manifest_views(tmp_path) == {"`c`.`s`.`v`": nodes["model.p.v"]["config"]}
