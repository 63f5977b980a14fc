"""Example bots in Go, Rust, Java, TypeScript and C++ play full games through the real server.

Each bot runs as its own process from its roster command ``clients/<language>/bot``, at a table
with Python bots; the game must complete, its record must verify with ``hearts replay``, and the
example bot must commit no fault. Every bot is run the way the tournament runner runs it: the
referee's Unix socket as ``--server unix:PATH``, the seat token in a 0600 file given by
``--token-file``, an environment of PATH, HOME and TMPDIR (a scratch folder) and the bot's name
only. Once more over TCP with ``HEARTS_SERVER`` and ``HEARTS_TOKEN_FILE``, and once inside a
bubblewrap sandbox with no network at all, only the system's runtime and the bot's own folder
read-only, and the socket and token file bound in. Without a token a bot exits 2 with one line;
unbuilt in a read-only folder, it says in one line to build it first.

A missing toolchain (or bubblewrap) skips with a line naming what is missing, except under
``CI=true`` where it fails.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from hearts_server.server import RefereeServer, make_server
from tests.helpers.cli import hearts
from tests.helpers.harness import await_table, create_table, sdk_bot
from tests.helpers.toolchains import LANGUAGES, built_bot, require_bwrap

#: The first run of a language builds its bot (Rust and C++ take minutes from cold).
pytestmark = pytest.mark.timeout(900)

SEAT = 3  # the example bot's seat; Python bots take the others
SYSTEM_DIRS = ("/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
SANDBOX_SOCKET = "/run/hearts/referee.sock"
SANDBOX_TOKEN = "/run/hearts/token"
SANDBOX_SCRATCH = "/scratch"
BUILD_OUTPUT = {"go": "bin", "rust": "target", "java": "target", "typescript": "dist", "cpp": "cmake-build"}


def token_file(path: Path, token: str) -> Path:
    """Writes ``token`` to a new file only its owner can read, with a newline (stripped by bots)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(f"{token}\n")
    return path


def scratch_env(scratch: Path, **extra: str) -> dict[str, str]:
    """What a bot process gets: PATH, HOME and TMPDIR in a private scratch folder, its name."""
    scratch.mkdir(exist_ok=True)
    return {"PATH": os.environ["PATH"], "HOME": str(scratch), "TMPDIR": str(scratch), **extra}


@dataclass(frozen=True)
class Launch:
    """How to start the example bot: its argv and environment."""

    argv: list[str]
    env: dict[str, str]


@dataclass(frozen=True)
class Outcome:
    """A finished game seen from the example bot's seat."""

    record: dict[str, Any]
    exit_code: int
    log: str


def play_a_game(
    language: str,
    tmp_path: Path,
    launch: Callable[[RefereeServer, Path], Launch],
    *,
    unix: bool,
) -> Outcome:
    """One game at a real referee (also on a Unix socket when ``unix``): the example bot in
    seat 3 started by ``launch(server, token_file)``, Python SDK bots in the other seats (over
    the same transport)."""
    names = ["heuristic", "random", "heuristic", f"{language}-example", "random", "heuristic"]
    log_path = tmp_path / f"{language}.log"

    async def scenario() -> tuple[dict[str, Any], int]:
        server = make_server(
            tmp_path / "games", unix_socket=tmp_path / "ref.sock" if unix else None, open_admin=True
        )
        await server.start()
        try:
            table = await create_table(
                server.address, names, seed=f"lang-{language}", target_score=60, join_timeout_ms=300_000
            )
            target = server.unix_address if unix else server.address
            assert target is not None
            python_bots = [
                sdk_bot(target, s.token, names[s.seat], str(s.seat)) for s in table.seats if s.seat != SEAT
            ]
            how = launch(server, token_file(tmp_path / "token", table.seats[SEAT].token))
            with log_path.open("wb") as log:
                process = subprocess.Popen(how.argv, stdout=log, stderr=subprocess.STDOUT, env=how.env)
            table_done = asyncio.ensure_future(await_table(server.address, table.table_id))
            bot_done = asyncio.ensure_future(asyncio.to_thread(process.wait))
            try:
                await asyncio.wait({table_done, bot_done}, return_when=asyncio.FIRST_COMPLETED)
                if not table_done.done() and bot_done.result() != 0:  # fail now, not at the join timeout
                    for task in (table_done, *python_bots):
                        task.cancel()
                    return {}, bot_done.result()
                result = await table_done
                await asyncio.gather(*python_bots)
                code = await asyncio.wait_for(bot_done, 120)
            finally:
                if process.poll() is None:
                    process.kill()
                await bot_done
            (game,) = result.games
            return json.loads(game.record_json), code
        finally:
            await server.stop(grace=0.5)

    record, code = asyncio.run(scenario())
    return Outcome(record, code, log_path.read_text(errors="replace"))


def assert_fault_free(outcome: Outcome, tmp_path: Path) -> None:
    """The bot exited 0 with no warning in its log, committed no fault, and the game's record
    replays to its end."""
    tail = outcome.log[-3000:]
    assert outcome.exit_code == 0, tail
    assert [f for f in outcome.record["faults"] if f["seat"] == SEAT] == [], tail
    assert outcome.record["result"]["faults"][SEAT] == 0, tail
    warnings = [line for line in outcome.log.splitlines() if "warning" in line.lower()]
    assert warnings == [], tail
    path = tmp_path / "record.json"
    path.write_text(json.dumps(outcome.record))
    replayed = hearts("replay", str(path))
    assert replayed.returncode == 0, replayed.stderr
    verdict = json.loads(replayed.stdout)
    assert verdict["error"] is None and verdict["game_over"] is True


