"""A node's wall time split by what it went to (report/timing.py): each millisecond of a
statement counted once, in one bucket, and the buckets summing to the statements' time."""

from __future__ import annotations

import pytest

from dbt.adapters.lakehouse.report.timing import (
    StatementTime,
    node_split,
    parse_phases,
    statement_split,
)


def test_the_trackers_text_gives_each_phase_span() -> None:
    text = (
        "Map(planning -> PhaseSummary(1000, 1003), optimization -> PhaseSummary(990, 1000), "
        "parsing -> PhaseSummary(900, 905), analysis -> PhaseSummary(905, 990))"
    )
    assert sorted(parse_phases(text)) == [(900, 905), (905, 990), (990, 1000), (1000, 1003)]
    assert parse_phases("Map()") == ()


def test_a_ctas_of_stacked_views_shows_its_planning() -> None:
    """Analysis 88 s in the tracker, the write's own planning before its first job, 2 s of
    jobs, then the commit and the adapter's read of it."""
    ctas = StatementTime(0, 92_000, commits=True, phases=((0, 10), (10, 88_000)), check_ms=40)
    part = statement_split(ctas, [(89_000, 90_000), (89_500, 91_000)])
    assert part.planning == 89_000  # the phases and the 1 s before the first job
    assert part.jobs == 2_000  # from the first job's start to the last one's end
    assert part.catalog == 1_040  # after the last job (the commit) and the check
    assert part.planning + part.jobs + part.catalog == ctas.end_ms + ctas.check_ms


def test_a_statement_without_jobs_is_its_phases_and_catalog_round_trips() -> None:
    view = StatementTime(100, 400, commits=False, phases=((100, 150),))
    part = statement_split(view, [(50, 90), (400, 500)])  # jobs of other statements
    assert (part.planning, part.jobs, part.catalog) == (50, 0, 250)


def test_a_querys_rows_coming_back_count_as_its_jobs() -> None:
    query = StatementTime(0, 1_000, commits=False, phases=((0, 100), (100, 300)))
    part = statement_split(query, [(300, 800)])
    assert (part.planning, part.jobs, part.catalog) == (300, 700, 0)


def test_phases_overlapping_jobs_count_once_as_jobs() -> None:
    # A view computed while analysing: its job runs inside the analysis phase.
    statement = StatementTime(0, 1_000, commits=False, phases=((0, 600),))
    part = statement_split(statement, [(200, 400)])
    assert part.planning + part.jobs + part.catalog == 1_000
    assert part.jobs == 200 + 400  # the job, then the statement's end outside any phase
    assert part.planning == 200 + 200  # before the job, and the phase's part after it


def test_the_node_adds_jobs_run_outside_its_statements() -> None:
    statements = [
        StatementTime(0, 1_000, commits=True, phases=((0, 500),)),
        StatementTime(2_000, 2_500, commits=False),
    ]
    # one job of the first statement, two overlapping ones of a Python model in between
    split = node_split(statements, [(600, 900), (1_100, 1_500), (1_400, 1_800)])
    assert split.planning == pytest.approx(0.6)
    assert split.jobs == pytest.approx(0.3 + 0.7)
    assert split.catalog == pytest.approx(0.1 + 0.5)


def test_a_node_without_statements_or_jobs_took_no_engine_time() -> None:
    split = node_split([], [])
    assert (split.planning, split.jobs, split.catalog) == (0.0, 0.0, 0.0)


class _Tracker:
    def phases(self) -> str:
        return _Text("Map(parsing -> PhaseSummary(10, 12), analysis -> PhaseSummary(12, 40))")


class _Text(str):
    def toString(self) -> str:  # noqa: N802 (py4j's name)
        return str(self)


def test_a_nodes_statements_are_timed_and_read_when_it_reports(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from types import SimpleNamespace

    from dbt.adapters.lakehouse.report import statements, work

    monkeypatch.setattr("dbt_common.invocation.get_invocation_id", lambda: "inv-t")
    spark = SimpleNamespace()  # not a Connect session
    df = SimpleNamespace(_jdf=SimpleNamespace(queryExecution=lambda: SimpleNamespace(
        tracker=_Tracker)))  # fmt: skip
    clock = statements.StatementClock(spark, "model.p.m", commits=True)
    clock.ran(df)
    clock.checked()
    clock.fetched()  # after the commit's check: the statement's end stays
    assert clock.entry is not None and clock.entry.end_ms >= clock.entry.start_ms
    # A data test reports its costs (reuse/tests.py); a unit test and an operation do not.
    assert statements.StatementClock(spark, "test.p.not_null", commits=False).entry
    assert statements.StatementClock(spark, "unit_test.p.m.t", commits=False).entry is None
    assert statements.StatementClock(spark, "operation.p.o", commits=False).entry is None
    [timed] = work.take("inv-t", "model.p.m").statements
    assert timed is clock.entry and timed.phases == ()
    statements.read_phases([timed])
    assert timed.phases == ((10.0, 12.0), (12.0, 40.0)) and timed.tracker is None
