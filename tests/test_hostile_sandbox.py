"""Hostile bots in the real sandbox, through the real runner: every attack fails.

One tournament game of six hostile entrants (``tests/hostile/hostile.py``), run by the real
``hearts tournament run`` with the default ``bwrap`` sandbox and tight ``[limits]``, a canary
``HEARTS_ADMIN_TOKEN`` in the runner's environment and a TCP listener of the test open on
127.0.0.1. Each bot writes what it found to its log (``HOSTILE {json}`` lines); the test checks
those findings, the logs, the stored game and the machine's processes afterwards.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from hearts_tournaments.arena.bots import BotSpec
from hearts_tournaments.arena.entrants import BotProcess, SeatAccess, bot_files
from hearts_tournaments.arena.sandbox import (
    BOT_NICENESS,
    INSIDE_TOKEN,
    PASSED_ENV,
    Limits,
    SandboxKind,
    Watchdog,
    find_bwrap,
    runtime_paths,
)
from tests.helpers.cli import hearts, start_hearts
from tests.helpers.toolchains import require_bwrap

HOSTILE = Path(__file__).parent / "hostile" / "hostile.py"
CANARY = "admin-canary-7f3e9c1d"
#: The caps of the hostile tournament.
MEMORY_MB = 200
CPU_S = 3
LOG_BYTES = 200_000
SCRATCH_MB = 16
#: Seat tokens are 48 hex digits (``secrets.token_hex(24)``).
TOKEN_SHAPE = re.compile(r"[0-9a-f]{48}")
MODES = ("snoop", "net", "fork", "log", "mem", "cpu")
ALLOWED_ENV = {*PASSED_ENV, "HOME", "TMPDIR", "PWD", "PYTHONDONTWRITEBYTECODE"} | {
    "HEARTS_SERVER",
    "HEARTS_TOKEN_FILE",
    "HEARTS_BOT_NAME",
    "HEARTS_SEED",
}


class Listener:
    """A TCP listener of the host on 127.0.0.1 that records every connection."""

    def __init__(self) -> None:
        self.socket = socket.create_server(("127.0.0.1", 0))
        self.port = self.socket.getsockname()[1]
        self.connections = 0
        self.socket.settimeout(0.2)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self.socket.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.connections += 1
            connection.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self.socket.close()


@dataclass
class HostileRun:
    """What the hostile tournament left behind."""

    root: Path
    config: Path
    output: Path
    result: subprocess.CompletedProcess[str]
    report: dict[str, Any]
    listener_connections: int
    leftovers: list[str]

    def log(self, mode: str) -> Path:
        logs = (self.output / "logs" / f"hostile-{mode}").glob("*.log")
        (path,) = (p for p in logs if p.name != "check.log")  # the game's, not the pre-flight's
        return path

    def findings(self, mode: str) -> list[dict[str, Any]]:
        lines = self.log(mode).read_text(errors="replace").splitlines()
        return [json.loads(line[len("HOSTILE ") :]) for line in lines if line.startswith("HOSTILE {")]

    def finding(self, mode: str, kind: str) -> dict[str, Any]:
        (found,) = [f for f in self.findings(mode) if f["kind"] == kind]
        return found


def skeleton(folder: Path, bound: list[Path]) -> set[str]:
    """The names in ``folder`` that lead to a path bound into the sandbox."""
    return {p.relative_to(folder).parts[0] for p in bound if folder in p.parents}


def processes_mentioning(text: str) -> list[str]:
    """Command lines of live processes of this machine that mention ``text``."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in cmdline:
            found.append(f"{pid}: {cmdline}")
    return found


def write_config(root: Path, listener: Listener, sandbox: str = "bwrap") -> Path:
    folder = root / "cfg"
    (folder / "bots").mkdir(parents=True)
    (folder / "rival").mkdir()
    (folder / "rival" / "secret.txt").write_text("rival-secret")
    shutil.copy(HOSTILE, folder / "bots" / "hostile.py")
    python = json.dumps(sys.executable)
    output = folder / "out"
    probes = [
        folder / "tournament.toml",
        output / "tournament.sqlite",
        output / "records",
        output,
        folder / "rival" / "secret.txt",
        folder,
        Path(__file__).resolve().parent.parent,  # the repository root
        Path.home(),
    ]
    args = {
        "snoop": [str(p) for p in probes],
        "net": [str(listener.port)],
    }
    bots = "".join(
        f"""
[[bots]]
name = "hostile-{mode}"
command = [{python}, "bots/hostile.py", "{mode}", {", ".join(json.dumps(a) for a in args.get(mode, []))}]
"""
        for mode in MODES
    )
    config = folder / "tournament.toml"
    config.write_text(
        f"""
[tournament]
name = "hostile"
table_size = 6
deals = 1
duplicate = false
seed = 9
target_score = 30
concurrency = 1
decision_ms = 1000
time_bank_ms = 5000
join_timeout_ms = 60000
output = "{folder / "out"}"
sandbox = "{sandbox}"

[limits]
memory_mb = {MEMORY_MB}
cpu_s = {CPU_S}
log_bytes = {LOG_BYTES}
scratch_mb = {SCRATCH_MB}
processes = 16
{bots}"""
    )
    return config


