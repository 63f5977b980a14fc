"""Hostile record files at every command that reads a record: one clear line each, naming the
file (or game), the field and why; never a traceback.

The readers: ``hearts replay``, ``hearts replay --seat``, ``python -m hearts_client.sim replay``,
``hearts tournament verify`` (the stored records and the record files), ``hearts league verify``
and the web viewer's game page. All read through :meth:`hearts_core.record.GameRecord.read`.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.cli import hearts
from tests.helpers.hostile_records import HOSTILE, write_hostile
from tests.helpers.shared import CAREFUL_AND_TWO_DICE

CONFIG = (
    """
[tournament]
name = "hostile"
table_size = 6
deals = 2
seed = 5
max_hands = 1
concurrency = 2
decision_ms = 5000
sandbox = "none"
"""
    + CAREFUL_AND_TWO_DICE
)


def _good(folder: Path) -> Path:
    good = folder / "good.json"
    played = hearts("play", "--players", "6", "--seed", "g", "--record", str(good), "-q")
    assert played.returncode == 0, played.stderr
    return good


def _one_line_each(stderr: str, prefix: str, files: list[tuple[Path, str]]) -> None:
    assert "Traceback" not in stderr, stderr[-3000:]
    lines = stderr.strip().splitlines()
    assert len(lines) == len(files), lines
    for line, (path, said) in zip(lines, files, strict=True):
        assert line.startswith(f"{prefix}{path}: "), line
        assert said in line, (line, said)


@pytest.mark.parametrize("seat", [None, 2], ids=["outcome", "seat"])
def test_hearts_replay_gives_one_line_per_hostile_file_and_replays_the_rest(
    tmp_path: Path, seat: int | None
) -> None:
    files = write_hostile(tmp_path)
    good = _good(tmp_path)
    args = [
        "replay",
        *([] if seat is None else ["--seat", str(seat)]),
        *(str(p) for p, _ in files),
        str(good),
    ]
    done = hearts(*args, timeout=240)
    assert done.returncode == 2
    _one_line_each(done.stderr, "hearts: error: ", files)
    last = json.loads(done.stdout.strip().splitlines()[-1])
    assert (last["totals"] if seat is None else last) and (seat is not None or last["error"] is None)


def test_the_simulator_replay_gives_the_same_lines(tmp_path: Path) -> None:
    files = write_hostile(tmp_path)
    good = _good(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "hearts_client.sim", "replay", *(str(p) for p, _ in files), str(good)],
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, "HEARTS_SIM_BACKEND": "python"},
        check=False,
    )
    assert done.returncode == 2
    _one_line_each(done.stderr, "python -m hearts_client.sim replay: ", files)
    assert json.loads(done.stdout)["error"] is None


@pytest.fixture(scope="module")
def tournament(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("tournament")
    (folder / "t.toml").write_text(CONFIG)
    done = hearts("tournament", "run", str(folder / "t.toml"), "--output", str(folder / "out"), timeout=280)
    assert done.returncode == 0, done.stderr
    return folder / "out"


#: Stored in the database (a TEXT column holds text: the non-UTF-8 file goes to a record file).
IN_DATABASE = [
    "wrong_type.json",
    "absurd_seat.json",
    "digits.json",
    "deep.json",
    "truncated.json",
    "nan.json",
]
IN_FILES = ["wrong_list.json", "absurd.json", "huge.json", "non_utf8.json", "infinite.json", "truncated.json"]


@pytest.mark.timeout(600)
def test_tournament_verify_names_the_game_and_the_field_of_each_hostile_record(
    tournament: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    shutil.copytree(tournament, out)
    content = {name: (data, said) for name, data, said in HOSTILE}
    with sqlite3.connect(out / "tournament.sqlite") as db:
        games = db.execute("SELECT key, summary FROM games ORDER BY seq").fetchall()
        assert len(games) >= len(IN_DATABASE) + len(IN_FILES)
        expected: list[tuple[str, str]] = []
        for (key, _), name in zip(games, IN_DATABASE, strict=False):
            data, said = content[name]
            db.execute("UPDATE games SET record = ? WHERE key = ?", (data.decode(), key))
            expected.append((f"{key}: the stored record: ", said))
    for (key, summary), name in zip(games[len(IN_DATABASE) :], IN_FILES, strict=False):
        data, said = content[name]
        path = out / "records" / f"{json.loads(summary)['game_id']}.json"
        assert path.is_file()
        path.write_bytes(data)
        expected.append((f"{key}: the record file {path}: ", said))
    done = hearts("tournament", "verify", str(out), timeout=280)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr, (done.stdout + done.stderr)[-3000:]
    lines = done.stdout.splitlines()
    for start, said in expected:
        assert any(line.startswith(start) and said in line for line in lines), (start, said, lines)


@pytest.mark.timeout(600)
def test_league_verify_names_the_game_and_the_field_of_each_hostile_record(tmp_path: Path) -> None:
    from hearts_tournaments.league.play import StopAfter, run_league
    from tests.test_league import builtin, league

    with league(tmp_path / "league") as store:
        builtin(store, "heur", "heuristic")
        builtin(store, "rnd", "random")
        assert run_league(store, StopAfter(blocks=1), concurrency=2) == 1
    content = {name: (data, said) for name, data, said in HOSTILE}
    with sqlite3.connect(tmp_path / "league" / "league.sqlite") as db:
        keys = [k for (k,) in db.execute("SELECT key FROM games ORDER BY key")]
        for key, name in zip(keys, IN_DATABASE, strict=False):
            db.execute("UPDATE games SET record = ? WHERE key = ?", (content[name][0].decode(), key))
    done = hearts("league", "verify", str(tmp_path / "league"), timeout=280)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr, (done.stdout + done.stderr)[-3000:]
    for key, name in zip(keys, IN_DATABASE, strict=False):
        said = content[name][1]
        assert any(
            line.startswith(f"{key}: the stored record: ") and said in line
            for line in done.stdout.splitlines()
        ), (
            key,
            said,
            done.stdout,
        )


@pytest.mark.timeout(600)
def test_the_game_page_of_a_hostile_record_says_which_field(tournament: Path, tmp_path: Path) -> None:
    from tests.helpers.web_server import get, web_server

    out = tmp_path / "out"
    shutil.copytree(tournament, out)
    content = {name: (data, said) for name, data, said in HOSTILE}
    with sqlite3.connect(out / "tournament.sqlite") as db:
        keys = [k for (k,) in db.execute("SELECT key FROM games ORDER BY seq")]
        for key, name in zip(keys, IN_DATABASE, strict=False):
            db.execute("UPDATE games SET record = ? WHERE key = ?", (content[name][0].decode(), key))
    with web_server(out) as url:
        for key, name in zip(keys, IN_DATABASE, strict=False):
            for page in (f"/game/{key}", f"/game/{key}?seat=1"):
                reply = get(url + page)
                assert reply.status == 500, (page, reply.status)
                assert "Traceback" not in reply.body
                assert f"the record of game {key}" in reply.body, reply.body[-2000:]
                said = content[name][1]
                assert said.replace("'", "&#39;") in reply.body or said in reply.body, (page, said)


def test_the_referee_s_records_read_back_byte_for_byte_and_replay_to_the_stored_outcome(
    tournament: Path,
) -> None:
    from hearts_core.record import GameRecord
    from hearts_core.replay import replay

    with sqlite3.connect(tournament / "tournament.sqlite") as db:
        rows = db.execute("SELECT key, summary, record FROM games ORDER BY seq").fetchall()
    assert rows
    for key, summary, text in rows:
        record = GameRecord.read(text, name=key)
        assert record.to_text() == text.rstrip("\n"), key  # as read back from the file, or not
        stored = json.loads(summary)
        on_disk = tournament / "records" / f"{stored['game_id']}.json"
        assert GameRecord.read(on_disk) == record
        assert on_disk.read_text() == record.to_text() + "\n"
        outcome = replay(record)
        assert outcome["error"] is None and outcome["totals"] == stored["totals"], key
