"""Whether the project changed since the memo's last run (reuse/edited.py)."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

from dbt.adapters.lakehouse.reuse.edited import edited_since, project_sources


def _aged(path: Path, seconds_ago: float) -> None:
    stamp = path.stat().st_mtime - seconds_ago
    os.utime(path, (stamp, stamp))


def _project(tmp_path: Path) -> tuple[Path, Path]:
    """A project whose files and folders are all older than its memo file."""
    (tmp_path / "models" / "staging").mkdir(parents=True)
    (tmp_path / "models" / "staging" / "stg.sql").write_text("select 1")
    (tmp_path / "dbt_project.yml").write_text("name: p")
    memo = tmp_path / "target" / "memo.json"
    memo.parent.mkdir()
    memo.write_text("{}")
    for path in [*tmp_path.rglob("*"), tmp_path]:
        _aged(path, 30 if path == memo else 60)  # an edit now is newer than the memo
    return tmp_path, memo


def test_project_sources_are_dbts_parsed_folders_and_the_project_file(tmp_path: Path) -> None:
    config = SimpleNamespace(
        project_root=str(tmp_path),
        model_paths=["models"],
        seed_paths=["seeds"],
        macro_paths=["macros", "models"],
        packages_install_path="dbt_packages",
    )
    assert project_sources(config) == tuple(
        tmp_path / p for p in ("dbt_project.yml", "models", "seeds", "macros", "dbt_packages")
    )
    assert project_sources(SimpleNamespace()) == ()  # a profile outside a project


def test_nothing_newer_than_the_memo_is_no_edit(tmp_path: Path) -> None:
    root, memo = _project(tmp_path)
    sources = (root / "dbt_project.yml", root / "models", root / "seeds")  # seeds: not there
    assert not edited_since(memo, sources)
    assert edited_since(root / "target" / "absent.json", sources)  # no memo yet


def test_an_edited_file_deep_down_is_an_edit(tmp_path: Path) -> None:
    root, memo = _project(tmp_path)
    (root / "models" / "staging" / "stg.sql").write_text("select 2")
    _aged(root / "models" / "staging", 60)  # the folder itself unchanged: the file tells
    assert edited_since(memo, (root / "models",))


def test_a_file_added_or_removed_is_an_edit_through_its_folder(tmp_path: Path) -> None:
    root, memo = _project(tmp_path)
    (root / "models" / "staging" / "stg.sql").unlink()
    assert edited_since(memo, (root / "models",))


def test_hidden_files_and_other_folders_are_not_watched(tmp_path: Path) -> None:
    root, memo = _project(tmp_path)
    (root / "models" / ".stg.sql.swp").write_text("editor state")
    _aged(root / "models", 60)
    (root / "logs").mkdir()  # dbt's own output, not a source
    assert not edited_since(memo, (root / "models", root / "dbt_project.yml"))