def run_cli(
    *args: str, env: dict[str, str] | None = None, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    """``hearts ARGS`` with the canary admin token in its environment (unless ``env`` is given)."""
    return hearts(
        *args, env={**os.environ, HEARTS_ADMIN_TOKEN: CANARY} if env is None else env, timeout=timeout
    )


HEARTS_ADMIN_TOKEN = "HEARTS_ADMIN_TOKEN"


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HostileRun]:
    require_bwrap()
    root = tmp_path_factory.mktemp("hostile")
    listener = Listener()
    try:
        config = write_config(root, listener)
        # The pre-flight check sees the memory bomb killed: it plays anyway, the referee in its seat.
        result = run_cli("tournament", "run", str(config), "--progress", "never", "--allow-broken")
        leftovers = processes_mentioning(str(root))
        output = config.parent / "out"
        report = json.loads(run_cli("tournament", "report", str(output), "--format", "json").stdout or "{}")
        yield HostileRun(root, config, output, result, report, listener.connections, leftovers)
    finally:
        listener.close()
        for line in processes_mentioning(str(root)):  # never leave a hostile process behind
            os.kill(int(line.split(":")[0]), 9)


def test_the_game_completes_and_is_stored(hostile: HostileRun) -> None:
    # Finished, and the exit status says an entrant failed (the memory bomb was killed).
    assert hostile.result.returncode == 3, hostile.result.stderr[-3000:]
    assert "entrant 'hostile-mem' cannot play" in hostile.result.stderr
    assert hostile.report["tournament"]["complete"] is True
    assert "without a sandbox" not in hostile.result.stderr


def test_no_other_process_is_visible_and_no_token_or_admin_token_is_found(hostile: HostileRun) -> None:
    findings = hostile.findings("snoop")
    own = hostile.finding("snoop", "token_file")
    assert own["path"] == str(INSIDE_TOKEN)
    own_token = own["text"].strip()
    assert TOKEN_SHAPE.fullmatch(own_token)
    text = json.dumps(findings)
    assert CANARY not in text
    assert set(TOKEN_SHAPE.findall(text)) == {own_token}  # no rival's token, anywhere
    argv = hostile.finding("snoop", "argv")["argv"]
    assert own_token not in " ".join(argv)
    environ = hostile.finding("snoop", "environ")["environ"]
    assert set(environ) <= ALLOWED_ENV, set(environ) - ALLOWED_ENV
    assert own_token not in json.dumps(environ)
    processes = hostile.finding("snoop", "processes")
    for pid, cmdline in processes["cmdlines"].items():
        # Only its own sandbox: bwrap's init and the bot itself.
        assert cmdline is None or "hostile.py" in cmdline or cmdline.startswith("bwrap"), (pid, cmdline)
    assert len(processes["pids"]) <= 3, processes["pids"]
    # Every file it can read, searched for token-shaped strings and the canary: only its own.
    secrets = hostile.finding("snoop", "secrets_in_files")["secrets"]
    assert set(secrets) <= {own_token}, secrets


def test_the_config_database_records_and_other_files_cannot_be_opened(hostile: HostileRun) -> None:
    probes = [f for f in hostile.findings("snoop") if f["kind"] == "probe"]
    assert len(probes) == 8
    bound = [*runtime_paths(), hostile.config.parent / "bots"]
    for probe in probes:
        if probe["opened"]:
            # Only a folder on the way to a bound one (e.g. the repository root, holding the
            # mount points of the packages, or the config folder holding bots/) may be listed,
            # and then it holds nothing else.
            assert probe["entries"] is not None, probe
            assert set(probe["entries"]) <= skeleton(Path(probe["path"]), bound), probe
    folders = hostile.finding("snoop", "filesystem")["folders"]
    config_folder = str(hostile.config.parent)
    visible = [f for f in folders if f.startswith(config_folder)]
    # Of the config folder it sees its own bots/ and nothing else (no config, no output).
    assert {f: folders[f] for f in visible} == {config_folder: [], f"{config_folder}/bots": ["hostile.py"]}


