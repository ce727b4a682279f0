"""`--file-durations=N`: the N test files that took longest, in seconds of one worker (setup,
call and teardown of each of their tests), printed at the end of the run like `--durations`.

CI's budget is spent file by file (`--dist loadfile` hands each worker whole files), so this is
the figure to cut by; docs/tests.md lists it per phase from `scripts/test.sh`'s output."""

from __future__ import annotations

from collections import Counter

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--file-durations",
        type=int,
        default=0,
        metavar="N",
        help="show the N slowest test files (seconds of one worker, summed over their tests)",
    )


@pytest.hookimpl(trylast=True)
def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    count = terminalreporter.config.getoption("--file-durations")
    if not count:
        return
    seconds: Counter[str] = Counter()
    # Every report of every outcome (setup and teardown ones are filed under ""), as --durations
    # reads them; under xdist the controller holds the workers' reports.
    for reports in terminalreporter.stats.values():
        for report in reports:
            duration = getattr(report, "duration", None)
            nodeid = getattr(report, "nodeid", "")
            if duration is not None and nodeid:
                seconds[nodeid.split("::")[0]] += duration
    if not seconds:
        return
    total = sum(seconds.values())
    terminalreporter.write_sep("=", f"slowest {count} test files ({total:.0f} s in all)")
    for path, spent in seconds.most_common(count):
        terminalreporter.write_line(f"{spent:8.1f}s {path}")
