"""An integration's `external_volume` (where its tables' files live) read as a depot's `spec`.

`s3://bucket/prefix` (or `s3a://`), `abfss://container@account.dfs.core.windows.net/prefix`,
`gs://bucket/prefix`, or a local folder (a path, `~/...` or `file:/...`; relative to the
project) become the `spec` of a depot entry, with the region, endpoint or project the
integration's properties give. Whether the bucket or folder is usable is the depot's business
(profile/depot/); this module only reads the location.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

ACCEPTED_VOLUMES = (
    "s3://<bucket>/<prefix>, abfss://<container>@<account>.dfs.core.windows.net/<prefix>, "
    "gs://<bucket>/<prefix>, or a local folder (absolute, relative to the project, or file:/...)"
)
# The storage options of adapter_properties, and the storage each applies to.
STORAGE_OPTIONS = {"region": ("s3",), "endpoint": ("s3", "abfss", "gcs"), "project": ("gcs",)}

_SCHEME_RE = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://(.*)$", re.DOTALL)
_ABFSS_RE = re.compile(r"^([^@/]+)@([^/.]+)\.dfs\.core\.windows\.net(?:/(.*))?$")


def volume_spec(
    volume: str, options: Mapping[str, Any], project_dir: Path, where: str, problems: list[str]
) -> dict[str, Any] | None:
    """The depot `spec` of `volume`; None (with the problem recorded) when it names no storage
    this adapter has. `where` names the key in messages (e.g. `external_volume`)."""
    text = volume.strip()
    match = _SCHEME_RE.match(text)
    scheme = match.group(1).lower() if match else ("file" if text.startswith("file:") else "")
    rest = match.group(2) if match else ""
    if scheme in ("s3", "s3a"):
        storage, section = "s3", _bucket_section(rest, where, problems)
    elif scheme in ("abfss", "abfs"):
        storage, section = "abfss", _abfss_section(rest, where, problems)
    elif scheme == "gs":
        storage, section = "gcs", _bucket_section(rest, where, problems)
    elif scheme == "file" or not match:
        storage, section = "file", {"path": local_path(text, project_dir)}
    else:
        # The scheme only: the rest of a URL may carry credentials.
        problems.append(
            f"{where} {scheme}://... is not a storage this adapter writes to. Accepted: "
            f"{ACCEPTED_VOLUMES}."
        )
        return None
    if section is None:
        return None
    for key, storages in STORAGE_OPTIONS.items():
        value = options.get(key)
        if value is None:
            continue
        if storage not in storages:
            problems.append(
                f"{key} applies to {' and '.join(storages)} volumes only; {where} is a {storage} "
                "location."
            )
        else:
            section[key] = value
    return {"storageType": storage, storage: section}


def _bucket_section(rest: str, where: str, problems: list[str]) -> dict[str, Any] | None:
    bucket, _, prefix = rest.partition("/")
    if not bucket:
        problems.append(f"{where} names no bucket. Accepted: {ACCEPTED_VOLUMES}.")
        return None
    return {"bucket": bucket, "relativePath": prefix.strip("/")}


def _abfss_section(rest: str, where: str, problems: list[str]) -> dict[str, Any] | None:
    match = _ABFSS_RE.match(rest)
    if match is None:
        problems.append(
            f"{where} is not an ADLS Gen2 location. Accepted: "
            "abfss://<container>@<account>.dfs.core.windows.net/<prefix>."
        )
        return None
    container, account, prefix = match.group(1), match.group(2), match.group(3) or ""
    return {"account": account, "container": container, "relativePath": prefix.strip("/")}


def local_path(text: str, project_dir: Path) -> str:
    """A local volume as an absolute path: relative ones are the project's, as dbt reads every
    other path of a project, not the working folder's (`--project-dir` may differ from it)."""
    if text.lower().startswith("file:"):
        text = unquote(urlsplit(text).path)
    path = Path(text).expanduser()
    return os.path.normpath(path if path.is_absolute() else project_dir / path)
