"""Layers that only point down (docs/architecture.md, "Layers"): the run-time imports of our own
modules, read from the source with `ast` (those inside functions too, which hide circles; those
under `if TYPE_CHECKING:` never run), form no circle and never reach a higher layer."""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping, Set
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ROOT = REPO / "dbt" / "adapters" / "lakehouse"
PACKAGE = "dbt.adapters.lakehouse"
ARCHITECTURE = REPO / "docs" / "architecture.md"

# Lowest first; a module's layer is the one of the longest prefix that names it. A module no
# prefix names fails the test: place it here and in docs/architecture.md's module map.
LAYERS: dict[str, tuple[str, ...]] = {
    name: tuple(prefixes.split())
    for name, prefixes in {
        # What every layer reads: errors, what a secret is, which dbt command runs, the engine
        # line installed and native execution's checks, the driver/Connect seam, query_tags.
        "base": "exceptions.py __version__.py invocation.py profile/secrets.py engine/runtime.py"
        " engine/native.py engine/jars/lines.py report/tags.py warm_dbt/client.py",
        # Depots: parsing, resolvers, storage kinds, key checks; the embedded catalog's file.
        "depot": "profile/depot/ embedded/sqlite_catalog.py",
        # The profile target and what is read from it alone.
        "profile": "credentials.py profile/",
        # Where SQL runs, and catalogs.yml's integrations turned into depots.
        "engine and catalogs": "engine/ embedded/ catalogs/",
        # What the adapter's methods and the materializations do, and the relations they name.
        "features": "iceberg/ audit/ changes/ time_travel/ maintenance/ delta_mirror/ models/"
        " mv/ reuse/ report/ checkpoints/ relation.py column.py",
        # What a dbt command sets up from the profile: the profile resolved once, `dbt debug`,
        # the early engine start and the catalogs it mounts, the compiled templates kept.
        "setup": "profile/resolved.py profile/debug.py profile/preflight command_setup.py"
        " catalogs/early.py template_code.py schema_cache.py kept_files.py",
        # The dbt surface: the plugin, the adapter, its connections and cursor.
        "surface": "__init__.py impl.py connections.py cursor.py config.py behavior_flags.py"
        " garbage_collector.py",
        # The dbt-lakehouse command, and the warm dbt's zygote and switch, which run dbt's own.
        "cli": "cli/ warm_dbt/",
    }.items()
}


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_nodes(node: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    found: list[ast.Import | ast.ImportFrom] = []
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Import | ast.ImportFrom):
            found.append(child)
        elif isinstance(child, ast.If) and _type_checking(child.test):
            for other in child.orelse:
                found += _import_nodes(ast.Module(body=[other], type_ignores=[]))
        else:
            found += _import_nodes(child)
    return found


def _module_file(root: Path, dotted: str) -> str | None:
    """`dbt.adapters.lakehouse.a.b` as the file it names under `root` (a/b.py, a/b/__init__.py)."""
    if dotted != PACKAGE and not dotted.startswith(PACKAGE + "."):
        return None
    rel = dotted[len(PACKAGE) :].lstrip(".").replace(".", "/")
    candidates = (f"{rel}.py", f"{rel}/__init__.py") if rel else ("__init__.py",)
    return next((c for c in candidates if (root / c).is_file()), None)


def runtime_imports(root: Path, rel: str) -> set[str]:
    """The modules of ours `rel` (a path under `root`) imports when it runs."""
    parts = [*PACKAGE.split("."), *rel[: -len(".py")].split("/")]
    package = parts[:-1]  # what a relative import starts from; for __init__.py the package
    found = set()
    for node in _import_nodes(ast.parse((root / rel).read_text())):
        if isinstance(node, ast.Import):
            named = [_module_file(root, alias.name) for alias in node.names]
        else:
            base = node.module or ""
            if node.level:
                start = package[: len(package) - node.level + 1]
                base = ".".join([*start, base] if base else start)
            # `from package import name`: the submodule `name` when there is one, else package.
            named = [
                _module_file(root, f"{base}.{alias.name}") or _module_file(root, base)
                for alias in node.names
            ]
        found |= {m for m in named if m and m != rel}
    return found


def import_graph(root: Path) -> dict[str, set[str]]:
    # A package's __init__.py runs before any module under it, but that is Python loading the
    # package (ours registers the plugin), not a use: only the modules named are edges.
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.py"))
    return {rel: runtime_imports(root, rel) for rel in files}


