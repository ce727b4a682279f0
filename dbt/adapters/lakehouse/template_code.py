"""The compiled code of dbt's Jinja templates, kept on disk between dbt processes.

dbt compiles each macro it calls, and each node's SQL and test arguments, from their Jinja
source once per process (dbt_common's template cache lives as long as the process): a warm
`dbt build` of the 20-node sample compiles 108 templates, about 0.2 s of a 4.3 s build on 2
cores, the materializations the largest (the incremental one alone 28 ms). Jinja's own bytecode
cache serves only templates read through a loader, and dbt compiles from strings, so the
adapter keeps the code objects here, as Python keeps a module's in `__pycache__`: keyed by the
source, everything about the environment that shapes the code Jinja generates (its class,
extensions, filters, lexer settings, the native flag), the Jinja and dbt-common installs and
the Python version, read back with marshal (docs/running.md, "Compiled templates").

Only templates dbt compiles for a node or a macro (project and package code) are kept; the
rendering of profiles.yml and dbt_project.yml values, which could hold a literal secret beside
their Jinja, is left to dbt. LAKEHOUSE_TEMPLATE_CACHE=off turns it off (on or off, also 1/0 and
true/false; another value is refused); any problem reading or writing the folder falls back to
dbt's own compile.
"""

from __future__ import annotations

import hashlib
import importlib.util
import marshal
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from types import CodeType
from typing import Any

from dbt.adapters.lakehouse.kept_files import KeptStore, file_stamp
from dbt.adapters.lakehouse.reuse.plan import env_switch

ENV = "LAKEHOUSE_TEMPLATE_CACHE"
# The folder keeps at most this many entries: a miss past it removes the oldest half.
KEEP = 4096
_FOLDER = "jinja-code"
_installed = False
_lock = threading.Lock()


def install(folder: Path, env: Mapping[str, str]) -> bool:
    """Serve dbt's template compiles from `folder` for the rest of the process (once); False
    when switched off or when this dbt-common does not have the functions this replaces. A
    value of the switch other than on or off is refused, naming the accepted ones."""
    if env_switch(env, ENV) is False:
        return False
    global _installed
    with _lock:
        if _installed:
            return True
        try:
            from dbt.clients import jinja as dbt_jinja
            from dbt_common.clients import jinja as common_jinja

            original = common_jinja.get_template
            needed = ("MACRO_DEBUGGING", "catch_jinja", "get_environment")
            if getattr(dbt_jinja, "get_template", None) is not original or not all(
                hasattr(common_jinja, name) for name in needed
            ):
                return False
            installs = _installs(common_jinja)
        except Exception:  # another dbt-common: its compiles are left as they are
            return False
        store = CodeStore(folder / _FOLDER, installs)
        cached = _cached_get_template(common_jinja, original, store)
        common_jinja.get_template = cached
        dbt_jinja.get_template = cached
        _installed = True
        return True


def _installs(common_jinja: Any) -> tuple[str, ...]:
    """Jinja's and dbt-common's installs as Python tells a module's source changed (the path,
    size and modification time of the files that generate the code): an upgrade or a
    reinstall is a new key. importlib.metadata's versions would cost ~40 ms a process."""
    import jinja2.compiler

    files = (jinja2.compiler.__file__, jinja2.__file__, common_jinja.__file__)
    return tuple(file_stamp(path) for path in files)


def _cached_get_template(common_jinja: Any, original: Callable[..., Any], store: CodeStore) -> Any:
    """dbt_common's get_template, with the code of a node's or a macro's template from `store`
    (the same environment, the same template class and globals as env.from_string gives)."""

    def get_template(
        string: Any,
        ctx: dict[str, Any],
        node: Any = None,
        capture_macros: bool = False,
        native: bool = False,
    ) -> Any:
        if node is None or not isinstance(string, str) or common_jinja.MACRO_DEBUGGING:
            return original(string, ctx, node, capture_macros=capture_macros, native=native)
        with common_jinja.catch_jinja(node):
            env = common_jinja.get_environment(node, capture_macros, native=native)
            code = store.code(env, string)
            return env.template_class.from_code(env, code, env.make_globals(ctx), None)

    return get_template


class CodeStore(KeptStore):
    """Compiled template code by key, in a folder (one marshal file per template)."""

    KEEP = KEEP

    def key(self, env: Any, source: str) -> str:
        return hashlib.sha256(
            (environment_signature(env, self.installs) + "\0" + source).encode()
        ).hexdigest()

    def code(self, env: Any, source: str) -> CodeType:
        """The code env.compile(source) gives, from the folder when an earlier process kept it."""
        path = self.folder / self.key(env, source)
        try:
            code = marshal.loads(path.read_bytes())
            if isinstance(code, CodeType):
                self.hits += 1
                return code
        except (OSError, ValueError, EOFError, TypeError):  # not kept yet, or unreadable
            pass
        code = env.compile(source)
        self.misses += 1
        self._keep(path, marshal.dumps(code))
        return code


def environment_signature(env: Any, installs: tuple[str, ...]) -> str:
    """What shapes the code Jinja generates for a source in `env`: its class (a sandbox
    intercepts operators in the code), extensions (their tags), filters (constant folding
    calls them), the lexer's settings, autoescape and finalize, and Jinja's and dbt-common's
    installs."""
    kind = type(env)
    lexer = (
        env.block_start_string, env.block_end_string, env.variable_start_string,
        env.variable_end_string, env.comment_start_string, env.comment_end_string,
        env.line_statement_prefix, env.line_comment_prefix, env.trim_blocks, env.lstrip_blocks,
        env.newline_sequence, env.keep_trailing_newline,
    )  # fmt: skip
    return repr(
        (
            importlib.util.MAGIC_NUMBER,
            installs,
            f"{kind.__module__}.{kind.__qualname__}",
            sorted(f"{type(e).__module__}.{type(e).__qualname__}" for e in env.extensions.values()),
            sorted(
                (name, getattr(f, "__module__", ""), getattr(f, "__qualname__", ""))
                for name, f in env.filters.items()
            ),
            env.optimized,
            env.autoescape if isinstance(env.autoescape, bool) else "callable",
            env.finalize is None,
            lexer,
        )
    )
