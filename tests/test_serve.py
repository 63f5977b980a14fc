"""``hearts serve`` as a user runs it: a process, records on disk, and a kill -9 loses nothing finished."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from hearts_core.replay import replay
from tests.helpers.cli import hearts
from tests.helpers.harness import create_table, sdk_bot

#: Generous limits for a loaded machine: none of them is a timing assertion, only a way to fail
#: with a clear message instead of hanging.
START_TIMEOUT_S = 60.0
GAMES_TIMEOUT_S = 240.0


def read_line(process: subprocess.Popen[str], timeout: float, log: Path) -> str:
    """The next line the process prints, failing clearly if none comes within ``timeout`` seconds.

    Read in a thread: a line already in the pipe reader's buffer (two lines printed at once) is
    not seen by ``select`` on the pipe.
    """
    assert process.stdout is not None
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pending = pool.submit(process.stdout.readline)
        try:
            return pending.result(timeout)
        except concurrent.futures.TimeoutError:
            process.kill()  # ends the readline
            tail = log.read_text()[-2000:]
            pytest.fail(f"hearts serve printed nothing in {timeout:.0f} s; its log:\n{tail}")


async def wait_until(done: Callable[[], bool], timeout: float, what: str) -> None:
    """Polls ``done`` until it holds, failing with ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:.0f} s waiting for {what}")
        await asyncio.sleep(0.05)


def start_serve(records: Path, log: Path, *extra: str) -> tuple[subprocess.Popen[str], str, str | None]:
    """Starts ``hearts serve`` (its state folder beside ``records``); its process, address and the
    admin token it made (None when ``extra`` gives one, or opens the admin API)."""
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "hearts_tournaments",
            "--log-format",
            "json",
            "serve",
            "--port",
            "0",
            "--records",
            str(records),
            *extra,
        ],
        stdout=subprocess.PIPE,
        stderr=log.open("wb"),
        text=True,
        env={**os.environ, "XDG_STATE_HOME": str(records.parent / "state")},
    )
    line = read_line(process, START_TIMEOUT_S, log)
    if not line.startswith("referee listening on "):
        process.kill()
        pytest.fail(f"hearts serve did not start: {line!r}; its log:\n{log.read_text()[-2000:]}")
    if extra:
        return process, line.split()[-1], None
    token_line = read_line(process, START_TIMEOUT_S, log)
    assert token_line.startswith("admin token in "), token_line
    token_file = Path(token_line.split()[3])
    return process, line.split()[-1], token_file.read_text().strip()


def test_a_killed_server_keeps_every_finished_game(tmp_path: Path) -> None:
    records = tmp_path / "games"
    process, address, token = start_serve(records, tmp_path / "serve.log")

    async def scenario() -> str:
        table = await create_table(address, ["heuristic"] * 6, token, seed="kill", games=50, target_score=40)
        bots = [sdk_bot(address, s.token, "heuristic", str(s.seat)) for s in table.seats]
        try:
            await wait_until(
                lambda: len(list(records.glob("*.json"))) >= 2, GAMES_TIMEOUT_S, "two finished games"
            )
        finally:
            os.kill(process.pid, signal.SIGKILL)  # mid-game: the third game is in progress
            for bot in bots:
                bot.cancel()
            await asyncio.gather(*bots, return_exceptions=True)
        return table.table_id

    table_id = asyncio.run(scenario())
    process.wait(10)
    finished = sorted(records.glob("*.json"))
    assert len(finished) >= 2
    assert not list(records.glob(".*.tmp")), "no half-written record is left behind"
    for path in finished:
        record = json.loads(path.read_text())
        assert record["table_id"] == table_id
        outcome = replay(record)
        assert outcome["error"] is None and outcome["game_over"] is True
        assert outcome["totals"] == record["result"]["totals"]


def test_serve_stops_cleanly_on_sigterm(tmp_path: Path) -> None:
    process, address, _ = start_serve(tmp_path / "games", tmp_path / "serve.log")
    try:
        assert address.startswith("127.0.0.1:")
        process.send_signal(signal.SIGTERM)
        assert process.wait(20) == 0
    finally:
        process.kill()


def test_serve_reports_a_port_in_use(tmp_path: Path) -> None:
    process, address, _ = start_serve(tmp_path / "games", tmp_path / "serve.log")
    try:
        result = hearts("serve", "--port", address.split(":")[1], "--records", str(tmp_path / "other"))
        assert result.returncode == 2
        assert "cannot listen" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    finally:
        process.terminate()
        process.wait(20)
