"""The warm engine's lifecycle, faults and security, each dbt command its own process.

Later commands attach to the engine the first one started; `dbt-lakehouse engine status|stop`
show and stop it; it stops itself when idle; a killed engine (between or during commands) is
replaced by the next command, the one it died under failing with one line; two processes at
once share it; other launch settings get their own engine; `engine stop` stops the engines
of its LAKEHOUSE_ENGINE_HOME only; only its owner, with its secret, gets in. A cold command
starts none (test_engine_errors.py)."""

from __future__ import annotations

import os
import re
import signal
import stat
import time
from pathlib import Path

import pytest

from dbt.adapters.lakehouse.engine.launch import process_running
from functional.lakehouse.shared.warm import (
    Output,
    dbt,
    dbt_started,
    engine_cli,
    objects_held,
    output,
    statuses,
    write_project,
)

pytestmark = pytest.mark.only_profile("local")

MODELS = {
    "base.sql": "{{ config(materialized='table') }}\nselect * from range(5)",
    "doubled.sql": "{{ config(materialized='table') }}\nselect id * 2 as id from {{ ref('base') }}",
}
TESTS_YML = (
    "models:\n  - name: doubled\n    columns:\n      - name: id\n        data_tests: [not_null]\n"
)
# A statement that runs for minutes unless stopped: the engine is killed under it.
SLOW_MODEL = (
    "{{ config(materialized='table') }}\n"
    "select count(*) as n from range(100000000) a cross join range(100000) b"
)


def target(folder: Path, memory: str = "1g", keep: str | None = None) -> str:
    engine = f"\nengine: {{keep_warm_minutes: {keep}}}" if keep is not None else ""
    return (
        f"type: lakehouse\nschema: s\nthreads: 2\nwarehouse: {folder / 'warehouse'}\n"
        f"spark: {{master: 'local[2]', driver_memory: {memory}}}{engine}"
    )


def project(folder: Path, models: dict[str, str] = MODELS, **options: str) -> Path:
    return write_project(folder, models, target(folder, **options))


def doubled_ids(folder: Path, home: Path) -> str:
    done = dbt(folder, home, "show", "--inline", "select sum(id) as s from {{ ref('doubled') }}")
    assert done.returncode == 0, output(done)
    return output(done)


def engine_up(home: Path) -> dict:
    """The home's one engine once its JVM runs. A command whose nodes were all reused from
    remembered decisions starts the engine without waiting for it (engine/lifecycle.py), so
    the JVM may still be coming up when the command ends."""
    assert wait_until(lambda: "jvm_pid" in [*statuses(home), {}][0], 120), statuses(home)
    [engine] = statuses(home)
    return engine


def wait_until(condition, seconds: float = 30.0) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.2)
    return condition()


