"""A run's nodes as one HTML page: a bar per node, its wall time and beside it the Spark task
time it used (summed over executors, so it may pass the wall time when tasks ran in parallel),
under them the wall time split (dbt's own work, Spark's planning, its jobs, catalog and commit
round trips: report/timing.py), with its rows and bytes written. Self-contained: no script, no
request for anything else."""

from __future__ import annotations

from html import escape

from dbt.adapters.lakehouse.report.summary import NodeCost, size_text

_STYLE = """
body { font: 14px system-ui, sans-serif; margin: 24px; color: #222; }
table { border-collapse: collapse; width: 100%; }
td, th { padding: 4px 8px; border-bottom: 1px solid #eee; text-align: left; white-space: nowrap; }
td.bars { width: 55%; }
.bar { height: 9px; margin: 2px 0; border-radius: 2px; }
.wall { background: #9aa5b1; } .spark { background: #2f6fde; }
.split { display: flex; } .split div { height: 9px; }
.dbt { background: #e0a526; } .planning { background: #d1495b; }
.jobs { background: #2e9e6a; } .catalog { background: #8e6bbf; }
.num { text-align: right; font-variant-numeric: tabular-nums; }
.key span { display: inline-block; width: 12px; height: 9px; margin: 0 4px 0 12px; }
"""


def render_html(costs: list[NodeCost], title: str) -> str:
    """The page for `costs` (in the order given: report.summary.heaviest sorts them)."""
    scale = max([c.wall_seconds for c in costs] + [c.spark_seconds or 0.0 for c in costs] + [1e-9])
    rows = []
    for cost in costs:
        wall = 100.0 * cost.wall_seconds / scale
        spark = 100.0 * (cost.spark_seconds or 0.0) / scale
        spark_text = "-" if cost.spark_seconds is None else f"{cost.spark_seconds:.1f}"
        rows.append(
            f'<tr data-node="{escape(cost.node)}"><td>{escape(cost.name)}</td>'
            f'<td class="bars"><div class="bar wall" style="width:{wall:.2f}%"></div>'
            f'<div class="bar spark" style="width:{spark:.2f}%"></div>'
            f"{_split_bar(cost, scale)}</td>"
            f'<td class="num">{cost.wall_seconds:.1f}</td><td class="num">{spark_text}</td>'
            f"{_native_cell(cost)}"
            f'<td class="num">{"-" if cost.rows is None else f"{cost.rows:,}"}</td>'
            f'<td class="num">{size_text(cost.bytes_written)}</td>'
            f"<td>{escape(cost.message or cost.status)}</td></tr>"
        )
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{escape(title)}</title>"
        f"<style>{_STYLE}</style></head><body><h1>{escape(title)}</h1>"
        '<p class="key">per node:<span class="wall"></span>wall time'
        '<span class="spark"></span>Spark task time (all executors); the wall time\'s split:'
        + "".join(f'<span class="{part}"></span>{text}' for part, text in _PARTS)
        + "</p>"
        "<table><thead><tr><th>node</th><th></th><th>wall s</th><th>spark s</th><th>native</th>"
        "<th>rows</th>"
        f"<th>written</th><th>result</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
        "</body></html>\n"
    )


# The wall time's parts, in the order drawn, with the key's words.
_PARTS = (
    ("dbt", "dbt's own work"),
    ("planning", "Spark's planning"),
    ("jobs", "Spark jobs"),
    ("catalog", "catalog and commits"),
)


def _split_bar(cost: NodeCost, scale: float) -> str:
    """The wall time as one bar of its parts; nothing where the split is not known."""
    parts = (cost.dbt_seconds, cost.planning_seconds, cost.jobs_seconds, cost.catalog_seconds)
    if any(p is None for p in parts):
        return ""
    segments = "".join(
        f'<div class="{name}" style="width:{100.0 * (seconds or 0.0) / scale:.2f}%" '
        f'title="{text} {seconds or 0.0:.1f} s"></div>'
        for (name, text), seconds in zip(_PARTS, parts, strict=True)
    )
    return f'<div class="bar split">{segments}</div>'


def _native_cell(cost: NodeCost) -> str:
    """The operators Comet ran of those it counted, its reasons for the rest on hover."""
    if cost.native_eligible is None:
        return '<td class="num">-</td>'
    why = escape("; ".join(cost.native_fallbacks), quote=True)
    return f'<td class="num" title="{why}">{cost.native_operators}/{cost.native_eligible}</td>'