def test_no_tcp_port_of_the_host_can_be_reached(hostile: HostileRun) -> None:
    (attempt,) = [f for f in hostile.findings("net") if f["kind"] == "connect"]
    assert attempt["connected"] is False
    assert hostile.finding("net", "scan")["open"] == []  # the referee's TCP port included
    assert hostile.listener_connections == 0
    assert hostile.finding("net", "dns")["resolved"] is False


def test_no_forked_child_outlives_its_game(hostile: HostileRun) -> None:
    assert hostile.finding("fork", "forked")
    assert hostile.leftovers == []


def test_the_log_is_capped_and_so_is_the_scratch_folder(hostile: HostileRun) -> None:
    log = hostile.log("log")
    text = log.read_bytes()
    assert len(text) <= LOG_BYTES + 200, len(text)
    assert b"hearts sandbox: log truncated at 200000 bytes" in text
    print(f"log of a bot that wrote 20 MB: {len(text)} bytes kept")
    filled = hostile.finding("log", "filled")
    assert filled["error"] is not None and filled["bytes"] <= SCRATCH_MB * 1024 * 1024, filled


def test_memory_past_the_cap_kills_the_bot_and_its_seat_is_played_for(hostile: HostileRun) -> None:
    log = hostile.log("mem").read_text(errors="replace")
    assert "hearts sandbox: killed: memory" in log, log[-2000:]
    allocated = max(f["mb"] for f in hostile.findings("mem") if f["kind"] == "allocated")
    print(f"memory hog: reached {allocated} MB of its 2048 before the kill (cap {MEMORY_MB} MB)")
    assert allocated < 3 * MEMORY_MB
    line = next(s for s in hostile.report["standings"] if s["bot"] == "hostile-mem")
    assert line["faults"] > 0


def test_cpu_past_the_budget_kills_the_bot(hostile: HostileRun) -> None:
    log = hostile.log("cpu").read_text(errors="replace")
    assert "hearts sandbox: killed: CPU" in log, log[-2000:]
    last: dict[int, float] = {}
    for finding in hostile.findings("cpu"):
        if finding["kind"] == "cpu":
            last[finding["pid"]] = finding["seconds"]
    print(f"CPU burners: {sorted(last.values())} s each at the kill (budget {CPU_S} s for all)")
    assert len(last) == 2
    assert sum(last.values()) <= CPU_S + 1.0


def test_without_bwrap_the_runner_stops_with_one_line_naming_the_package(tmp_path: Path) -> None:
    listener = Listener()
    try:
        config = write_config(tmp_path, listener)
    finally:
        listener.close()
    env = {**os.environ, "PATH": str(tmp_path / "empty")}
    result = run_cli("tournament", "run", str(config), "--progress", "never", env=env)
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert "apt-get install bubblewrap" in line
    assert not (config.parent / "out").exists()


def test_sandbox_none_warns_and_still_keeps_tokens_and_secrets_out_of_argv_and_env(tmp_path: Path) -> None:
    folder = tmp_path / "cfg"
    (folder / "bots").mkdir(parents=True)
    shutil.copy(HOSTILE, folder / "bots" / "hostile.py")
    config = folder / "tournament.toml"
    config.write_text(
        f"""
[tournament]
name = "trusted"
table_size = 6
deals = 1
duplicate = false
target_score = 20
output = "{folder / "out"}"
sandbox = "none"

[[bots]]
name = "hostile-peek"
command = [{json.dumps(sys.executable)}, "bots/hostile.py", "peek"]

[[bots]]
name = "plain"
builtin = "random"
"""
    )
    result = run_cli("tournament", "run", str(config), "--progress", "never")
    assert result.returncode == 0, result.stderr[-3000:]
    assert 'hostile-peek, plain run(s) without a sandbox (sandbox = "none")' in result.stderr
    for log in (folder / "out" / "logs" / "hostile-peek").glob("*.log"):
        lines = log.read_text().splitlines()
        findings = {f["kind"]: f for f in (json.loads(x[8:]) for x in lines if x.startswith("HOSTILE {"))}
        token = findings["token_file"]["text"].strip()
        assert TOKEN_SHAPE.fullmatch(token)
        assert token not in " ".join(findings["argv"]["argv"])
        environ = findings["environ"]["environ"]
        assert set(environ) <= ALLOWED_ENV and CANARY not in json.dumps(environ)
        # What it can still see unsandboxed: every process's command line carries no token.
        cmdlines = " ".join(c for c in findings["processes"]["cmdlines"].values() if c)
        assert not set(TOKEN_SHAPE.findall(cmdlines)), "a token on some command line"