def test_commands_share_one_engine_status_stop_and_a_killed_one_is_replaced(
    engine_home: Path, tmp_path: Path
) -> None:
    """One engine's whole life, so that the suite starts three engines here rather than seven:
    shared by later commands and by two processes at once, holding nothing of a command that
    ended, private, shown and stopped by the CLI, and replaced by the next command when its JVM
    (under a running statement, whose command fails in one line) or its supervisor is killed."""
    home = engine_home
    models = {**MODELS, "slow.sql": SLOW_MODEL, "tests.yml": TESTS_YML}
    folder, other = (project(tmp_path / name, models) for name in "pq")
    assert dbt(folder, home, "run", "-s", "base").returncode == 0
    [first] = statuses(home)
    assert first["clients"] == [] and first["heap_max_bytes"] <= 1024 * 1048576
    assert first["rss_bytes"] > 0 and first["master"] == "local[2]"
    held = objects_held(home)
    both = [dbt_started(each, home, "build", "--exclude", "slow") for each in (folder, other)]
    for process in both:
        text, _ = process.communicate(timeout=600)
        assert process.returncode == 0, text
    [again] = statuses(home)
    assert (again["pid"], again["jvm_pid"]) == (first["pid"], first["jvm_pid"])
    for each in (folder, other):
        assert "| 20 |" in doubled_ids(each, home)
    # Each build's test result was written after its command exited (engine/later.py); the
    # next command's read waits for such a write, and so reuses the result.
    done = dbt(folder, home, "--debug", "build", "--exclude", "slow")
    assert re.search(r"not_null_doubled_id\.\w+: reused: nothing it reads", output(done)), output(
        done
    )[-3000:]
    # A command's exit leaves the engine nothing of it: its last DataFrames and its session
    # would otherwise stay bound in py4j's gateway, plans and rows with them, build after build.
    assert wait_until(lambda: objects_held(home) <= held, 10), (held, objects_held(home))
    assert_private_and_refuses_strangers(home)
    text = engine_cli(home, "status").stdout
    assert f"JVM {first['jvm_pid']}" in text and "heap" in text and "local[2]" in text

    # The JVM killed under a statement: that command fails in one line, and the supervisor
    # notices and exits.
    running = dbt_started(folder, home, "run", "-s", "slow")
    progress = Output(running)
    # Killed before the node starts (while dbt lists the schema), dbt fails the whole run (exit
    # 2) rather than the node: wait for the node, then for its statement to be sent.
    assert progress.wait_for("START sql table model", 300), "".join(progress.lines)
    time.sleep(2)
    os.kill(first["jvm_pid"], signal.SIGKILL)
    text = progress.finish(120)
    assert running.returncode == 1, text
    [line] = [x for x in text.splitlines() if "The warm Spark engine" in x]
    assert f"(JVM pid {first['jvm_pid']}) stopped while this statement ran" in line
    assert "Iceberg commit is atomic" in line
    assert wait_until(lambda: not process_running(first["pid"]))
    done = dbt(folder, home, "run", "--exclude", "slow")
    assert done.returncode == 0, output(done)
    second = engine_up(home)
    os.kill(second["pid"], signal.SIGKILL)  # the supervisor: its JVM sees stdin close and exits
    # Its shutdown hooks (the SparkContext's stop) take longer on a loaded machine and on 4.1:
    # what matters is that it exits, not how fast (once over 30 s with two busy test workers).
    assert wait_until(lambda: not process_running(second["jvm_pid"]), 90)
    done = dbt(folder, home, "run", "--exclude", "slow")
    assert done.returncode == 0, output(done)
    third = engine_up(home)
    assert len({first["jvm_pid"], second["jvm_pid"], third["jvm_pid"]}) == 3
    assert "| 20 |" in doubled_ids(folder, home)
    assert engine_cli(home, "stop").returncode == 0
    assert statuses(home) == [] and not process_running(third["jvm_pid"])

    # With no engine up, a project edited since its last run (a file touched) starts one
    # beside the parse; every node is then reused from its remembered decision, so the command
    # ends without waiting for that start, and the engine comes up on its own for the next.
    (folder / "models" / "base.sql").touch()
    done = dbt(folder, home, "--debug", "run", "--exclude", "slow")
    text = output(done)
    assert done.returncode == 0 and "(remembered" in text, text[-3000:]
    assert "the engine's early start was not needed: not waited for" in text, text[-3000:]
    engine_up(home)
    assert engine_cli(home, "stop").returncode == 0


def assert_private_and_refuses_strangers(home: Path) -> None:
    """The engine's state is 0600 in 0700 folders; a gateway client without the secret is
    refused, and another OS user (when the tests run as root) reaches neither state nor socket."""
    from py4j.java_gateway import GatewayParameters, JavaGateway

    from dbt.adapters.lakehouse.engine.warm.folder import engine_folders, read_private_json

    [engine_folder] = engine_folders(home)
    for path in (home, engine_folder):
        assert stat.S_IMODE(path.stat().st_mode) == 0o700
    state_file = engine_folder / "state.json"
    assert stat.S_IMODE(state_file.stat().st_mode) == 0o600
    state = read_private_json(state_file)
    for token in (None, "not-the-secret"):
        intruder = JavaGateway(
            gateway_parameters=GatewayParameters(port=state["port"], auth_token=token)
        )
        with pytest.raises(Exception):  # noqa: B017 - py4j raises Py4JError or its network kind
            intruder.jvm.java.lang.System.getProperty("user.name")
        intruder.close()
    if os.getuid() == 0:
        child = os.fork()
        if child == 0:
            code = 0
            try:
                os.setgid(65534)
                os.setuid(65534)
                for attempt in (state_file.read_text, (engine_folder / "control.sock").stat):
                    try:
                        attempt()
                        code = 1
                    except PermissionError:
                        pass
            finally:
                os._exit(code)
        assert os.waitpid(child, 0)[1] == 0
    assert "secret" not in (engine_folder / "engine.log").read_text()
    assert state["secret"] not in (engine_folder / "engine.log").read_text()