@pytest.mark.parametrize("language", LANGUAGES)
def test_example_bot_plays_over_the_unix_socket_with_a_token_file(language: str, tmp_path: Path) -> None:
    bot = built_bot(language)

    def launch(server: RefereeServer, token: Path) -> Launch:
        assert server.unix_address is not None
        argv = [str(bot), "--server", server.unix_address, "--token-file", str(token)]
        return Launch(argv, scratch_env(tmp_path / "scratch", HEARTS_BOT_NAME=f"{language}-example"))

    assert_fault_free(play_a_game(language, tmp_path, launch, unix=True), tmp_path)


@pytest.mark.parametrize("language", LANGUAGES)
def test_example_bot_plays_over_tcp_configured_by_environment(language: str, tmp_path: Path) -> None:
    bot = built_bot(language)

    def launch(server: RefereeServer, token: Path) -> Launch:
        env = scratch_env(tmp_path / "scratch", HEARTS_SERVER=server.address, HEARTS_TOKEN_FILE=str(token))
        return Launch([str(bot)], env)

    assert_fault_free(play_a_game(language, tmp_path, launch, unix=False), tmp_path)


def bwrap_argv(bot: Path, name: str, *binds: str) -> list[str]:
    """A sandbox like the tournament's: no network or other process, the system's runtime and
    the bot's own folder read-only (then ``binds``), a private scratch tmpfs as HOME, TMPDIR and
    working folder, a clean environment; the command is the bot's (arguments to follow)."""
    argv = ["bwrap", "--unshare-all", "--die-with-parent", "--new-session", "--clearenv"]
    for folder in SYSTEM_DIRS:
        if os.path.islink(folder):
            argv += ["--symlink", os.readlink(folder), folder]
        elif os.path.isdir(folder):
            argv += ["--ro-bind", folder, folder]
    argv += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", SANDBOX_SCRATCH]
    argv += ["--ro-bind", str(bot.parent), str(bot.parent), *binds]
    for variable, value in {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": SANDBOX_SCRATCH,
        "TMPDIR": SANDBOX_SCRATCH,
        "HEARTS_BOT_NAME": name,
    }.items():
        argv += ["--setenv", variable, value]
    return [*argv, "--chdir", SANDBOX_SCRATCH, str(bot)]


@pytest.mark.parametrize("language", LANGUAGES)
def test_example_bot_plays_in_a_network_free_sandbox(language: str, tmp_path: Path) -> None:
    bot = built_bot(language)
    require_bwrap()

    def launch(server: RefereeServer, token: Path) -> Launch:
        assert server.unix_socket is not None
        binds = ["--bind", str(server.unix_socket), SANDBOX_SOCKET, "--ro-bind", str(token), SANDBOX_TOKEN]
        argv = bwrap_argv(bot, f"{language}-example", *binds)
        argv += ["--server", f"unix:{SANDBOX_SOCKET}", "--token-file", SANDBOX_TOKEN]
        return Launch(argv, {"PATH": os.environ["PATH"]})

    assert_fault_free(play_a_game(language, tmp_path, launch, unix=True), tmp_path)


@pytest.mark.parametrize("language", LANGUAGES)
def test_unbuilt_bot_in_a_read_only_folder_says_to_build_it(language: str, tmp_path: Path) -> None:
    bot = built_bot(language)
    require_bwrap()
    hidden = bot.parent / BUILD_OUTPUT[language]  # an empty tmpfs over the build output
    argv = bwrap_argv(bot, f"{language}-example", "--tmpfs", str(hidden))
    run = subprocess.run([*argv, "--token", "t"], capture_output=True, text=True, timeout=120)
    lines = run.stderr.strip().splitlines()
    assert run.returncode == 1, run.stderr
    assert len(lines) == 1 and f"run {bot.parent / 'build'} first" in lines[0], run.stderr


TOKENLESS = {
    "none": ([], {}, "--token-file"),
    "absent-file": (["--token-file", "{tmp}/absent"], {}, "{tmp}/absent"),
    "empty-file-by-env": ([], {"HEARTS_TOKEN_FILE": "{tmp}/empty"}, "empty"),
}


@pytest.mark.parametrize("case", sorted(TOKENLESS))
@pytest.mark.parametrize("language", LANGUAGES)
def test_example_bot_without_a_token_exits_2_with_one_line(language: str, case: str, tmp_path: Path) -> None:
    bot = built_bot(language)
    (tmp_path / "empty").write_text(" \n")
    args, env, expected = TOKENLESS[case]
    fill = {"tmp": str(tmp_path)}
    run = subprocess.run(
        [str(bot), "--server", "unix:/nonexistent.sock", *(a.format(**fill) for a in args)],
        capture_output=True,
        text=True,
        timeout=120,
        env=scratch_env(tmp_path / "scratch", **{k: v.format(**fill) for k, v in env.items()}),
    )
    lines = run.stderr.strip().splitlines()
    assert run.returncode == 2, run.stderr
    assert len(lines) == 1 and expected.format(**fill) in lines[0], run.stderr
