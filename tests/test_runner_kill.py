"""`kill -9` of the runner: never a database nothing accepts, never a bot left running."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hearts_core import lifetime
from hearts_tournaments.tournament.config import parse_config
from hearts_tournaments.tournament.folder import create_tournament, open_tournament
from hearts_tournaments.tournament.schedule import make_schedule
from hearts_tournaments.tournament.store import PARTIAL_SUFFIX, Store
from tests.helpers.cli import start_hearts
from tests.helpers.shared import HANG_BOT


def _config(tmp_path: Path, extra_bots: str = "") -> Path:
    config = tmp_path / "t.toml"
    config.write_text(
        """
[tournament]
name = "t"
table_size = 6
deals = 2
duplicate = false
seed = 1
decision_ms = 5000
time_bank_ms = 10000
"""
        + extra_bots
        + "".join(f'[[bots]]\nname = "r{i}"\nbuiltin = "random"\n' for i in range(6))
    )
    return config


def _start(config: Path, folder: Path) -> subprocess.Popen[bytes]:
    # --allow-broken: the hanger fails the pre-flight check (in one time bank).
    return start_hearts("tournament", "run", str(config), "--output", str(folder), "--allow-broken")


#: The moments of a start the kills are aimed at, each an event seen in the output folder (not a
#: time): the folder made, the partial database made, written to, grown, linked into place.
def _made(folder: Path) -> bool:
    return folder.exists()


def _partial(folder: Path, size: int) -> bool:
    """The partial database has reached ``size`` bytes, or is already linked into place (each
    moment counts as reached once it is past: a moment missed between two polls kills later)."""
    if _whole(folder):
        return True
    with contextlib.suppress(OSError):
        return any(p.stat().st_size >= size for p in folder.glob(f"*{PARTIAL_SUFFIX}"))
    return False


def _whole(folder: Path) -> bool:
    return Store.path_in(folder).exists()


MOMENTS: list[tuple[str, Callable[[Path], bool]]] = [
    ("folder made", _made),
    ("partial made", lambda f: _partial(f, 0)),
    ("partial written", lambda f: _partial(f, 1)),
    ("partial grown", lambda f: _partial(f, 8192)),
    ("database linked", _whole),
]


def _kill_when(config: Path, folder: Path, moment: Callable[[Path], bool], after: int) -> None:
    """Starts a run and SIGKILLs it ``after`` polls of the output folder past ``moment`` (or at
    its exit, if the moment passes unseen between two polls)."""
    runner = _start(config, folder)
    try:
        seen = 0
        while runner.poll() is None:
            if moment(folder):
                seen += 1
                if seen > after:
                    break
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(runner.pid, signal.SIGKILL)
        runner.wait(timeout=30)


def test_a_kill_at_any_moment_of_the_start_leaves_no_database_or_a_whole_one(tmp_path: Path) -> None:
    config = _config(tmp_path)
    outcomes = {"none": 0, "whole": 0}
    step = 0
    for _name, moment in MOMENTS:
        for after in (0, 1, 10, 100):
            folder = tmp_path / f"out{step}"
            step += 1
            _kill_when(config, folder, moment, after)
            if not Store.path_in(folder).exists():
                outcomes["none"] += 1  # `run` starts it afresh
                continue
            # Whatever is there is a whole tournament: `resume` takes it.
            tournament = open_tournament(folder)
            with tournament.store:
                assert len(tournament.store.schedule().games) == 2
                assert tournament.store.count() == 0
            outcomes["whole"] += 1
    # The kills aimed after the link reached past the creation, whatever the machine's speed.
    assert outcomes["whole"] >= 4, outcomes
    # A folder left without a database (maybe with a partial one) takes a new tournament.
    folder = tmp_path / "out0"
    if not Store.path_in(folder).exists():
        folder.mkdir(exist_ok=True)
        (folder / f".{Store.path_in(folder).name}.x.partial").write_bytes(b"")
        settings = parse_config(config.read_text(), tmp_path)
        create_tournament(settings, config.read_text(), folder).store.close()
        assert not list(folder.glob("*.partial"))


def _descendants(pid: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rpartition(")")[2].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_the_bots_die_at_once_when_the_runner_alone_is_killed(tmp_path: Path) -> None:
    (tmp_path / "hang_bot.py").write_text(HANG_BOT)
    command = f'[{json.dumps(sys.executable)}, "hang_bot.py"]'
    hanger = f'[[bots]]\nname = "hanger"\ncommand = {command}\nsandbox = "none"\n'
    config = _config(tmp_path, hanger)
    runner = _start(config, tmp_path / "out")
    bots: set[int] = set()
    try:
        # The pre-flight check waits out the hanger's time bank (10 s); every game it sits in
        # lasts at least as long, so its table is there to be seen, however slow the machine.
        deadline = time.monotonic() + 240
        # Wait for a table's six bot processes (sandboxed built-ins and the unsandboxed hanger).
        while time.monotonic() < deadline:
            bots = {p for p in _descendants(runner.pid) if _alive(p)}
            commands = [Path(f"/proc/{p}/cmdline").read_bytes() for p in bots if _alive(p)]
            if sum(b"hang_bot.py" in c for c in commands) >= 1 and len(bots) >= 6:
                break
            assert runner.poll() is None, "the runner ended early"
            time.sleep(0.2)
        else:
            raise AssertionError(f"no table of bots started: {bots}")
        time.sleep(1.0)
        bots = {p for p in _descendants(runner.pid) if _alive(p)}
        os.kill(runner.pid, signal.SIGKILL)  # the runner only, not its process group
        runner.wait(timeout=30)
        # They die as the runner does (the kernel's parent-death signal): a bound only so that a
        # failure ends, generous enough that a loaded machine's slow reaping never decides it.
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and any(_alive(p) for p in bots):
            time.sleep(0.1)
        left = {p: Path(f"/proc/{p}/cmdline").read_bytes()[:80] for p in bots if _alive(p)}
        assert not left, f"bots outlived the runner: {left}"
    finally:
        for pid in bots:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        if runner.poll() is None:
            os.killpg(runner.pid, signal.SIGKILL)


class _Crash(BaseException):
    """Stands for the process dying in the middle of creating the database."""


def test_a_creation_that_dies_half_way_leaves_no_database(tmp_path: Path) -> None:
    settings = parse_config(_config(tmp_path).read_text(), tmp_path)
    schedule = make_schedule(settings.bot_names, 6, 2, "1", duplicate=False)

    class DyingSchedule(type(schedule)):  # type: ignore[misc]
        def balance(self) -> Any:
            raise _Crash  # after the schema and part of the meta data are written

    dying = DyingSchedule(**{f.name: getattr(schedule, f.name) for f in dataclasses.fields(schedule)})
    folder = tmp_path / "out"
    with pytest.raises(_Crash):
        Store.create(folder, "[tournament]\n", tmp_path, "t", dying)
    assert not Store.path_in(folder).exists()
    with Store.create(folder, "[tournament]\n", tmp_path, "t", schedule) as store:
        assert store.schedule() == schedule
    assert not [p.name for p in folder.iterdir() if ".partial" in p.name]


PARENT = """
import subprocess, sys, time
from hearts_core import lifetime
command = ["sleep", "300"]
if sys.argv[1] == "python":
    argv = [sys.executable, "-m", "hearts_core.lifetime", str(__import__("os").getpid()), *command]