def test_killing_the_runner_kills_every_sandbox_and_its_children(tmp_path: Path) -> None:
    require_bwrap()
    folder = tmp_path / "cfg"
    (folder / "bots").mkdir(parents=True)
    shutil.copy(HOSTILE, folder / "bots" / "hostile.py")
    config = folder / "tournament.toml"
    command = f'[{json.dumps(sys.executable)}, "bots/hostile.py", "forkhang"]'
    bots = "".join(f'[[bots]]\nname = "hang{i}"\ncommand = {command}\n' for i in range(2))
    config.write_text(
        f'[tournament]\nname = "killed"\ntable_size = 6\ndeals = 1\nduplicate = false\n'
        f'output = "{folder / "out"}"\ndecision_ms = 5000\ntime_bank_ms = 10000\n{bots}'
    )
    # --allow-broken: the pre-flight check finds them never answering (in one time bank). The
    # runner shares this test's process group: killing the runner alone must end its bots.
    runner = start_hearts(
        "tournament", "run", str(config), "--progress", "never", "--allow-broken", own_group=False
    )
    try:
        logs = folder / "out" / "logs"
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            games = [p for p in logs.glob("*/*.log") if p.name != "check.log"]  # not the pre-flight's
            forked = [p for p in games if '"forked"' in p.read_text(errors="replace")]
            if len(forked) == 6:
                break
            time.sleep(0.2)
        assert len(forked) == 6, "the bots did not start"
        assert len(processes_mentioning(str(tmp_path))) >= 12  # six bots and their six daemons
        runner.kill()
        runner.wait(60)
        deadline = time.monotonic() + 60
        while processes_mentioning(str(tmp_path)) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert processes_mentioning(str(tmp_path)) == []
    finally:
        runner.kill()
        for line in processes_mentioning(str(tmp_path)):
            os.kill(int(line.split(":")[0]), 9)


def test_doctor_prints_one_line_per_feature_and_json() -> None:
    result = run_cli("doctor")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    names = ["bubblewrap", "user namespaces", "sandbox start", "cgroup memory limit", "memory watchdog"]
    for name in names:
        assert sum(line.startswith(f"{name}:") for line in lines) == 1, result.stdout
    assert lines[-1].startswith("runner:")
    report = json.loads(run_cli("doctor", "--json").stdout)
    features = {f["name"]: f for f in report["features"]}
    assert features["bubblewrap"]["available"] is (find_bwrap() is not None)
    assert features["memory watchdog"]["used"] is True and features["cgroup memory limit"]["used"] is False
    assert report["runner"]["memory_cap"] == "watchdog"
    if find_bwrap() is not None:
        assert features["sandbox start"]["available"] is True, features["sandbox start"]
        assert report["runner"]["sandbox"] == "bwrap"


def start_alone(
    tmp_path: Path, code: str, limits: Limits, sandbox: SandboxKind = SandboxKind.BWRAP
) -> tuple[BotProcess, str]:
    """Runs ``python -c code`` as a (sandboxed) bot (no referee needed), to its end or its kill."""
    spec = BotSpec(name="alone", command=(sys.executable, "-c", code), workdir=tmp_path)
    socket_file = tmp_path / "no-referee.sock"
    socket_file.touch()
    log = tmp_path / "alone.log"

    async def scenario() -> BotProcess:
        with Watchdog() as watchdog:
            process = await BotProcess.start(
                0,
                spec,
                SeatAccess(socket_file, "0" * 48, "1"),
                log,
                sandbox=sandbox,
                limits=limits,
                watchdog=watchdog,
            )
            await asyncio.wait_for(process.wait(), 120)
            return process

    process = asyncio.run(scenario())
    return process, log.read_text(errors="replace")


def test_a_fork_bomb_is_killed_past_the_process_cap(tmp_path: Path) -> None:
    require_bwrap()
    code = "import os, time\nfor _ in range(40):\n    os.fork() or time.sleep(60)\ntime.sleep(60)"
    process, log = start_alone(tmp_path, code, Limits(processes=8))
    assert process.killed is not None and "processes over the cap of 8" in process.killed
    assert "hearts sandbox: killed:" in log
    assert processes_mentioning("range(40)") == []


def test_the_rlimits_are_set_inside_the_sandbox(tmp_path: Path) -> None:
    require_bwrap()
    code = (
        "import resource as r\n"
        "print([r.getrlimit(x) for x in (r.RLIMIT_NOFILE, r.RLIMIT_FSIZE, r.RLIMIT_CORE, r.RLIMIT_CPU)])"
    )
    process, log = start_alone(tmp_path, code, Limits(open_files=100, file_mb=2, cpu_s=7))
    assert process.returncode == 0, log
    assert "[(100, 100), (2097152, 2097152), (0, 0), (7, 8)]" in log


