"""The incremental strategy macros rendered without an engine, the way dbt renders them: each
macro is its own template, and every macro is reachable from the context through a wrapper
that turns `return(...)` into a value. Plus the model the tests render them for."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import dbt.include.global_project as global_project
import jinja2
import pytz
from dbt_common.clients.jinja import extract_toplevel_blocks
from dbt_common.exceptions import CompilationError

from dbt.adapters.lakehouse.column import LakehouseColumn
from dbt.adapters.lakehouse.engine.sql_errors import check_failure_sql
from dbt.adapters.lakehouse.relation import LakehouseRelation
from dbt.include import lakehouse

OURS = Path(lakehouse.PACKAGE_PATH) / "macros" / "materializations" / "incremental"
DBT_INCREMENTAL = (
    Path(global_project.PACKAGE_PATH) / "macros" / "materializations" / "models" / "incremental"
)
STRATEGIES = ["append", "merge", "replace", "insert_overwrite", "delete+insert", "microbatch"]


class _Return(Exception):
    def __init__(self, value: Any) -> None:
        self.value = value


def _return(value: Any) -> None:
    raise _Return(value)


def _raise_compiler_error(message: str) -> None:
    raise CompilationError(message)


def sql_string(text: str) -> str:
    template = (Path(lakehouse.PACKAGE_PATH) / "macros" / "utils" / "sql_string.sql").read_text()
    env = jinja2.Environment()
    return str(env.from_string(template).module.lakehouse_sql_string(text))  # type: ignore[attr-defined]


class _Adapter:
    """What the strategy macros ask of the adapter while rendering."""

    def __init__(self, context: dict[str, Any], merge_defaults: dict[str, Any]) -> None:
        self._context = context
        self._merge_defaults = merge_defaults

    def changes_merge_default(self, node_id: str, name: str) -> Any:
        return self._merge_defaults.get(name)

    def dispatch(self, name: str, macro_namespace: str | None = None) -> Any:
        for prefix in ("lakehouse__", "default__"):
            if prefix + name in self._context:
                return self._context[prefix + name]
        raise KeyError(name)

    @staticmethod
    def quote(identifier: str) -> str:
        return f"`{identifier}`"

    @staticmethod
    def check_failure_sql(message_sql: str) -> str:
        return check_failure_sql(message_sql)


class MacroGenerator:
    """A macro as dbt hands it out: callable, and naming itself in `.macro.unique_id`."""

    def __init__(self, unique_id: str, call: Any) -> None:
        self.macro = SimpleNamespace(unique_id=unique_id)
        self._call = call

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._call(*args, **kwargs)


class Renderer:
    def __init__(
        self,
        config: dict[str, Any],
        model: dict[str, Any] | None = None,
        merge_defaults: dict[str, Any] | None = None,
    ) -> None:
        self.context: dict[str, Any] = {
            "return": _return,
            "lakehouse_sql_string": sql_string,
            "exceptions": SimpleNamespace(raise_compiler_error=_raise_compiler_error),
            "config": SimpleNamespace(get=lambda key, default=None: config.get(key, default)),
            "model": {"name": "orders", "unique_id": "model.pkg.orders", **(model or {})},
            "modules": SimpleNamespace(pytz=pytz, datetime=dt),
        }
        self.context["adapter"] = _Adapter(self.context, merge_defaults or {})
        env = jinja2.Environment(extensions=["jinja2.ext.do", "jinja2.ext.loopcontrols"])
        paths = sorted(OURS.glob("*.sql")) + [
            DBT_INCREMENTAL / "merge.sql",
            DBT_INCREMENTAL / "column_helpers.sql",
        ]
        blocks: dict[str, tuple[str, str]] = {}  # name -> (package, source)
        for path in paths:
            package = "dbt_lakehouse" if path.is_relative_to(OURS) else "dbt"
            for block in extract_toplevel_blocks(
                path.read_text(), allowed_blocks={"macro"}, collect_raw_data=False
            ):
                blocks.setdefault(block.block_name, (package, block.full_block))  # ours first
        # Jinja copies the globals when a template is built: every name must be there first.
        self._macros: dict[str, Any] = {}
        for name, (package, _) in blocks.items():
            self.context[name] = MacroGenerator(f"macro.{package}.{name}", self._callable(name))
        for name, (_, source) in blocks.items():
            template = env.from_string(source, globals=self.context)
            self._macros[name] = getattr(template.module, name)

    def _callable(self, name: str) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                return self._macros[name](*args, **kwargs)
            except _Return as returned:
                return returned.value

        return call

    def strategy(self, name: str, **arg_dict: Any) -> str:
        macro = self.context[f"lakehouse__get_incremental_{name.replace('+', '_')}_sql"]
        return re.sub(r"\s+", " ", str(macro(strategy_args(**arg_dict)))).strip()


def column(name: str, dtype: str) -> LakehouseColumn:
    return LakehouseColumn(column=name, dtype=dtype)


COLUMNS = [
    column("id", "bigint"),
    column("region", "string"),
    column("amount", "decimal(10,2)"),
    column("ts", "timestamp"),
    column("tags", "map<string,string>"),
]
TARGET = LakehouseRelation.create(database="lakehouse", schema="sales", identifier="orders")
TEMP = LakehouseRelation.create(identifier="sales__orders__dbt_tmp").include(
    database=False, schema=False
)


def strategy_args(**overrides: Any) -> dict[str, Any]:
    args = {
        "target_relation": TARGET,
        "temp_relation": TEMP,
        "unique_key": "id",
        "dest_columns": COLUMNS,
        "incremental_predicates": None,
    }
    args.update(overrides)
    return args


COLS = "`id`, `region`, `amount`, `ts`, `tags`"
