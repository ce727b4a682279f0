"""A materialized view's freshness thresholds (mv/freshness.py): the `mv_freshness` config
validated in dbt's source-freshness shape, stale since the first upstream commit the view does
not reflect (its last refresh when that commit is unknown), and pass / warn / error by dbt's
own rule; then `mv status --check`'s exit rule (cli/mv.py)."""

from __future__ import annotations

import pytest
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.lakehouse.cli.mv import check_failed, render_status
from dbt.adapters.lakehouse.mv.adapter import check_freshness
from dbt.adapters.lakehouse.mv.freshness import describe, duration, judge, parse, refreshed_ms
from dbt.adapters.lakehouse.mv.state import Recorded, UpstreamStatus

HOUR = 3600 * 1000
REFRESHED = "2026-11-27T00:00:00.000000Z"
T0 = refreshed_ms(REFRESHED) or 0
RECORD = Recorded(upstreams={"c.s.o": 1}, sql_hash="h", refreshed_at=REFRESHED)
WARN_12H_ERROR_1D = {
    "warn_after": {"count": 12, "period": "hour"},
    "error_after": {"count": 1, "period": "day"},
}


def stale(name: str, since_ms: int | None, note: str = "") -> UpstreamStatus:
    return UpstreamStatus(name, 1, 2, None if note else 1, "t", note, since_ms)


FRESH = UpstreamStatus("c.s.f", 1, 1, 0, None)


def test_thresholds_in_the_shape_of_a_source_freshness() -> None:
    threshold = parse(WARN_12H_ERROR_1D)
    assert threshold is not None and threshold.warn_after.count == 12
    assert parse(None) is None and parse({}) is None
    only_warn = parse({"warn_after": {"count": 30, "period": "minute"}})
    assert only_warn is not None and not only_warn.error_after
    for wrong in (
        {"warn_after": {"count": 1, "period": "week"}},  # dbt's periods: minute, hour, day
        {"warn_after": {"count": 1}},  # a count without a period would be ignored by dbt
        {"build_after": {"count": 1, "period": "hour"}},  # dbt's model freshness, not this
        {"warn_after": {"count": "x", "period": "hour"}},
        "12 hours",
    ):
        with pytest.raises(ValueError, match="mv_freshness takes warn_after"):
            parse(wrong)


def test_levels_by_how_long_the_view_has_been_stale() -> None:
    threshold = parse(WARN_12H_ERROR_1D)
    since = T0 + HOUR  # the first commit the view does not reflect
    assert judge(threshold, [stale("c.s.o", since)], REFRESHED, since + 11 * HOUR).level == "pass"
    warned = judge(threshold, [stale("c.s.o", since)], REFRESHED, since + 13 * HOUR)
    assert (warned.level, warned.stale_since_ms, warned.age_seconds) == ("warn", since, 13 * 3600)
    assert describe(warned) == (
        "warn: stale for 13h 0m since 2026-11-27 01:00:00.000 UTC, over warn_after 12 hours"
    )
    errored = judge(threshold, [stale("c.s.o", since)], REFRESHED, since + 25 * HOUR)
    assert errored.level == "error" and errored.detail == "over error_after 1 day"
    # Exactly at the threshold is not past it (dbt: age > threshold).
    assert judge(threshold, [stale("c.s.o", since)], REFRESHED, since + 12 * HOUR).level == "pass"


def test_stale_since_the_earliest_unreflected_commit_of_any_upstream() -> None:
    threshold = parse(WARN_12H_ERROR_1D)
    now = T0 + 20 * HOUR
    upstreams = [FRESH, stale("c.s.o", T0 + 10 * HOUR), stale("c.s.p", T0 + 2 * HOUR)]
    judged = judge(threshold, upstreams, REFRESHED, now)
    assert (judged.stale_since_ms, judged.level) == (T0 + 2 * HOUR, "warn")
    # A fresh view passes whatever the time; without thresholds there is no level.
    assert judge(threshold, [FRESH], REFRESHED, now + 99 * HOUR).level == "pass"
    assert judge(threshold, [FRESH], REFRESHED, now).stale_since_ms is None
    assert judge(None, upstreams, REFRESHED, now).level is None


def test_an_unknown_first_commit_counts_from_the_last_refresh() -> None:
    # Expired, rolled back or a schema change: the refresh bounds it, never later than true.
    threshold = parse(WARN_12H_ERROR_1D)
    expired = stale("c.s.o", None, "recorded snapshot 1 is no longer in its history")
    judged = judge(threshold, [expired], REFRESHED, T0 + 30 * HOUR)
    assert (judged.stale_since_ms, judged.level) == (T0, "error")
    # Not even the refresh time known: stale for ever.
    assert judge(threshold, [expired], None, T0).level == "error"


def test_check_fails_on_error_and_on_stale_without_thresholds() -> None:
    threshold = parse(WARN_12H_ERROR_1D)
    since = T0 + HOUR
    ups = [stale("c.s.o", since)]
    at = {h: judge(threshold, ups, REFRESHED, since + h * HOUR) for h in (1, 13, 25)}
    assert [check_failed(RECORD, ups, at[h], False) for h in (1, 13, 25)] == [False, False, True]
    assert check_failed(RECORD, ups, at[13], True)  # --warn-error
    unset = judge(None, ups, REFRESHED, since)
    assert check_failed(RECORD, ups, unset, False)  # no thresholds: stale fails, as before
    assert not check_failed(RECORD, [FRESH], judge(None, [FRESH], REFRESHED, since), False)
    assert check_failed(Recorded(), [], unset, False)
    assert render_status("c.s.v", RECORD, ups, at[25]).splitlines()[0] == (
        "c.s.v: stale, error: stale for 1d 1h since 2026-11-27 01:00:00.000 UTC, "
        f"over error_after 1 day (refreshed {REFRESHED})"
    )


def test_durations() -> None:
    assert [duration(s) for s in (40, 300, 13 * 3600 + 120, 2 * 86400 + 3 * 3600)] == [
        "40s",
        "5m",
        "13h 2m",
        "2d 3h",
    ]


def test_a_malformed_threshold_fails_the_run() -> None:
    assert check_freshness(WARN_12H_ERROR_1D, "totals") == ""
    assert check_freshness(None, "totals") == ""
    with pytest.raises(DbtRuntimeError, match="materialized_view model 'totals': mv_freshness"):
        check_freshness({"warn_afer": {"count": 1, "period": "hour"}}, "totals")
