"""What the adapter sets up for the dbt command that made it, before dbt parses the project:
the depots its sources name (profile/dataset_mounts.py), the engine's early start, an audited
run (audit/run.py), the run's cost summary (report/summary.py), the compiled templates kept
between processes (template_code.py) and the check of the schemas' switch (schema_cache.py)."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from dbt.adapters.events.logging import AdapterLogger
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.lakehouse.audit import run as audit
from dbt.adapters.lakehouse.credentials import LakehouseCredentials
from dbt.adapters.lakehouse.engine.jars import cache_dir
from dbt.adapters.lakehouse.engine.lifecycle import ENGINE
from dbt.adapters.lakehouse.invocation import invoked_command
from dbt.adapters.lakehouse.profile.resolved import resolve_profile
from dbt.adapters.lakehouse.reuse.edited import edited_since, project_sources
from dbt.adapters.lakehouse.reuse.memo import FILE_NAME as MEMO_FILE
from dbt.adapters.lakehouse.reuse.plan import env_switch
from dbt.adapters.lakehouse.schema_cache import ENV as SCHEMA_CACHE_ENV
from dbt.adapters.lakehouse.template_code import install as keep_compiled_templates
from dbt.adapters.lakehouse.warm_dbt.client import SWITCH as WARM_DBT_ENV
from dbt.adapters.lakehouse.warm_dbt.client import idle_seconds

logger = AdapterLogger("Lakehouse")


def set_up_command(profile: Any, env: Mapping[str, str]) -> None:
    """Everything the command needs from the adapter's construction on (dbt makes the adapter
    when it registers it, before parsing)."""
    credentials = profile.credentials
    # Read before the command could refuse a value: with the plugin, in the `dbt` process's start.
    env_switch(env, SCHEMA_CACHE_ENV)
    env_switch(env, WARM_DBT_ENV)
    try:
        idle_seconds(env)  # read by the zygote, which cannot refuse it
    except ValueError as exc:
        raise DbtRuntimeError(str(exc)) from None
    keep_compiled_templates(cache_dir(env), env)
    mount_source_depots(profile)
    start_engine_early(
        credentials,
        env,
        getattr(profile, "project_root", None),
        getattr(profile, "flags", None),
        getattr(profile, "project_target_path", None),
        project_sources(profile),
    )
    begin_audited_run(credentials)
    begin_run_summary()


# dbt commands whose nodes run SQL: for them the session starts while dbt parses the project.
# `debug` is left out so its preflight explains a bad depot before Spark tries it; `parse`,
# `ls`, `compile` and the like need no engine.
ENGINE_COMMANDS = frozenset(
    {
        "build",
        "run",
        "seed",
        "snapshot",
        "test",
        "generate",
        "freshness",
        "run-operation",
        "show",
        "retry",
        "clone",
    }
)


# Commands whose nodes may all be reused from remembered decisions (reuse/memo.py).
DEFERRABLE_COMMANDS = frozenset({"build", "run", "seed", "snapshot", "test"})


def start_engine_early(
    credentials: LakehouseCredentials,
    env: Mapping[str, str],
    project_root: str | None = None,
    project_flags: Any = None,
    target_path: str | None = None,
    sources: Sequence[Path] = (),
) -> bool:
    """Boot the JVM beside dbt's parsing when this command will need it (off with
    LAKEHOUSE_EARLY_START=0). Any problem is left to the first connection, which reports it.

    On the embedded lakehouse with a warm engine already up and remembered reuse decisions in
    `target_path`, the attach (a fraction of a second, mostly PySpark's import) waits for the
    run's nodes to be selected: when every one has a decision that still holds, none needs the
    engine and the command never attaches (reuse/memo.py `start_engine_unless_covered`); but
    when a file of the project (`sources`) changed since the last such run, an edited node
    will need the engine, and the attach begins beside the parse after all."""
    if env.get("LAKEHOUSE_EARLY_START", "1") == "0" or invoked_command() not in ENGINE_COMMANDS:
        return False
    try:
        # With the project's catalogs.yml catalogs, which dbt mounts only after this.
        from dbt.adapters.lakehouse.catalogs.early import with_project_catalogs

        mounted = with_project_catalogs(credentials, project_root, project_flags)
        spec = resolve_profile(mounted).spec
    except Exception:
        return False
    if (
        target_path is not None
        and invoked_command() in DEFERRABLE_COMMANDS
        and (Path(target_path) / MEMO_FILE).exists()
        and spec.embedded_catalog is not None
        and ENGINE.attach_is_quick(spec)
    ):
        ENGINE.defer_start(spec)
        memo = Path(target_path) / MEMO_FILE
        threading.Thread(
            target=_start_if_edited, args=(memo, sources), name="lakehouse-edits", daemon=True
        ).start()
        return False
    ENGINE.start_early(spec)
    return True


def _start_if_edited(memo: Path, sources: Sequence[Path]) -> None:
    """Off the main thread: a walk of a large project is not on dbt's path."""
    if edited_since(memo, sources) and ENGINE.start_deferred():
        logger.debug("engine started: project files changed since the last run")


def mount_source_depots(profile: Any) -> None:
    """The depots the project's sources name by dataset address, mounted before the engine
    starts (profile/dataset_mounts.py); nothing for a profile made outside a project."""
    project_root = getattr(profile, "project_root", None)
    if project_root is None:
        return
    from dbt.adapters.lakehouse.profile.dataset_mounts import mount_dataset_depots

    model_paths = getattr(profile, "model_paths", None) or ["models"]
    mount_dataset_depots(profile.credentials, Path(project_root), model_paths)


def begin_audited_run(credentials: LakehouseCredentials) -> None:
    """Under `write_audit_publish`, this invocation's branch, and dbt's node events observed
    so the adapter knows at the end whether every node passed (audit/run.py)."""
    from dbt_common.events.event_manager_client import add_callback_to_manager
    from dbt_common.invocation import get_invocation_id

    run = audit.begin_run(get_invocation_id(), credentials.write_audit_publish, invoked_command())
    if run is not None:
        add_callback_to_manager(run.observe)


def begin_run_summary() -> None:
    """The table of the run's heaviest nodes, logged when dbt reports the run (report/)."""
    from dbt_common.events.event_manager_client import add_callback_to_manager

    from dbt.adapters.lakehouse.report.summary import begin_summary

    summary = begin_summary(invoked_command())
    if summary is not None:
        add_callback_to_manager(summary.observe)