def test_other_launch_settings_get_their_own_engine_stop_is_per_home_and_idle_engines_stop(
    engine_home: Path,
    other_engine_home: Path,
    tmp_path: Path,
) -> None:
    """Two launch settings, two engines: started under two engine homes, so that `engine stop`
    under one is seen to leave the other's engine running (and to say so), which then runs its
    warm-up and stops itself when idle."""
    from dbt.adapters.lakehouse.engine.warm.folder import running_engine_folders

    homes = {"small": engine_home, "large": other_engine_home}
    # The large engine is stopped by `engine stop`, so kept the default 15 idle minutes; the
    # small one, started last, stops itself after a minute idle: the `engine stop` that must
    # find it still running follows its command by a few seconds, and its warm-up's first
    # round on a new JVM fits in that minute (it took over 28 s on a slow CI host, so half a
    # minute, with its 2 s idle wait, cut it short).
    large = project(tmp_path / "large", memory="2g")
    small = project(tmp_path / "small", memory="1g", keep="1")
    engines = {}
    for folder in (large, small):
        # The small engine runs a round of its warm-up while idle (the suite's engines run
        # none: LAKEHOUSE_ENGINE_WARM_UP_SECONDS=0 in conftest.py).
        warm_up = {"LAKEHOUSE_ENGINE_WARM_UP_SECONDS": "1"} if folder is small else {}
        done = dbt(folder, homes[folder.name], "run", "-s", "base", **warm_up)
        assert done.returncode == 0, output(done)
        [engines[folder.name]] = statuses(homes[folder.name])
    assert engines["small"]["folder"] != engines["large"]["folder"]
    assert engines["small"]["heap_max_bytes"] <= 1024 * 1048576
    assert engines["large"]["heap_max_bytes"] > 1024 * 1048576
    kept = (engines["small"]["keep_warm_minutes"], engines["large"]["keep_warm_minutes"])
    assert kept == (1, 15)
    # `--all` finds both (what it would stop; not run here: it would stop every engine of this
    # user, other test runs' too).
    found = running_engine_folders()
    assert {Path(e["folder"]) for e in engines.values()} <= set(found), found
    # `engine stop` under the large engine's home stops it alone, naming it and its home, and
    # then points at the small one's home, whose engine still runs, for --all.
    stopped = engine_cli(homes["large"], "stop")
    assert stopped.returncode == 0, stopped.stderr
    first, *rest = stopped.stdout.splitlines()
    name = Path(engines["large"]["folder"]).name
    assert first == f"stopped 1 engine(s) in {homes['large']}: {name}", stopped.stdout
    assert any(str(homes["small"]) in line and "--all" in line for line in rest), stopped.stdout
    assert not process_running(engines["large"]["jvm_pid"])
    # A minute idle later, the small one is gone too: supervisor and JVM.
    assert wait_until(lambda: statuses(homes["small"]) == [], 150)
    pids = [pid for e in engines.values() for pid in (e["jvm_pid"], e["pid"])]
    assert not any(process_running(pid) for pid in pids)
    # Its warm-up ran a round in that idle time, on a catalog of its own, and left nothing.
    small_folder = Path(engines["small"]["folder"])
    log = (small_folder / "engine.log").read_text()
    assert "dbt-lakehouse warm-up done: 1 round(s)" in log, log[-2000:]
    assert not (small_folder / "warm-up").exists()
    assert not any("warm_up" in str(p) for p in (small / "warehouse").rglob("*"))
    assert "warm_up" not in engines["large"]  # none asked for
