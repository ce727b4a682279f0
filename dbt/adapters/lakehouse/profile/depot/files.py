"""Depots files: where one is looked for, reading a named depot from it, and its templating.

A depots file is configuration, not code: its strings may use `{{ env_var('X') }}` and nothing
else. Messages here name files and template positions, never a value that may be a secret.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from jinja2 import StrictUndefined
from jinja2.sandbox import ImmutableSandboxedEnvironment

from dbt.adapters.lakehouse.exceptions import DepotConfigError
from dbt.adapters.lakehouse.profile.depot.draft import _kind
from dbt.adapters.lakehouse.profile.depot.model import DEPOTS_FILE_NAME, _Context
from dbt.adapters.lakehouse.profile.depot.paths import _absolute, _absolute_cwd
from dbt.adapters.lakehouse.profile.secrets import is_secret_key


def depots_file_candidates(
    depots_file: str | None,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    home: Path | None = None,
) -> list[Path]:
    """Where a depots file is looked for, in order; the first that exists is used."""
    env = os.environ if env is None else env
    cwd = _absolute_cwd(cwd)
    home = Path.home() if home is None else home
    candidates: list[Path] = []
    for configured in (depots_file, env.get("LAKEHOUSE_DEPOTS_FILE")):
        if configured and configured.strip():
            candidates.append(_absolute(configured.strip(), cwd, home))
    candidates.append(cwd / DEPOTS_FILE_NAME)
    candidates.append(home / ".dbt" / DEPOTS_FILE_NAME)
    return candidates


def _find_depots_file(depots_file: str | None, ctx: _Context) -> Path | None:
    """The first depots file that exists, None when there is none."""
    candidates = depots_file_candidates(depots_file, ctx.env, ctx.cwd, ctx.home)
    return next((path for path in candidates if path.is_file()), None)


def describe_depots_files(
    path: Path | None, known: list[str], depots_file: str | None, ctx: _Context
) -> str:
    """What the depots-file resolver found, for the 'no resolver knows it' line."""
    candidates = depots_file_candidates(depots_file, ctx.env, ctx.cwd, ctx.home)
    searched = _search_report(candidates, path, depots_file, ctx)
    if path is None:
        return f"none found (searched {searched})"
    return f"{path} defines only {', '.join(sorted(known)) or '(none)'} (searched {searched})"


def _search_report(
    candidates: list[Path], used: Path | None, depots_file: str | None, ctx: _Context
) -> str:
    lines = []
    if not (depots_file or "").strip():
        lines.append("profile depots_file (not set)")
    if not (ctx.env.get("LAKEHOUSE_DEPOTS_FILE") or "").strip():
        lines.append("LAKEHOUSE_DEPOTS_FILE (not set)")
    for path in candidates:
        state = "exists" if path.is_file() else "not found"
        lines.append(f"{path} ({'used' if path == used else state})")
    return ", ".join(lines)


def _load_depots(path: Path) -> dict[str, Any]:
    """The depots a depots file defines, by name."""
    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise DepotConfigError(f"Cannot read depots file {path}: {exc.strerror}.") from None
    except yaml.YAMLError as exc:
        # Only the problem and position: YAML's own message quotes the line, maybe a secret.
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or type(exc).__name__
        raise DepotConfigError(
            f"Depots file {path} is not valid YAML: {problem}{at}. Accepted: a YAML mapping "
            "`depots: {<name>: {type: lakehouse, spec: ..., catalog: ..., secrets: ...}}`."
        ) from None
    depots = document.get("depots") if isinstance(document, Mapping) else None
    if not isinstance(depots, Mapping):
        raise DepotConfigError(
            f"Depots file {path} has no `depots:` mapping at the top; got "
            f"{_kind(depots if isinstance(document, Mapping) else document)}. Accepted: "
            "`depots: {<name>: {type: lakehouse, spec: ..., catalog: ..., secrets: ...}}`."
        )
    return {str(key): value for key, value in depots.items()}


class _MissingEnvVar(Exception):
    def __init__(self, variable: str) -> None:
        super().__init__(variable)
        self.variable = variable


def _template_env(env: Mapping[str, str]) -> ImmutableSandboxedEnvironment:
    def env_var(variable: str, default: object = None) -> str:
        value = env.get(variable)
        if value is not None:
            return value
        if default is not None:
            return str(default)
        raise _MissingEnvVar(variable)

    # A depots file is configuration, not code: a sandbox where env_var is the only name.
    jinja = ImmutableSandboxedEnvironment(undefined=StrictUndefined, autoescape=False)
    jinja.globals.clear()
    jinja.globals["env_var"] = env_var
    return jinja


def _render(
    value: Any, name: str, path: Path, jinja: ImmutableSandboxedEnvironment, key_path: str
) -> Any:
    """`{{ env_var('X') }}` / `{{ env_var('X', 'default') }}` in every string of a depot."""
    if isinstance(value, Mapping):
        return {
            k: _render(v, name, path, jinja, f"{key_path}.{k}" if key_path else str(k))
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_render(v, name, path, jinja, f"{key_path}[{i}]") for i, v in enumerate(value)]
    if not isinstance(value, str) or not any(m in value for m in ("{{", "{%", "{#")):
        return value
    try:
        return jinja.from_string(value).render()
    except _MissingEnvVar as exc:
        raise DepotConfigError(
            f"Environment variable {exc.variable} is not set, and env_var('{exc.variable}') "
            f"has no default. It is used by depot '{name}' in depots file {path} (at "
            f"{key_path}). Accepted: export {exc.variable}=..., or give a default: "
            f"{{{{ env_var('{exc.variable}', '<default>') }}}}."
        ) from None
    except Exception as exc:
        # Jinja's messages quote names from the template ("got 'x'", "'x' is undefined"): fine
        # for a bucket, not for a secret. And exc.message, never str(exc), which quotes source.
        detail = getattr(exc, "message", None) or type(exc).__name__
        if key_path.startswith("secrets") or is_secret_key(key_path):
            detail = f"{type(exc).__name__} (details withheld: this value is a secret)"
        raise DepotConfigError(
            f"Depot '{name}' in depots file {path} has a template error at {key_path}: "
            f"{detail}. Accepted: {{{{ env_var('NAME') }}}} or "
            "{{ env_var('NAME', 'default') }} (env_var is the only function available)."
        ) from None