@pytest.mark.parametrize("sandbox", [SandboxKind.BWRAP, SandboxKind.NONE])
def test_bots_run_below_the_referee_s_priority(tmp_path: Path, sandbox: SandboxKind) -> None:
    # A busy bot must not slow the referee, whose clock times every other bot.
    if sandbox is SandboxKind.BWRAP:
        require_bwrap()
    code = "import os\nprint('NICE', os.getpriority(os.PRIO_PROCESS, 0))"
    process, log = start_alone(tmp_path, code, Limits(), sandbox)
    assert process.returncode == 0, log
    (seen,) = [int(line.split()[1]) for line in log.splitlines() if line.startswith("NICE ")]
    referee = os.getpriority(os.PRIO_PROCESS, 0)
    assert seen > referee and seen == min(referee + BOT_NICENESS, 19), (seen, referee)


def test_the_rlimits_are_set_without_prlimit_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Where util-linux's prlimit is missing, a small Python sets them and execs the bot (never a
    # preexec_fn, which forks the runner's threads).
    require_bwrap()
    which = shutil.which
    monkeypatch.setattr(
        shutil, "which", lambda name, *a, **k: None if name == "prlimit" else which(name, *a, **k)
    )
    code = (
        "import os, resource as r\n"
        "print([r.getrlimit(x) for x in (r.RLIMIT_NOFILE, r.RLIMIT_FSIZE, r.RLIMIT_CORE, r.RLIMIT_CPU)])\n"
        "print('NICE', os.getpriority(os.PRIO_PROCESS, 0))"
    )
    process, log = start_alone(tmp_path, code, Limits(open_files=100, file_mb=2, cpu_s=7))
    assert process.returncode == 0, log
    assert "[(100, 100), (2097152, 2097152), (0, 0), (7, 8)]" in log
    assert f"NICE {min(os.getpriority(os.PRIO_PROCESS, 0) + BOT_NICENESS, 19)}" in log, log  # nice caps at 19


def test_a_bots_default_files_are_its_own_folder_or_file(tmp_path: Path) -> None:
    (tmp_path / "bots").mkdir()
    (tmp_path / "bots" / "mine.py").write_text("")
    (tmp_path / "alone.py").write_text("")

    def files(*command: str) -> tuple[Path, ...]:
        return bot_files(BotSpec(name="b", command=command, workdir=tmp_path))

    assert files("python", "bots/mine.py") == (tmp_path / "bots",)
    assert files(str(tmp_path / "bots" / "mine.py")) == (tmp_path / "bots",)
    assert files("python", "alone.py") == (tmp_path / "alone.py",)  # never the config's folder
    assert files("python", "-c", "print(1)") == ()
    assert files("/usr/bin/env", "python") == ()
    assert bot_files(BotSpec(name="b", builtin="random", workdir=tmp_path)) == ()


def test_sandboxed_bots_reach_an_external_referee_through_the_relayed_socket(tmp_path: Path) -> None:
    require_bwrap()
    referee = subprocess.Popen(
        [sys.executable, "-m", "hearts_tournaments", "serve", "--port", "0", "--records", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")},
    )
    try:
        assert referee.stdout is not None
        line = referee.stdout.readline()
        address = line.strip().rsplit(" ", 1)[-1]
        assert line.startswith("referee listening on "), line
        token_line = referee.stdout.readline()  # the admin token `hearts serve` made, in its file
        assert token_line.startswith("admin token in "), token_line
        admin_token = Path(token_line.split()[3]).read_text().strip()
        config = tmp_path / "external.toml"
        config.write_text(
            f'[tournament]\nname = "external"\ntable_size = 6\ndeals = 1\nduplicate = false\n'
            f'target_score = 20\nserver = "{address}"\noutput = "{tmp_path / "out"}"\n'
            '[[bots]]\nname = "a"\nbuiltin = "random"\n[[bots]]\nname = "b"\nbuiltin = "heuristic"\n'
        )
        env = {**os.environ, HEARTS_ADMIN_TOKEN: admin_token}
        result = run_cli("tournament", "run", str(config), "--progress", "never", env=env)
        assert result.returncode == 0, result.stderr[-3000:]
        report = json.loads(run_cli("tournament", "report", str(tmp_path / "out"), "--format", "json").stdout)
        assert report["tournament"]["complete"] is True
        assert sum(line["faults"] for line in report["standings"]) == 0
    finally:
        referee.terminate()
        referee.wait(30)
