"""The compiled templates kept between processes (template_code.py), on dbt-common's own
environments: what is kept, that a kept template renders as dbt's own compile does, and that
nothing but a node's or a macro's template is kept."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from dbt_common.clients import jinja as common_jinja

from dbt.adapters.lakehouse import template_code
from dbt.adapters.lakehouse.kept_files import prune
from dbt.adapters.lakehouse.template_code import CodeStore, environment_signature

MACRO = """{% macro greet(names) -%}
  {%- for name in names %}hello {{ name | upper }}{% if not loop.last %}, {% endif %}{% endfor -%}
{%- endmacro %}"""
NODE = SimpleNamespace(unique_id="macro.p.greet", name="greet")


def _get_template(folder: Path) -> tuple[Any, CodeStore]:
    store = CodeStore(folder, ("jinja", "dbt-common"))
    original = common_jinja.get_template
    return template_code._cached_get_template(common_jinja, original, store), store


def _render(template: Any) -> str:
    return template.make_module(vars={}).__dict__["dbt_macro__greet"](["a", "b"])


def test_a_kept_template_renders_as_dbts_own_compile(tmp_path: Path, monkeypatch: Any) -> None:
    own = _render(common_jinja.get_template(MACRO, {}, node=NODE))
    get_template, store = _get_template(tmp_path)
    assert _render(get_template(MACRO, {}, node=NODE)) == own == "hello A, hello B"
    assert (store.hits, store.misses) == (0, 1)
    assert len(os.listdir(tmp_path)) == 1

    # The next process reads the code back: Jinja compiles nothing.
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("compiled again")

    monkeypatch.setattr(common_jinja.MacroFuzzEnvironment, "compile", refuse)
    again, second = _get_template(tmp_path)
    assert _render(again(MACRO, {}, node=NODE)) == own
    assert (second.hits, second.misses) == (1, 0)


def test_an_unreadable_entry_is_compiled_and_kept_again(tmp_path: Path) -> None:
    get_template, store = _get_template(tmp_path)
    get_template(MACRO, {}, node=NODE)
    (entry,) = tmp_path.iterdir()
    entry.write_bytes(b"not marshal")
    again, second = _get_template(tmp_path)
    assert _render(again(MACRO, {}, node=NODE)) == "hello A, hello B"
    assert (second.hits, second.misses) == (0, 1)
    assert entry.read_bytes() != b"not marshal"


def test_a_template_of_no_node_is_left_to_dbt(tmp_path: Path) -> None:
    """profiles.yml and dbt_project.yml values are rendered with no node: a literal secret
    beside their Jinja must not reach a file."""
    get_template, store = _get_template(tmp_path)
    template = get_template("s3cret-{{ 'x' }}", {}, native=True)
    assert template.render({}) == "s3cret-x"
    assert (store.hits, store.misses) == (0, 0)
    assert not tmp_path.exists() or not os.listdir(tmp_path)


def test_the_environment_shapes_the_key() -> None:
    text = common_jinja.get_environment(NODE, native=False)
    native = common_jinja.get_environment(NODE, native=True)
    versions = ("3.1.6", "1.39.0")
    assert environment_signature(text, versions) == environment_signature(
        common_jinja.get_environment(NODE, capture_macros=True), versions
    )
    assert environment_signature(text, versions) != environment_signature(native, versions)
    assert environment_signature(text, versions) != environment_signature(text, ("3.1.7", "1.39.0"))
    text.trim_blocks = True
    assert environment_signature(text, versions) != environment_signature(
        common_jinja.get_environment(NODE), versions
    )


def test_a_syntax_error_is_dbts_compilation_error(tmp_path: Path) -> None:
    from dbt_common.exceptions import CompilationError

    get_template, store = _get_template(tmp_path)
    with pytest.raises(CompilationError, match="unexpected"):
        get_template("{% macro m() %}{{ 1 + }}{% endmacro %}", {}, node=NODE)
    assert store.misses == 0


def test_prune_keeps_the_newest_half(tmp_path: Path) -> None:
    for i in range(6):
        entry = tmp_path / f"k{i}"
        entry.write_bytes(b"")
        os.utime(entry, (1000 + i, 1000 + i))
    assert prune(tmp_path, keep=6) == 0
    assert prune(tmp_path, keep=5) == 3
    assert sorted(os.listdir(tmp_path)) == ["k3", "k4", "k5"]


def test_the_switch_turns_it_off(tmp_path: Path) -> None:
    assert template_code.install(tmp_path, {template_code.ENV: "off"}) is False
    assert not (tmp_path / "jinja-code").exists()


def test_a_value_that_is_no_switch_is_refused_naming_the_accepted_ones(tmp_path: Path) -> None:
    from dbt_common.exceptions import DbtRuntimeError

    with pytest.raises(DbtRuntimeError, match="LAKEHOUSE_TEMPLATE_CACHE='maybe' is not a switch"):
        template_code.install(tmp_path, {template_code.ENV: "maybe"})
