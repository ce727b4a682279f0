"""The warm dbt's pure parts: the zygote's key and socket, the `.pth` line, a zygote's check of
its module files, the client's exit as its child's (docs/warm-dbt.md)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from dbt_common.dataclass_schema import dbtClassMixin

from dbt.adapters.lakehouse.warm_dbt import client, serializers, switch, zygote

ENV = {"HOME": "/home/u", "PATH": "/usr/bin", "DBT_TARGET": "dev"}


def test_the_key_follows_the_environment_folder_and_site_folders(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    key = client.zygote_key(ENV, "/p", [str(site)])
    assert key == client.zygote_key(dict(ENV), "/p", [str(site)])
    # What the shell sets per command changes nothing dbt imports.
    shell = {**ENV, "_": "/usr/bin/dbt", "PWD": "/p", "OLDPWD": "/", "SHLVL": "2"}
    assert client.zygote_key(shell, "/p", [str(site)]) == key
    assert client.zygote_key({**ENV, "DBT_TARGET": "prod"}, "/p", [str(site)]) != key
    assert client.zygote_key({**ENV, "LAKEHOUSE_REUSE": "off"}, "/p", [str(site)]) != key
    assert client.zygote_key(ENV, "/q", [str(site)]) != key
    before = os.stat(site).st_mtime_ns
    (site / "new_package").mkdir()  # a package installed
    os.utime(site, ns=(before + 10**9, before + 10**9))
    assert client.zygote_key(ENV, "/p", [str(site)]) != key
    # A path entry that does not exist is no stamp (and no error).
    assert client.zygote_key(ENV, "/p", [str(site), str(tmp_path / "gone")]) == client.zygote_key(
        ENV, "/p", [str(site)]
    )


def test_where_zygotes_listen() -> None:
    assert client.user_cache_dir({"LAKEHOUSE_CACHE_DIR": "/c"}) == "/c"
    assert client.user_cache_dir({"XDG_CACHE_HOME": "/x"}) == "/x/dbt-lakehouse"
    assert client.zygotes_dir({"XDG_CACHE_HOME": "/x"}) == "/x/dbt-lakehouse/warm-dbt"
    assert client.zygotes_dir({"LAKEHOUSE_WARM_DBT_DIR": "/w", "XDG_CACHE_HOME": "/x"}) == "/w"
    assert client.socket_path({"LAKEHOUSE_WARM_DBT_DIR": "/w"}, "k") == "/w/k.sock"
    # Past what a socket's address holds: no warm dbt, rather than a failing command.
    assert client.socket_path({"LAKEHOUSE_WARM_DBT_DIR": "/" + "d" * 120}, "k") is None


def test_the_pth_line_loads_the_client_for_the_dbt_script_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    served = tmp_path / "served"
    fake = tmp_path / "client.py"
    fake.write_text(
        "def serve_or_return(argv):\n"
        f"    open({str(served)!r}, 'a').write(' '.join(argv) + '\\n')\n"
    )
    line = switch.pth_line(str(fake))
    assert line.startswith("import ") and line.count("\n") == 1  # what site runs of a .pth
    for argv in (["/v/bin/python", "-m", "x"], ["/v/bin/dbt-lakehouse", "x"], []):
        monkeypatch.setattr(sys, "argv", argv)
        exec(line, {})
    assert not served.exists()
    monkeypatch.setattr(sys, "argv", ["/v/bin/dbt", "build", "-s", "a"])
    exec(line, {})
    assert served.read_text() == "/v/bin/dbt build -s a\n"
    fake.unlink()  # the package moved or was removed: nothing is loaded, nothing fails
    exec(line, {})


def test_on_and_off_write_and_remove_the_pth_file(tmp_path: Path) -> None:
    env = {"LAKEHOUSE_WARM_DBT_DIR": str(tmp_path / "zygotes")}
    assert switch.is_on(tmp_path) is None
    pth = switch.turn_on(tmp_path)
    assert pth.name == switch.PTH_NAME and switch.is_on(tmp_path) == pth
    assert client.__file__ in pth.read_text()
    assert switch.turn_off(env, tmp_path) == (True, 0)
    assert switch.is_on(tmp_path) is None
    assert switch.turn_off(env, tmp_path) == (False, 0)


def test_a_zygote_notices_a_changed_module_file(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("A = 1\n")
    stamps = {str(module): (module.stat().st_mtime_ns, module.stat().st_size)}
    assert zygote.changed_file(stamps) is None
    module.write_text("A = 22\n")
    assert zygote.changed_file(stamps) == str(module)
    module.unlink()
    assert zygote.changed_file(stamps) == str(module)
    assert zygote.__file__ in zygote.module_stamps()


@pytest.mark.parametrize(
    ("status", "code"),
    [(0, 0), (3 << 8, 3), (2 << 8, 2), (signal.SIGTERM, -signal.SIGTERM)],
)
def test_the_client_exits_as_its_child_did(status: int, code: int) -> None:
    """An exit code is passed on; a child killed by a signal kills its client with it."""
    program = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('c', {client.__file__!r})\n"
        "module = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(module)\n"
        f"module._exit_as({status})\n"
    )
    done = subprocess.run([sys.executable, "-c", program], timeout=60)
    assert done.returncode == code


@dataclass
class _Root(dbtClassMixin):
    pass


@dataclass
class _Inner(_Root):
    n: int = 0


@dataclass
class _Outer(_Root):
    name: str
    inner: _Inner = field(default_factory=_Inner)


def test_the_zygote_compiles_dbts_lazily_compiled_serializers() -> None:
    """dbt-common's classes compile each (de)serializer at its first call; the zygote calls
    them all once, so its children find them compiled, and they still read and write."""
    methods = ("from_dict", "to_dict", "from_msgpack", "to_msgpack")
    stubs = {m: _Outer.__dict__[m] for m in methods}
    assert serializers.compile_all(_Root) == 2
    assert [m for m in methods if _Outer.__dict__[m] is stubs[m]] == []
    made = _Outer.from_dict({"name": "a", "inner": {"n": 2}})
    assert made == _Outer("a", _Inner(2)) and made.to_dict() == {"name": "a", "inner": {"n": 2}}
    assert _Outer.from_msgpack(made.to_msgpack()) == made
    compiled = {m: _Outer.__dict__[m] for m in methods}
    assert serializers.compile_all(_Root) == 2  # compiled already: nothing happens, nothing fails
    assert {m: _Outer.__dict__[m] for m in methods} == compiled


@pytest.mark.parametrize("value", ["off", "OFF", "0", "false", "no"])
def test_switched_off_the_command_runs_in_its_own_process(
    value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_zygote(*_: object) -> None:
        raise AssertionError("a zygote was asked")

    monkeypatch.setattr(client, "exchange", no_zygote)
    monkeypatch.setenv(client.SWITCH, value)
    client.serve_or_return(["/v/bin/dbt", "ls"])  # returned: dbt runs here
    monkeypatch.delenv(client.SWITCH)
    monkeypatch.setenv(client.ZYGOTE_MARK, "k.sock")  # a zygote's own imports
    client.serve_or_return(["/v/bin/dbt", "ls"])


def test_the_commands_set_up_refuses_a_warm_dbt_value_that_is_not_a_switch() -> None:
    from types import SimpleNamespace

    from dbt_common.exceptions import DbtRuntimeError

    from dbt.adapters.lakehouse.command_setup import set_up_command

    with pytest.raises(DbtRuntimeError, match="LAKEHOUSE_WARM_DBT='maybe' is not a switch"):
        set_up_command(SimpleNamespace(credentials=None), {client.SWITCH: "maybe"})


@pytest.mark.parametrize("value", ["0", "-5", "soon"])
def test_the_commands_set_up_refuses_an_idle_time_that_is_not_positive_seconds(
    value: str,
) -> None:
    from types import SimpleNamespace

    from dbt_common.exceptions import DbtRuntimeError

    from dbt.adapters.lakehouse.command_setup import set_up_command

    assert client.idle_seconds({}) == client.DEFAULT_IDLE_SECONDS
    assert client.idle_seconds({client.IDLE_VARIABLE: " 90 "}) == 90.0
    with pytest.raises(DbtRuntimeError, match=f"got '{value}'"):
        set_up_command(SimpleNamespace(credentials=None), {client.IDLE_VARIABLE: value})