else:
    argv = lifetime.tied_argv(command)
child = subprocess.Popen(argv)
print(child.pid, flush=True)
time.sleep(300)
"""


@pytest.mark.parametrize("launcher", ["default", "python"])
def test_a_tied_child_dies_with_its_parent(launcher: str) -> None:
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, launcher], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    try:
        deadline = time.monotonic() + 30
        # Until the launcher has exec'd the command (then the pid runs `sleep`).
        while b"sleep" not in Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")[0]:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        parent.kill()
        parent.wait(timeout=30)
        deadline = time.monotonic() + 5
        while _alive(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(child), "the child outlived its parent"
    finally:
        if _alive(child):
            os.kill(child, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(parent.pid, signal.SIGKILL)


@pytest.mark.parametrize("launcher", ["default", "python"])
def test_a_tied_child_whose_parent_died_before_the_signal_was_set_runs_nothing(
    launcher: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Started by this process but told its parent was another one: as if the parent had died
    # (and the child been adopted) between the fork and the prctl.
    if launcher == "python":
        monkeypatch.setattr(lifetime, "SETPRIV", None)
    elif lifetime.SETPRIV is None:
        pytest.skip("no setpriv here")
    marker = tmp_path / "ran"
    argv = lifetime.tied_argv(["touch", str(marker)], parent=os.getppid())
    assert argv[0] == (sys.executable if launcher == "python" else lifetime.SETPRIV)
    done = subprocess.run(argv, capture_output=True, timeout=60)
    assert done.returncode != 0
    assert not marker.exists()
    # Given its real parent, the same launcher runs the command.
    assert subprocess.run(lifetime.tied_argv(["touch", str(marker)]), timeout=60).returncode == 0
    assert marker.exists()
