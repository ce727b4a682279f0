"""The JSON schemas dbt validates its objects against, kept on disk between dbt processes.

dbt-common builds a class's JSON schema from its dataclass fields (mashumaro) the first time
the process validates one of its objects, and keeps it for the process only: every dbt command
builds those of the project file, the profile and the adapter's credentials, and each parsed
node's, again. On the 20-node sample that was 0.15 s of a build with nothing changed, 0.6 s of
a parse after an edit (the node's, its config's and its tests' schemas) and 1.3 s of a full
parse, on 2 cores. The adapter keeps each schema in `<cache>/dbt-schemas/` as JSON, keyed by
the class and by what its schema is built from: Python's bytecode magic number, the installs of
mashumaro, dbt-common, dbt-adapters, dbt-core and the semantic-layer interfaces it nests (their
files' stamps: an upgrade or a reinstall is a new key), and the file that defines the class (an
adapter's credentials edited in a source checkout). A class its name does not find in its
module (made in a function), or whose schema does not survive JSON as it is, is left to dbt.

Installed when dbt loads the plugin (before it validates the profile's credentials); the project
flags dbt validates before that are its own. LAKEHOUSE_SCHEMA_CACHE=off turns it off (on or off,
also 1/0 and true/false; another value is refused by the command's set-up, naming them).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib
import importlib.util
import json
import sys
import threading
from collections.abc import Callable, Mapping
from typing import Any

from dbt.adapters.lakehouse.engine.jars.cache import cache_dir
from dbt.adapters.lakehouse.kept_files import KeptStore, file_stamp
from dbt.adapters.lakehouse.reuse.plan import env_switch

ENV = "LAKEHOUSE_SCHEMA_CACHE"
_FOLDER = "dbt-schemas"
# A handful of classes per install of dbt: past this many entries, the oldest half goes.
KEEP = 512
# The store serving the process, once installed.
_store: SchemaStore | None = None
_lock = threading.Lock()
Builder = Callable[[type], dict[str, Any]]


def install(env: Mapping[str, str]) -> bool:
    """Serve dbt-common's `json_schema` from the cache folder for the rest of the process
    (once); False when switched off, given a value that is not a switch, or where this
    dbt-common's schemas are not built where this expects."""
    try:
        if env_switch(env, ENV) is False:
            return False
    except Exception:  # the command's set-up says what is accepted
        return False
    global _store
    with _lock:
        if _store is not None:
            return True
        try:
            from dbt_common.dataclass_schema import dbtClassMixin

            own = dbtClassMixin.__dict__.get("json_schema")
            if not isinstance(own, classmethod):
                return False
            store = SchemaStore(cache_dir(env) / _FOLDER, installs())
        except Exception:  # another dbt-common: its schemas are built as they are
            return False
        built = own.__func__
        cached: Any = functools.lru_cache(lambda cls: store.schema(cls, built))
        served: Any = classmethod(cached)
        dbtClassMixin.json_schema = served  # type: ignore[method-assign]
        _store = store
        return True


def installs() -> tuple[str, ...]:
    """The stamps of the installs a schema is built from (kept_files.file_stamp): the builder,
    dbt's packages, and the semantic-layer interfaces whose enums dbt's node classes nest
    (metricflow's from dbt-core 1.12, dbt's own before)."""
    import dbt.adapters.__about__ as adapters_about
    import dbt.version as core_version
    import dbt_common.dataclass_schema as common_schema
    import mashumaro.jsonschema.schema as builder

    modules = [builder, common_schema, adapters_about, core_version]
    for name in SEMANTIC_INTERFACES:
        with contextlib.suppress(ImportError):
            modules.append(importlib.import_module(name))
    return tuple(file_stamp(str(module.__file__)) for module in modules)


SEMANTIC_INTERFACES = ("metricflow_semantic_interfaces", "dbt_semantic_interfaces")


class SchemaStore(KeptStore):
    """JSON schemas by class, in a folder (one JSON file per class and installs)."""

    KEEP = KEEP

    def key(self, cls: type) -> str | None:
        """The class's entry name, or None when its name does not find it in its module (one
        made in a function or by make_dataclass: two of one name may differ) or that module's
        file is not known."""
        module = sys.modules.get(cls.__module__)
        found: Any = module
        for part in cls.__qualname__.split("."):
            found = getattr(found, part, None)
        path = getattr(module, "__file__", None)
        if found is not cls or not path:
            return None
        try:
            own = file_stamp(str(path))
        except OSError:
            return None
        text = repr(
            (importlib.util.MAGIC_NUMBER, self.installs, cls.__module__, cls.__qualname__, own)
        )
        return hashlib.sha256(text.encode()).hexdigest()

    def schema(self, cls: type, build: Builder) -> dict[str, Any]:
        """`build(cls)`, from the folder when an earlier process kept it."""
        key = self.key(cls)
        if key is None:
            return build(cls)
        path = self.folder / f"{key}.json"
        try:
            found = json.loads(path.read_bytes())
            if isinstance(found, dict):
                self.hits += 1
                return found
        except (OSError, ValueError):  # not kept yet, or unreadable
            pass
        schema = build(cls)
        self.misses += 1
        try:
            text = json.dumps(schema, sort_keys=True)
            same = json.loads(text) == schema  # tuples or non-text keys would read back changed
        except (TypeError, ValueError):
            same = False
        if same:
            self._keep(path, text.encode())
        return schema
