"""The user's dbt profile, for `dbt-lakehouse` commands that run outside dbt: found, chosen and
rendered as dbt finds, chooses and renders it, into `LakehouseCredentials`.

So a command such as `dbt-lakehouse history` reaches the same lakehouse, through the same
depot and Spark settings, as `dbt build` in the same folder.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from dbt.adapters.lakehouse.credentials import LakehouseCredentials

PROFILES_FILE = "profiles.yml"
PROJECT_FILE = "dbt_project.yml"
# profiles.yml may hold a global `config:` block beside the profiles (older dbt versions).
_NOT_PROFILES = frozenset({"config"})


class ProfileError(Exception):
    """A profile that cannot be found, chosen or read; the message is one line for the user."""


@dataclass(frozen=True)
class ChosenProfile:
    path: Path  # the profiles.yml read
    profile: str
    target: str
    credentials: LakehouseCredentials


def default_profiles_dir(env: Mapping[str, str], cwd: Path, home: Path) -> Path:
    """dbt's order: DBT_PROFILES_DIR, the current folder when it has a profiles.yml, ~/.dbt."""
    if env.get("DBT_PROFILES_DIR"):
        return Path(env["DBT_PROFILES_DIR"]).expanduser()
    return cwd if (cwd / PROFILES_FILE).is_file() else home / ".dbt"


def project_profile_name(project_dir: Path) -> str | None:
    """The `profile:` of the dbt project in `project_dir`, if there is one."""
    path = project_dir / PROJECT_FILE
    if not path.is_file():
        return None
    try:
        project = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise ProfileError(f"{path} could not be read: {_first_line(exc)}") from None
    name = project.get("profile") if isinstance(project, dict) else None
    return str(name) if name else None


def choose_profile(
    profiles: Mapping[str, Any], given: str | None, project_profile: str | None, path: Path
) -> str:
    """The profile to use: the one asked for, else the project's, else the only lakehouse one."""
    names = sorted(str(name) for name in profiles if name not in _NOT_PROFILES)
    listed = ", ".join(names) if names else "none"
    for wanted, source in ((given, "--profile"), (project_profile, f"./{PROJECT_FILE}")):
        if wanted is None:
            continue
        if wanted not in names:
            raise ProfileError(
                f"Profile '{wanted}' (from {source}) is not in {path}. Profiles there: {listed}."
            )
        return wanted
    lakehouse = [name for name in names if _is_lakehouse(profiles[name])]
    if len(lakehouse) == 1:
        return lakehouse[0]
    which = "no profile" if not lakehouse else f"{len(lakehouse)} profiles"
    raise ProfileError(
        f"{path} has {which} with a `type: lakehouse` target, and no profile was named. "
        f"Profiles there: {listed}. Fix: pass --profile, or run in the dbt project's folder."
    )


def _is_lakehouse(profile: Any) -> bool:
    outputs = profile.get("outputs") if isinstance(profile, Mapping) else None
    return isinstance(outputs, Mapping) and any(
        isinstance(o, Mapping) and o.get("type") == "lakehouse" for o in outputs.values()
    )


def load_profile(
    profiles_dir: Path,
    profile: str | None = None,
    target: str | None = None,
    project_dir: Path | None = None,
) -> ChosenProfile:
    """Read profiles.yml, choose the profile and target, and render the target as dbt does
    (`env_var()`, `var()` without vars) into credentials."""
    from dbt.config.profile import Profile
    from dbt.config.renderer import ProfileRenderer
    from dbt_common.context import set_invocation_context

    path = profiles_dir / PROFILES_FILE
    if not path.is_file():
        raise ProfileError(
            f"No {PROFILES_FILE} in {profiles_dir}. Fix: pass --profiles-dir, set "
            "DBT_PROFILES_DIR, or run in a folder that has one."
        )
    try:
        raw = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise ProfileError(f"{path} could not be read: {_first_line(exc)}") from None
    if not isinstance(raw, dict):
        raise ProfileError(f"{path} holds no profiles.")
    project = project_profile_name(project_dir or Path.cwd()) if profile is None else None
    name = choose_profile(raw, profile, project, path)
    # dbt's env_var() reads the invocation context's environment.
    set_invocation_context(dict(os.environ))
    try:
        target_name, data = Profile.render_profile(raw[name], name, target, ProfileRenderer({}))
    except Exception as exc:  # dbt's own profile errors: unknown target, failed rendering
        raise ProfileError(f"Profile '{name}' in {path}: {_first_line(exc)}") from None
    data = dict(data)
    data.pop("threads", None)
    kind = data.pop("type", None)
    if kind != "lakehouse":
        raise ProfileError(
            f"Target '{target_name}' of profile '{name}' in {path} has type {kind!r}; "
            "this command reads `type: lakehouse` targets only."
        )
    try:
        data = LakehouseCredentials.translate_aliases(data)
        LakehouseCredentials.validate(data)
        credentials = LakehouseCredentials.from_dict(data)
    except Exception as exc:
        raise ProfileError(
            f"Target '{target_name}' of profile '{name}' in {path} is invalid: {_first_line(exc)}"
        ) from None
    return ChosenProfile(path=path, profile=name, target=target_name, credentials=credentials)


def _first_line(exc: BaseException) -> str:
    text = " ".join(str(getattr(exc, "msg", None) or exc).split())
    return text or type(exc).__name__
