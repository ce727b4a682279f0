"""Freshness thresholds of a materialized view: the model's `mv_freshness` config, shaped as a
dbt source's `freshness` (`warn_after` / `error_after`, each `{count, period}` with period
`minute`, `hour` or `day`), judged against how long the view has been stale.

The name is not dbt's own model `freshness`: in dbt-core 1.10 to 1.12 that holds `build_after`
(when a model may be rebuilt, for state-aware orchestration), and dbt's parser drops a model
`freshness` that has no `build_after`, so thresholds written there would vanish silently.

A view is stale since the first upstream commit it does not reflect: per upstream, the first
snapshot of `main` after the recorded one. When that commit cannot be known (the recorded
snapshot expired or is no ancestor of `main`, or the upstream's columns changed, which commits
nothing) the view's last refresh stands in for it: the view was not stale before it was built,
so the age judged is never less than the true one and a threshold never trips late.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dbt.artifacts.resources import FreshnessThreshold, Time
from dbt_common.dataclass_schema import ValidationError

from dbt.adapters.lakehouse.iceberg.metadata import format_millis
from dbt.adapters.lakehouse.mv.state import UpstreamStatus

CONFIG = "mv_freshness"
LEVELS = ("pass", "warn", "error")
_KEYS = ("warn_after", "error_after")
_SHAPE = (
    f"{CONFIG} takes warn_after and/or error_after, each {{count: <int>, period: minute | hour "
    f"| day}}, as a dbt source's freshness does (e.g. {{warn_after: {{count: 12, period: hour}}}})"
)


def parse(value: Any) -> FreshnessThreshold | None:
    """The thresholds a model's config sets, validated by dbt's own source-freshness type;
    None when it sets none."""
    if value is None or value == {}:
        return None
    if not isinstance(value, Mapping) or set(value) - set(_KEYS):
        raise ValueError(f"{_SHAPE}; got {value!r}")
    try:
        FreshnessThreshold.validate(dict(value))
        threshold = FreshnessThreshold.from_dict(dict(value))
    except ValidationError as exc:
        raise ValueError(f"{_SHAPE}; got {value!r} ({exc.message})") from exc
    for key in _KEYS:
        time = getattr(threshold, key)
        # dbt's Time ignores a count without a period (and the reverse): refused, not ignored.
        if time is not None and (time.count is None) != (time.period is None):
            raise ValueError(f"{_SHAPE}; {key} needs both count and period, got {value!r}")
    return threshold if threshold else None


@dataclass(frozen=True)
class Freshness:
    """How long a view (or one upstream of it) has been stale, and what the thresholds say:
    `level` pass, warn or error (None: no thresholds set)."""

    level: str | None
    stale_since_ms: int | None  # None: fresh
    age_seconds: float
    detail: str  # the threshold crossed (or the one not yet reached), for a reader


def refreshed_ms(refreshed_at: str | None) -> int | None:
    """`lakehouse.mv.refreshed_at` (2026-11-27T23:40:06.123456Z) in epoch milliseconds."""
    try:
        moment = dt.datetime.strptime(str(refreshed_at), "%Y-%m-%dT%H:%M:%S.%fZ")
    except ValueError:
        return None
    return int(moment.replace(tzinfo=dt.timezone.utc).timestamp() * 1000)


def stale_since(statuses: Sequence[UpstreamStatus], refreshed_at: str | None) -> int | None:
    """The first commit, over all upstreams, that the view does not reflect (epoch ms); None
    when every upstream is fresh; 0 (stale for ever) when neither it nor the refresh is known."""
    moments: list[int] = []
    stale = False
    for status in statuses:
        if status.fresh:
            continue
        stale = True
        moment = status.since_ms if status.since_ms is not None else refreshed_ms(refreshed_at)
        if moment is not None:
            moments.append(moment)
    if not stale:
        return None
    return min(moments) if moments else 0


def judge(
    threshold: FreshnessThreshold | None,
    statuses: Sequence[UpstreamStatus],
    refreshed_at: str | None,
    now_ms: int,
) -> Freshness:
    """The view's freshness from its upstreams' statuses at `now_ms`."""
    since = stale_since(statuses, refreshed_at)
    age = 0.0 if since is None else max(0.0, (now_ms - since) / 1000)
    if threshold is None:
        return Freshness(None, since, age, "")
    # dbt's own rule (FreshnessThreshold.status): error_after first, then warn_after.
    level = str(threshold.status(age).value)
    crossed = {"error": threshold.error_after, "warn": threshold.warn_after}.get(level)
    if crossed:
        detail = f"over {'error' if level == 'error' else 'warn'}_after {_span(crossed)}"
    else:
        set_ = [(key, getattr(threshold, key)) for key in _KEYS if getattr(threshold, key)]
        detail = "within " + ", ".join(f"{key} {_span(time)}" for key, time in set_)
    return Freshness(level, since, age, detail)


def describe(freshness: Freshness) -> str:
    """`warn: stale for 13h 2m since 2026-11-27 10:00:00.000 UTC, over warn_after 12 hours`."""
    if freshness.stale_since_ms is None:
        return f"{freshness.level}: fresh" if freshness.level else "fresh"
    since = format_millis(freshness.stale_since_ms) if freshness.stale_since_ms else "unknown"
    text = f"stale for {duration(freshness.age_seconds)} since {since}"
    return f"{freshness.level}: {text}, {freshness.detail}" if freshness.level else text


def duration(seconds: float) -> str:
    """A short age: `2d 3h`, `13h 2m`, `5m`, `40s`."""
    total = int(seconds)
    days, rest = divmod(total, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d {hours}h"
    if hours:
        return f"{hours}h {minutes}m"
    return f"{minutes}m" if minutes else f"{secs}s"


def _span(time: Time) -> str:
    period = time.period.value if time.period is not None else ""
    return f"{time.count} {period}{'' if time.count == 1 else 's'}"


def of_config(config: Mapping[str, Any] | None) -> FreshnessThreshold | None:
    """The thresholds of a node's config (a manifest's dict, or dbt's config object)."""
    if config is None:
        return None
    getter = getattr(config, "get", None)
    return parse(getter(CONFIG) if getter else None)
