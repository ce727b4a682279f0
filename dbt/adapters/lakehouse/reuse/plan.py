"""Whether a node may be reused this run, and the words that say why not: pure decisions over
its settings, the switch, and the record its table's `main` holds (mv/state.py's record under
the `lakehouse.build.` prefix: one mechanism for materialized views and reused nodes)."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.lakehouse.mv.state import SQL_CHANGED, RefreshPlan
from dbt.adapters.lakehouse.warm_dbt.client import OFF_WORDS, ON_WORDS

ENV = "LAKEHOUSE_REUSE"
# Settings that change what a reused node would leave behind without reaching its query's plan
# or a table's statement (a view's statement is not compared: these stand for it).
ALSO_WATCHED = ("grants", "persist_docs", "write_order_by", "contract")
# What an incremental run or a snapshot does with the same new rows: a change to any of these is
# built (conservatively: the rows a from-scratch build leaves may differ).
INCREMENTAL_SETTINGS = (
    "incremental_strategy", "unique_key", "incremental_predicates", "predicates",
    "merge_update_columns", "merge_exclude_columns", "on_schema_change", "latest_by",
    "delete_condition", "partition_by", "format_version", "table_properties",
)  # fmt: skip
SNAPSHOT_SETTINGS = (
    "strategy", "unique_key", "check_cols", "updated_at", "hard_deletes",
    "invalidate_hard_deletes", "snapshot_meta_column_names", "dbt_valid_to_current",
    "format_version", "partition_by", "table_properties",
)  # fmt: skip
_AROUND_QUERY = re.compile(r"\s*<query>\s*")


@dataclass(frozen=True)
class Switch:
    """Whether reuse applies to the node, and why not when a setting said so (None: off by
    default, nothing to say)."""

    on: bool
    why_off: str | None = None


def env_switch(env: Mapping[str, str], name: str) -> bool | None:
    """An on/off environment variable: True or False, None when unset or empty; any other
    value is refused, naming the accepted ones (template_code.py reads its switch so too)."""
    given = (env.get(name) or "").strip().lower()
    if not given:
        return None
    if given not in ON_WORDS + OFF_WORDS:
        raise DbtRuntimeError(
            f"{name}={env.get(name)!r} is not a switch. Accepted: on or off (also 1/0, true/false)."
        )
    return given in ON_WORDS


def switch(config_reuse: object, profile_reuse: bool, env: Mapping[str, str]) -> Switch:
    """Whether reuse applies to a node: LAKEHOUSE_REUSE=on|off decides for the whole run; else
    the model's `reuse` (false: never; true: yes, hooks or not); else the profile's `reuse`."""
    given = env_switch(env, ENV)
    if config_reuse is not None and not isinstance(config_reuse, bool):
        raise DbtRuntimeError(
            f"Model config `reuse` must be true or false; got {config_reuse!r}. Fix: reuse: "
            "false (no quotes) to always build the model."
        )
    if given is False:
        return Switch(False, f"{ENV}={env.get(ENV)}")
    if config_reuse is False:
        return Switch(False, "reuse: false")
    return Switch(given is True or config_reuse is True or profile_reuse)


def statement_shape(statement: str, query: str) -> str:
    """The build statement without its query's text (the plan digest stands for the query), so
    a comment in the model is no change while a partitioning or a property is one."""
    stripped = query.strip()
    if not stripped or stripped not in statement:
        return statement
    # The whitespace around the query is the model file's (blank lines before or after its
    # SQL), not the statement's.
    return _AROUND_QUERY.sub(" <query> ", statement.replace(stripped, "<query>")).strip()


def build_reasons(plan: RefreshPlan) -> str:
    """Why a node with a record was built, from the refresh plan's reasons."""
    if plan.action == "create":
        return "no record of an earlier build in its table's main"
    said = ["its query or settings changed" if r == SQL_CHANGED else r for r in plan.reasons]
    if plan.config_changed:
        said.append("its watched settings changed")
    return "; ".join(dict.fromkeys(said)) or "it changed"


def also_watched(model: Mapping[str, Any], settings: tuple[str, ...] = ()) -> str:
    """The watched settings of a node (dbt's dict of it), its kind's own `settings`, and the
    docs persist_docs writes."""
    config = model["config"]
    watched: dict[str, Any] = {key: config.get(key) for key in (*ALSO_WATCHED, *settings)}
    if config.get("persist_docs"):
        columns = model.get("columns") or {}
        watched["docs"] = [
            model.get("description"),
            {name: (c or {}).get("description") for name, c in sorted(columns.items())},
        ]
    return "-- settings " + json.dumps(watched, sort_keys=True, default=str)


def view_definition(
    query: str, schema_json: str, context: tuple[str, str], model: Mapping[str, Any]
) -> str:
    """The digest of what a view's statement stores: its query's text as the view keeps it
    (Spark stores the query from its first token to its last: comments and blank lines around
    it are not kept), the columns it returns (`schema_json`, with their comments), the catalog
    and namespace its names resolve in, and the settings its statement and grants carry."""
    text = _AROUND_TEXT.sub("", query)
    document = json.dumps([text, schema_json, list(context)]) + "\n" + also_watched(model)
    return hashlib.sha256(document.encode()).hexdigest()


# What Spark does not store of a view's query: comments and blanks before and after it.
_AROUND_TEXT = re.compile(r"^(?:\s*/\*.*?\*/|\s*--[^\n]*(?:\n|$))*\s*|\s+$", re.S)


# A seed's settings that shape its rows (dbt's seed configs).
SEED_SETTINGS = ("column_types", "quote_columns", "delimiter", "full_refresh")


def seed_identity(model: Mapping[str, Any]) -> str:
    """A seed's CSV content and the settings that shape its rows. dbt's checksum is the file's
    sha256 up to 1 MiB and only its path beyond: a larger file is hashed here."""
    checksum = model.get("checksum") or {}
    content = checksum.get("checksum") if checksum.get("name") == "sha256" else None
    if content is None:
        path = Path(str(model["root_path"])) / str(model["original_file_path"])
        digest = hashlib.sha256()
        with path.open("rb") as csv:
            for block in iter(lambda: csv.read(1 << 20), b""):
                digest.update(block)
        content = digest.hexdigest()
    config = model["config"]
    settings = {key: config.get(key) for key in SEED_SETTINGS}
    return "\n".join((f"-- csv {content}", json.dumps(settings, sort_keys=True, default=str),
                      also_watched(model)))  # fmt: skip
