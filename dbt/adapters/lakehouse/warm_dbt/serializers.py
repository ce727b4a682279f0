"""dbt's (de)serializers compiled in the zygote, once, rather than in each command.

dbt-common's classes ask mashumaro for `lazy_compilation`: a class's `from_dict`, `to_dict`,
`from_msgpack` and `to_msgpack` are stubs until their first call, which generates and compiles
the real method (for the classes nested in its fields too, as they are first met). A command
reading the saved manifest back for partial parsing, writing manifest.json and run_results.json
and validating its configs calls about a hundred of them: on the sample's build with every node
reused, about half a second of a 1.2 s command forked from a zygote that had not.

Each stub compiles before it reads its argument, so calling it with an argument it cannot read
(None; an instance made without its fields) compiles the method and then fails, and the
failure is dropped. A method already compiled fails the same way, doing nothing.
"""

from __future__ import annotations

import dataclasses
from typing import Any

_MESSAGEPACK_EMPTY_MAP = b"\x80"


def subclasses(root: type) -> list[type]:
    found: list[type] = []
    seen: set[type] = set()
    stack = [root]
    while stack:
        subs: list[type] = stack.pop().__subclasses__()
        for sub in subs:
            if sub not in seen:
                seen.add(sub)
                found.append(sub)
                stack.append(sub)
    return found


def compile_all(root: type | None = None) -> int:
    """Compile the (de)serializers of every dataclass of mashumaro's mixins imported now (or of
    `root`'s subclasses); how many classes were met."""
    from mashumaro.mixins.dict import DataClassDictMixin

    classes = [
        cls
        for cls in subclasses(root or DataClassDictMixin)
        if dataclasses.is_dataclass(cls) and not getattr(cls, "__parameters__", ())
    ]
    for cls in classes:
        try:
            blank: Any = object.__new__(cls)
        except TypeError:
            blank = None
        for method, argument in (
            ("from_dict", None),
            ("from_msgpack", _MESSAGEPACK_EMPTY_MAP),
            ("to_dict", blank),
            ("to_msgpack", blank),
        ):
            call = getattr(cls, method, None)
            if call is None:
                continue
            try:
                call(argument)
            except Exception:  # noqa: S110 - the method is compiled; the blank cannot be read
                pass
    return len(classes)
