"""Results nobody can roll back: games dropped from the end, an earlier ``published.json`` put back.

Every game is signed and chained, so a game dropped from the middle breaks the chain. Dropped
from the end, it does not: the chain is shorter, and the ``published.json`` the runner wrote
before those games were played is a genuine signature by the same key over that shorter
chain. Whoever can write the folder puts it back and the rounds an entrant did badly in are
gone, no key needed. What catches it is a point of the chain kept outside the folder: the count
and head printed with the standings (and in the final ``published.json``), a head of the
league's ``heads.jsonl``, and a ``published.json`` that says whether the tournament was complete.

Each attack is played on a copy of a real tournament or league played over gRPC, with the exact
check the runner prints for the public.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from hearts_tournaments.league.store import HEADS
from hearts_tournaments.results import signing
from hearts_tournaments.tournament.folder import SNAPSHOT_NAME
from hearts_tournaments.tournament.store import Store
from tests.test_fair_play_results import CONFIG  # 12 games of two built-in bots

HEARTS = [sys.executable, "-m", "hearts_tournaments"]
GAMES = 12
KEPT = 8


def _run(*args: str, key: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*HEARTS, *args],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        cwd=cwd,
        env={**os.environ, signing.KEY_ENV: str(key)},
    )


def _printed_check(stdout: str) -> list[str]:
    """The check the runner tells the public to run, from its ``signed:`` line, as words."""
    line = next(line for line in stdout.splitlines() if line.startswith("signed: "))
    command = re.search(r"`(hearts [^`]+)`", line)
    assert command is not None, line
    return shlex.split(command.group(1))


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """A finished tournament of 12 games, and the check printed with its standings."""
    folder = tmp_path_factory.mktemp("rollback")
    (folder / "t.toml").write_text(CONFIG)
    result = _run("tournament", "run", "t.toml", "--progress", "never", key=folder / "key" / "k", cwd=folder)
    assert result.returncode == 0, result.stderr
    return folder, _printed_check(result.stdout)


def _keys(out: Path) -> list[str]:
    with sqlite3.connect(out / "tournament.sqlite") as db:
        return [k for (k,) in db.execute("SELECT key FROM games ORDER BY seq")]


def _drop(out: Path, keys: list[str]) -> None:
    """Deletes games as a writer of the folder would: rows, signatures and record files."""
    with sqlite3.connect(out / "tournament.sqlite") as db:
        for key in keys:
            (record,) = db.execute("SELECT record FROM games WHERE key = ?", (key,)).fetchone()
            (out / "records" / f"{json.loads(record)['game_id']}.json").unlink()
            db.execute("DELETE FROM games WHERE key = ?", (key,))
            db.execute("DELETE FROM signatures WHERE key = ?", (key,))
    (out / SNAPSHOT_NAME).unlink(missing_ok=True)  # report recomputes the standings


def _published_after(out: Path, games: int, key: Path, scratch: Path) -> str:
    """The ``published.json`` the runner wrote once ``games`` games were stored.

    The runner rewrites the file after every game, and Ed25519 signatures are deterministic:
    publishing a copy of the folder cut to its first ``games`` games with the organiser's key
    makes that file byte for byte (checked on the whole folder first)."""
    copy = scratch / f"published-after-{games}"
    shutil.copytree(out, copy)
    organiser = signing.load_signing_key(key)
    with Store.open(copy) as store:
        store.sign_with(organiser)
        store.publish(copy)
    assert (copy / signing.PUBLISHED).read_text() == (out / signing.PUBLISHED).read_text()
    _drop(copy, _keys(copy)[games:])
    with Store.open(copy) as store:
        store.sign_with(organiser)
        store.publish(copy)
    return (copy / signing.PUBLISHED).read_text()


@pytest.fixture
def rolled_back(played: tuple[Path, list[str]], tmp_path: Path) -> tuple[Path, Path, list[str]]:
    """The attack: the last four games dropped, and the published.json of game 8 put back."""
    folder, check = played
    out = tmp_path / "out"
    shutil.copytree(folder / "out", out)
    final = tmp_path / "final-published.json"  # what the organiser published with the standings
    shutil.copy(out / signing.PUBLISHED, final)
    earlier = _published_after(out, KEPT, folder / "key" / "k", tmp_path)
    _drop(out, _keys(out)[KEPT:])
    (out / signing.PUBLISHED).write_text(earlier)
    return out, final, check


def test_games_dropped_from_the_end_fail_the_check_printed_with_the_standings(
    rolled_back: tuple[Path, Path, list[str]], tmp_path: Path
) -> None:
    out, final, check = rolled_back
    reader = tmp_path / "reader-has-no-key"  # a reader's machine: no organiser's key
    assert check[:3] == ["hearts", "tournament", "verify"] and "--head" in check, check
    words = [*check[3:]]
    words[words.index("FOLDER")] = str(out)
    result = _run("tournament", "verify", *words, key=reader, cwd=tmp_path)
    assert result.returncode == 1, result.stdout
    assert (
        f"chain: {KEPT} signed games, but {GAMES} were published (--games and --head given): games were "
        "dropped from the end" in result.stdout.splitlines()
    ), result.stdout
    # The final published.json, kept by a reader, says the same.
    result = _run("tournament", "verify", str(out), "--public-key", str(final), key=reader, cwd=tmp_path)
    assert result.returncode == 1 and f"but {GAMES} were published" in result.stdout, result.stdout


def test_a_bare_key_says_the_count_and_head_were_not_checked_and_the_tournament_reads_incomplete(
    rolled_back: tuple[Path, Path, list[str]], tmp_path: Path
) -> None:
    out, _final, check = rolled_back
    key = check[check.index("--public-key") + 1]
    result = _run("tournament", "verify", str(out), "--public-key", key, key=tmp_path / "none", cwd=tmp_path)
    # Everything in the folder agrees with everything else: the check passes, but says plainly
    # what it could not see, and that the signed file in the folder is of an unfinished tournament.
    assert result.returncode == 0, result.stdout
    summary = result.stdout.splitlines()[-1]
    assert "the count and chain head were not checked against any kept outside the folder" in summary
    assert "--games N --head HEX" in summary
    assert (
        f"incomplete: {KEPT} of {GAMES} scheduled games are stored; the folder's own published.json says "
        f"{KEPT} of {GAMES} were played when it was signed" in summary
    ), summary
    report = _run("tournament", "report", str(out), key=tmp_path / "none", cwd=tmp_path)
    assert f"signed: {KEPT} games by {key}" in report.stdout
    assert f"(incomplete: {KEPT} of {GAMES} scheduled games)" in report.stdout, report.stdout


def test_the_published_file_says_the_tournament_is_complete_against_its_schedule(
    played: tuple[Path, list[str]], tmp_path: Path
) -> None:
    folder, check = played
    published = json.loads((folder / "out" / signing.PUBLISHED).read_text())
    with Store.open(folder / "out") as store:
        scheduled, digest = store.schedule_digest()
    assert published["format"] == signing.PUBLISHED_FORMAT
    assert (published["played"], published["scheduled"], published["complete"]) == (GAMES, GAMES, True)
    assert published["schedule_sha256"] == digest and scheduled == GAMES
    words = [*check[3:]]
    words[words.index("FOLDER")] = str(folder / "out")
    result = _run("tournament", "verify", *words, key=tmp_path / "none", cwd=tmp_path)
    assert result.returncode == 0, result.stdout
    assert f"complete: all {GAMES} scheduled games are stored" in result.stdout
    assert "the count and chain head hold against --games and --head given" in result.stdout
    # A published.json of a shorter schedule (the config's deals edited down after games were
    # dropped) is refused: it was signed over another schedule.
    out = tmp_path / "out"
    shutil.copytree(folder / "out", out)
    with sqlite3.connect(out / "tournament.sqlite") as db:
        db.execute("UPDATE meta SET value = value || ' ' WHERE key = 'schedule'")
    result = _run("tournament", "verify", str(out), key=folder / "key" / "k", cwd=tmp_path)
    assert "was signed over another schedule than the stored one" in result.stdout, result.stdout


def test_a_tournament_published_before_completeness_still_verifies_and_says_so(
    played: tuple[Path, list[str]], tmp_path: Path
) -> None:
    # A folder from before published.json said whether it was complete: its file has the key,
    # the count and the head only. It verifies, and the closing line says what it lacks.
    folder, check = played
    out = tmp_path / "out"
    shutil.copytree(folder / "out", out)
    new = json.loads((out / signing.PUBLISHED).read_text())
    old = {k: new[k] for k in ("tournament", "tournament_id", "public_key", "games", "chain_head")}
    key = signing.load_signing_key(folder / "key" / "k")
    old["signature"] = key.sign(signing._PUBLISHED + signing._canonical(old)).hex()
    (out / signing.PUBLISHED).write_text(json.dumps(old, indent=2) + "\n")
    for extra in ([], ["--public-key", str(out / signing.PUBLISHED)], check[4:]):
        result = _run("tournament", "verify", str(out), *extra, key=folder / "key" / "k", cwd=tmp_path)
        assert result.returncode == 0, (extra, result.stdout)
        assert "was written by an older version and does not say whether it was complete" in result.stdout


@pytest.mark.timeout(900)
def test_a_league_rolled_back_past_a_head_a_reader_kept_fails_verify(tmp_path: Path) -> None:
    key = tmp_path / "organiser" / "k"
    for step in (
        ["init", "lg", "--table-size", "6", "--max-hands", "1", "--sandbox", "none"],
        ["add", "lg", "heur", "--builtin", "heuristic"],
        ["add", "lg", "rnd", "--builtin", "random"],
        ["run", "lg", "--blocks", "1"],
    ):
        result = _run("league", *step, key=key, cwd=tmp_path)
        assert result.returncode == 0, (step, result.stderr)
    earlier = tmp_path / "earlier"  # the league as it stood after block 0 (a backup, say)
    shutil.copytree(tmp_path / "lg", earlier)
    # A league stored before heads were published has none: it verifies, saying so, and the
    # next run publishes the heads of every block stored.
    (tmp_path / "lg" / HEADS).unlink()
    result = _run("league", "verify", "lg", key=key, cwd=tmp_path)
    assert result.returncode == 0 and f"no {HEADS} (a league stored before" in result.stdout, result.stdout
    result = _run("league", "run", "lg", "--blocks", "1", key=key, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    printed = _printed_check(result.stdout)
    assert printed[:3] == ["hearts", "league", "verify"] and "--head" in printed, printed
    # heads.jsonl: one signed line per stored block; a reader keeps the last one.
    lines = [json.loads(line) for line in (tmp_path / "lg" / HEADS).read_text().splitlines()]
    assert [line["block"] for line in lines] == [0, 1], lines
    kept = lines[-1]
    assert kept["chain_head"] == printed[printed.index("--head") + 1]
    assert kept["games"] == int(printed[printed.index("--games") + 1])
    public = printed[printed.index("--public-key") + 1]
    reader = tmp_path / "reader-has-no-key"

    def verify(*extra: str) -> subprocess.CompletedProcess[str]:
        return _run("league", "verify", "lg", "--public-key", public, *extra, key=reader, cwd=tmp_path)

    result = verify("--head", kept["chain_head"])
    assert result.returncode == 0, result.stdout
    assert f"{HEADS}: 2 blocks' heads, each signed and in the chain" in result.stdout
    # The attack: the database of block 0 put back, and the published files of then too.
    for name in ("league.sqlite", "league.sqlite-wal", "league.sqlite-shm"):
        (tmp_path / "lg" / name).unlink(missing_ok=True)
        if (earlier / name).exists():
            shutil.copy(earlier / name, tmp_path / "lg" / name)
    shutil.copy(earlier / signing.PUBLISHED, tmp_path / "lg" / signing.PUBLISHED)
    with_heads = (tmp_path / "lg" / HEADS).read_text()
    shutil.copy(earlier / HEADS, tmp_path / "lg" / HEADS)
    assert verify().returncode == 0  # everything in the folder agrees with everything else
    for extra in (
        ("--head", kept["chain_head"]),
        ("--games", str(kept["games"]), "--head", kept["chain_head"]),
    ):
        result = verify(*extra)
        assert result.returncode == 1, (extra, result.stdout)
        assert "chain: " in result.stdout and (
            "kept by the reader is nowhere in the chain" in result.stdout
            or "were dropped from the end" in result.stdout
        ), result.stdout
    # Had the heads been left as they were, the folder itself would tell.
    (tmp_path / "lg" / HEADS).write_text(with_heads)
    result = verify()
    assert result.returncode == 1
    assert f"{HEADS}: line 2: block 1's head" in result.stdout and "not in the chain" in result.stdout
