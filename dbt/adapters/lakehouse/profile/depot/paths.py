"""Local paths as a profile, a depot or the environment writes them: `~`, relative, `file:`.

Relative paths are taken against the working folder resolution was given (or the process's),
never silently against wherever Spark later runs; a URL of any other scheme is refused here, so
a local folder setting cannot quietly name S3.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import unquote, urlsplit

from dbt.adapters.lakehouse.exceptions import DepotConfigError
from dbt.adapters.lakehouse.profile.depot.model import _SCHEME_RE, _Context

# The embedded lakehouse's folder in the project when neither `warehouse` nor
# LAKEHOUSE_WAREHOUSE names one (builtin.py); the credentials name it in `dbt debug`.
DEFAULT_WAREHOUSE_DIR = "lakehouse_warehouse"


def _local_folder(given: str, where: str, ctx: _Context) -> Path:
    if given.lower().startswith("file:"):
        return _absolute(unquote(urlsplit(given).path), ctx.cwd, ctx.home)
    match = _SCHEME_RE.match(given)
    if match:
        raise DepotConfigError(
            f"{where} must be a local folder; got a {match.group(1)}:// location. Accepted: a "
            "path (absolute, relative to the project, or file:/...). For S3 use a depot: "
            "dataos://<depot-name>, an inline depot, or env."
        )
    return _absolute(given, ctx.cwd, ctx.home)


def _absolute_cwd(cwd: Path | None) -> Path:
    base = Path.cwd() if cwd is None else Path(cwd)
    return Path(os.path.normpath(base if base.is_absolute() else Path.cwd() / base))


def _absolute(given: str, cwd: Path, home: Path) -> Path:
    if given == "~" or given.startswith("~/"):
        path = home / given[2:]
    else:
        path = Path(given)
    return Path(os.path.normpath(path if path.is_absolute() else cwd / path))
