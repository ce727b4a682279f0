"""What every `dbt-lakehouse` subcommand shares: the profile options, the profile resolved, and
a failure's one line. Its own module, under main.py and the subcommands, so a subcommand never
imports the command that registers it.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any


def load_resolved(command: str, args: argparse.Namespace) -> Any:
    """The profile `args` name, resolved, and which profile and target it is; or the exit code
    after printing why it could not be."""
    from dbt.adapters.lakehouse.profile.resolved import resolve_profile
    from dbt.adapters.lakehouse.profile.secrets import scrub
    from dbt.adapters.lakehouse.profile.user_profile import (
        ProfileError,
        default_profiles_dir,
        load_profile,
    )

    profiles_dir = (
        Path(args.profiles_dir).expanduser()
        if args.profiles_dir
        else default_profiles_dir(os.environ, Path.cwd(), Path.home())
    )
    try:
        chosen = load_profile(profiles_dir, args.profile, args.target)
    except (ProfileError, ValueError) as exc:
        return fail(command, str(exc))
    try:
        resolved = resolve_profile(chosen.credentials)
    except Exception as exc:  # the depot: its message names the fix
        return fail(command, scrub(one_line(getattr(exc, "msg", None) or exc), []))
    return resolved, chosen


def add_profile_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--profiles-dir",
        help="folder of profiles.yml (default: DBT_PROFILES_DIR, ./ if it has one, ~/.dbt)",
    )
    parser.add_argument(
        "--profile", help="default: ./dbt_project.yml's, else the only lakehouse profile"
    )
    parser.add_argument("--target", help="default: the profile's target")


def one_line(message: object) -> str:
    """A message on one line: the commands print one line per failure."""
    return " ".join(str(message).split())


def fail(command: str, message: str) -> int:
    print(f"dbt-lakehouse {command}: {one_line(message)}", file=sys.stderr)
    return 1