def import_cycles(graph: Mapping[str, Set[str]]) -> list[list[str]]:
    """Each circle as one path through it (a -> b -> ... -> a), by depth-first search."""
    cycles: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(module: str) -> None:
        state[module] = 1
        path.append(module)
        for target in sorted(graph.get(module, ())):
            if state.get(target) == 1:
                cycles.append([*path[path.index(target) :], target])
            elif target not in state:
                visit(target)
        path.pop()
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module)
    return cycles


def layer_of(module: str, layers: Mapping[str, tuple[str, ...]] = LAYERS) -> int | None:
    matches = [
        (len(prefix), index)
        for index, prefixes in enumerate(layers.values())
        for prefix in prefixes
        if module.startswith(prefix)
    ]
    return max(matches)[1] if matches else None


def layer_problems(
    graph: Mapping[str, Set[str]], layers: Mapping[str, tuple[str, ...]] = LAYERS
) -> list[str]:
    names = list(layers)
    problems = [
        f"{m} is in no layer: add it to LAYERS in tests/unit/test_layers.py and to the module "
        "map of docs/architecture.md"
        for m in sorted(graph)
        if layer_of(m, layers) is None
    ]
    for module, targets in sorted(graph.items()):
        here = layer_of(module, layers)
        for target in sorted(targets):
            there = layer_of(target, layers)
            if here is not None and there is not None and there > here:
                problems.append(
                    f"{module} ({names[here]}) imports {target} ({names[there]}), a higher layer"
                )
    return problems


def test_no_import_circle_at_run_time() -> None:
    cycles = import_cycles(import_graph(ROOT))
    assert not cycles, "import circles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_imports_point_down() -> None:
    problems = layer_problems(import_graph(ROOT))
    assert not problems, "\n".join(problems)


def test_a_planted_upward_import_and_circle_are_reported(tmp_path: Path) -> None:
    """The checks can fail: a depot module importing the credentials (inside a function), which
    import it back; the TYPE_CHECKING import of the adapter is no edge."""
    package = tmp_path / "pkg"
    (package / "profile" / "depot").mkdir(parents=True)
    for name in ("__init__.py", "profile/__init__.py", "profile/depot/__init__.py", "impl.py"):
        (package / name).write_text("")
    (package / "profile" / "depot" / "parse.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from dbt.adapters.lakehouse.impl import LakehouseAdapter\n"
        "def check():\n    from dbt.adapters.lakehouse.credentials import unknown_key_problems\n"
    )
    (package / "credentials.py").write_text("from .profile.depot import parse\n")
    graph = import_graph(package)
    assert graph["profile/depot/parse.py"] == {"credentials.py"}
    assert graph["credentials.py"] == {"profile/depot/parse.py"}
    problems = layer_problems(graph)
    assert problems == [
        "profile/depot/parse.py (depot) imports credentials.py (profile), a higher layer"
    ]
    cycle = ["credentials.py", "profile/depot/parse.py", "credentials.py"]
    assert import_cycles(graph) == [cycle]
    assert "in no layer" in layer_problems({"new.py": set()})[0]


def test_the_module_map_names_every_module() -> None:
    """Each module's file name is in docs/architecture.md's module map: a top-level module as a
    row of the map's table, any other in the paragraph of its top package."""
    text = ARCHITECTURE.read_text()
    section = text.split("## Module map", 1)[1].split("\n## ", 1)[0]
    paragraphs = {m.group(1): m.start() for m in re.finditer(r"\*\*`(\w+)/`\*\*", section)}
    missing = []
    for module in import_graph(ROOT):
        top, _, rest = module.partition("/")
        if not rest:
            if f"| `{module}` |" not in section:
                missing.append(module)
            continue
        if top in paragraphs:
            start = paragraphs[top]
            later = [s for s in paragraphs.values() if s > start]
            where = section[start : min(later, default=len(section))]
        else:
            missing.append(f"{top}/ (no **`{top}/`** paragraph)")
            continue
        name = module.rsplit("/", 1)[-1]
        if name == "__init__.py":  # a package: a nested one is named in its top's paragraph
            package = module.rsplit("/", 2)[-2] + "/"
            if package != f"{top}/" and package not in where:
                missing.append(module)
        elif name not in where:
            missing.append(module)
    assert not missing, "not in docs/architecture.md's module map: " + ", ".join(missing)
