"""``hearts host`` in-process: its table is made and awaited through the admin API."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

from hearts_tournaments.arena.host import HostOptions, bot_command, host_games, result_line
from hearts_tournaments.arena.sandbox import SandboxKind


def test_host_games_creates_and_awaits_its_table_over_the_admin_api(tmp_path: Path) -> None:
    lines: list[str] = []
    options = HostOptions(
        seats=("heuristic", "random", "random", "heuristic", "random", "random"),
        games=2,
        seed="hosted",
        out=tmp_path / "games",
        target_score=30,
        sandbox=SandboxKind.NONE,
    )
    results = asyncio.run(asyncio.wait_for(host_games(options, lines.append), 240))
    (invitation,) = map(json.loads, lines)
    assert invitation["seats"] == [] and invitation["table_id"]
    assert len(results) == 2
    for game in results:
        record = json.loads(Path(game["record"]).read_text())
        # The label is the one host_games gives in its CreateTable request.
        assert record["label"] == "hearts host" and record["table_id"] == invitation["table_id"]
        assert record["result"]["totals"] == game["totals"]
        assert game["faults"] == [0] * 6 and game["bot_errors"] == [0] * 6


def test_hearts_host_prints_its_unix_socket_and_a_bot_plays_through_it(tmp_path: Path) -> None:
    """The referee of `hearts host` listens on a Unix socket too: its address is printed, and is in
    the first --json line; a bot given `--server unix:PATH` plays its seat through it. The name
    that bot gives itself (``--name``, ``Join.bot_name``) is logged with its seat and kept in the
    record's ``declared_names`` beside the seat's own name, and the result line says it, as
    self-declared."""
    args = ["--seats", "random,external,random,random,random,random", "--target-score", "20", "--out"]
    command = [sys.executable, "-m", "hearts_tournaments", "--log-format", "json", "host", *args]
    host = subprocess.Popen(
        [*command, str(tmp_path / "games"), "--json"],
        stdout=subprocess.PIPE,
        stderr=(tmp_path / "host.log").open("wb"),
        text=True,
    )
    try:
        assert host.stdout is not None
        invitation = json.loads(host.stdout.readline())
        unix = invitation["unix"]
        assert unix.startswith("unix:/") and Path(unix.removeprefix("unix:")).is_socket()
        (seat,) = invitation["seats"]
        assert seat["unix_command"] == f"<your bot> --server {unix} --token-file {seat['token_file']}"
        named = [*bot_command("heuristic", unix, Path(seat["token_file"]), "u"), "--name", "my-bot 1.0"]
        bot = subprocess.run(named, capture_output=True, timeout=240)
        assert bot.returncode == 0, bot.stderr
        summary = json.loads(host.stdout.readline())
        assert host.wait(60) == 0
        assert summary["games"][0]["faults"] == [0] * 6
    finally:
        host.kill()
    (game,) = summary["games"]
    assert game["declared_names"] == [{"seat": 1, "name": "my-bot 1.0"}]
    assert 'seat 1 joined as "my-bot 1.0" (self-declared)' in result_line(game)
    record = json.loads(Path(game["record"]).read_text())
    assert record["bots"][1] == "external-1"  # the seat's name, and beside it the bot's own
    assert record["declared_names"][1] == "my-bot 1.0" and record["declared_names"][0] == "random"
    log = [
        json.loads(line) for line in (tmp_path / "host.log").read_text().splitlines() if line.startswith("{")
    ]
    joined = [e for e in log if e.get("event") == "seat_connected" and e.get("seat") == 1]
    assert joined and joined[0]["bot"] == "external-1" and joined[0]["declared_name"] == "my-bot 1.0"
    # Without --json, the address lines say both.
    plain = subprocess.Popen(
        [*command, str(tmp_path / "plain"), "--join-timeout", "0.5"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert plain.stdout is not None
        first, second = plain.stdout.readline(), plain.stdout.readline()
        assert first.startswith("referee listening on 127.0.0.1:")
        assert second.startswith("                 and on unix:/"), second
        plain.wait(120)
    finally:
        plain.kill()
