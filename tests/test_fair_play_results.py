"""Results nobody can rewrite: a consistent forgery, a dropped, reordered or re-signed game.

The forger holds the whole output folder (database, record files, deal secret) but not the
organiser's signing key, which lives outside it. Each attack is played on a copy of a real
tournament played over gRPC; ``hearts tournament verify`` must report it by the game's key.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hearts_client.bots import BUILTIN_BOTS
from hearts_core.local import play_game
from hearts_core.record import GameRecord, places_of, record_json, state_to_record
from hearts_core.rules import Rules
from hearts_tournaments.arena.job import deal_seed
from hearts_tournaments.arena.outcome import GameOutcome
from hearts_tournaments.results import signing
from hearts_tournaments.tournament.folder import SNAPSHOT_NAME
from hearts_tournaments.tournament.store import Store
from hearts_tournaments.tournament.verify import _check_game

HEARTS = [sys.executable, "-m", "hearts_tournaments", "tournament"]
CONFIG = """
[tournament]
name = "signed"
table_size = 6
deals = 2
seed = 11
max_hands = 2
output = "out"
concurrency = 2

[[bots]]
name = "heuristic"
builtin = "heuristic"

[[bots]]
name = "random"
builtin = "random"
"""


def _env(key: Path) -> dict[str, str]:
    return {**os.environ, signing.KEY_ENV: str(key)}


def _hearts(*args: str, key: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*HEARTS, *args], capture_output=True, text=True, timeout=600, check=False, env=_env(key)
    )


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("signed")
    (folder / "t.toml").write_text(CONFIG)
    result = subprocess.run(
        [*HEARTS, "run", str(folder / "t.toml"), "--progress", "never"],
        capture_output=True, text=True, timeout=600, check=False, cwd=folder,
        env=_env(folder / "organiser" / "signing-key"),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "signed: 12 games by ed25519:" in result.stdout
    return folder


@pytest.fixture
def copy(played: Path, tmp_path: Path) -> tuple[Path, Path]:
    """A copy of the output folder for a forger, and the organiser's key (outside it)."""
    out = tmp_path / "out"
    shutil.copytree(played / "out", out)
    return out, played / "organiser" / "signing-key"


def _rows(out: Path) -> list[tuple[str, str, str]]:
    with sqlite3.connect(out / "tournament.sqlite") as db:
        return [(k, s, r) for k, s, r in db.execute("SELECT key, summary, record FROM games ORDER BY seq")]


def _forge(out: Path, key: str) -> None:
    """Re-plays game ``key`` from its revealed seed with other legal decisions, and rewrites its
    row and record file consistently: everything but the signature agrees."""
    summary_text, record_text = next((s, r) for k, s, r in _rows(out) if k == key)
    record: dict[str, Any] = json.loads(record_text)
    forged = _replayed(record)
    assert forged["hands"] != record["hands"], "the forgery plays other decisions"
    text = record_json(forged)
    with Store.open(out) as store:
        game = next(g for g in store.schedule().games if g.key == key)
        seed = deal_seed(store.deal_secret(), game)
    stored = GameOutcome.from_json(json.loads(summary_text), text)
    problems, rebuilt = _check_game(stored, GameRecord.from_json(forged), game, seed)
    assert rebuilt is not None, problems
    with sqlite3.connect(out / "tournament.sqlite") as db:
        db.execute(
            "UPDATE games SET summary = ?, record = ? WHERE key = ?",
            (json.dumps(rebuilt.summary_json()), text, key),
        )
    (out / "records" / f"{record['game_id']}.json").write_text(text)
    (out / SNAPSHOT_NAME).unlink(missing_ok=True)  # and drops the cached standings: report recomputes


def _verify(out: Path, key: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return _hearts("verify", str(out), *extra, key=key)


def test_an_untouched_tournament_verifies_with_its_published_key(copy: tuple[Path, Path]) -> None:
    out, key = copy
    published = json.loads((out / signing.PUBLISHED).read_text())
    for extra in (
        (),
        ("--public-key", published["public_key"]),
        ("--public-key", str(out / signing.PUBLISHED)),
    ):
        result = _verify(out, key, *extra)
        assert result.returncode == 0, result.stdout + result.stderr
        assert "every game signed" in result.stdout


def test_a_consistent_forgery_is_reported_by_its_key(copy: tuple[Path, Path]) -> None:
    out, key = copy
    forged = _rows(out)[3][0]
    _forge(out, forged)
    result = _verify(out, key)
    assert result.returncode == 1, result.stdout
    problems = result.stdout.splitlines()[:-1]
    # Only the signature gives it away: the rows, records and standings agree with each other.
    assert problems and all("signature" in p for p in problems), problems
    assert any(p.startswith(f"{forged}: its signature does not hold") for p in problems), problems
    # A reader who holds only the published key sees it too.
    published = json.loads((out / signing.PUBLISHED).read_text())["public_key"]
    assert _verify(out, tmp_key(out), "--public-key", published).returncode == 1


def tmp_key(out: Path) -> Path:
    """A key file that does not exist: a reader's machine, without the organiser's key."""
    return out.parent / "no-key-here"


def test_a_dropped_game_is_reported(copy: tuple[Path, Path]) -> None:
    out, _key = copy
    published = out.parent / "as-published.json"
    shutil.copy(out / signing.PUBLISHED, published)
    rows = _rows(out)
    dropped, after = rows[5][0], rows[6][0]
    last = rows[-1][0]
    with sqlite3.connect(out / "tournament.sqlite") as db:
        for k in (dropped, last):
            game_id = json.loads(db.execute("SELECT record FROM games WHERE key = ?", (k,)).fetchone()[0])[
                "game_id"
            ]
            db.execute("DELETE FROM games WHERE key = ?", (k,))
            db.execute("DELETE FROM signatures WHERE key = ?", (k,))
            (out / "records" / f"{game_id}.json").unlink()
    result = _verify(out, tmp_key(out), "--public-key", str(published))
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert (
        f"{after}: signed as game 6 after game 4: a game was dropped, inserted or reordered before it"
        in lines
    )
    assert any(line.startswith(f"{after}: its signature does not hold") for line in lines)
    assert (
        f"chain: 10 signed games, but 12 were published (the published file {published}): games were "
        "dropped from the end" in lines
    )
    # The break is reported where it is, once: the other games' signatures still hold.
    assert len(lines) <= 6, lines


def test_reordered_games_are_reported(copy: tuple[Path, Path]) -> None:
    out, key = copy
    rows = _rows(out)
    a, b = rows[1][0], rows[2][0]
    with sqlite3.connect(out / "tournament.sqlite") as db:
        db.execute("UPDATE signatures SET seq = -1 WHERE key = ?", (a,))
        db.execute("UPDATE signatures SET seq = 1 WHERE key = ?", (b,))
        db.execute("UPDATE signatures SET seq = 2 WHERE key = ?", (a,))
    result = _verify(out, key)
    assert result.returncode == 1
    assert f"{b}: its signature does not hold" in result.stdout
    assert f"{a}: its signature does not hold" in result.stdout


def test_a_tournament_re_signed_with_another_key_is_reported(copy: tuple[Path, Path], tmp_path: Path) -> None:
    out, key = copy
    organiser = json.loads((out / signing.PUBLISHED).read_text())["public_key"]
    forged = _rows(out)[0][0]
    _forge(out, forged)
    # The forger signs the whole chain again with a key of its own and publishes that key.
    own = signing.load_signing_key(tmp_path / "forger-key")
    with Store.open(out) as store:
        store._db.execute("DELETE FROM signatures")
        store.sign_with(own)
        assert store.signer is not None
        for k, summary, record in _rows(out):
            with store._db:
                store.signer.sign_next(store._db, k, summary, record)
        store.publish(out)
    # Checked against the organiser's published key, or on the organiser's machine: caught.
    for result in (_verify(out, tmp_key(out), "--public-key", organiser), _verify(out, key)):
        assert result.returncode == 1, result.stdout
        assert (
            f"{forged}: signed by ed25519:" in result.stdout
            and "not by the tournament's key" in result.stdout
        )
    # Without any key but the folder's own claim, verify says whose key it trusted.
    result = _verify(out, tmp_key(out))
    assert "that the folder itself names" in result.stdout and "--public-key" in result.stdout


def test_the_signing_key_may_not_lie_in_the_output_folder(tmp_path: Path) -> None:
    (tmp_path / "t.toml").write_text(CONFIG)
    result = subprocess.run(
        [*HEARTS, "run", str(tmp_path / "t.toml"), "--progress", "never"],
        capture_output=True, text=True, timeout=600, check=False, cwd=tmp_path,
        env=_env(tmp_path / "out" / "signing-key"),
    )  # fmt: skip
    assert result.returncode != 0
    assert "lies inside the output folder" in result.stderr and "Traceback" not in result.stderr


def test_verify_with_a_bad_public_key_is_one_line(copy: tuple[Path, Path]) -> None:
    out, key = copy
    result = _verify(out, key, "--public-key", "not-a-key")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def _replayed(record: dict[str, Any]) -> dict[str, Any]:
    """The record re-played from its revealed seed with other legal decisions (a forgery)."""
    players = record["players"]
    rules = Rules(players, record["target_score"], record["max_hands"])
    state = play_game(rules, record["seed"], [BUILTIN_BOTS["random"](f"forged-{s}") for s in range(players)])
    forged = state_to_record(
        state, **{k: v for k, v in record.items() if k not in {"hands", "result", "faults"}}
    )
    forged["faults"] = []
    if isinstance(record.get("result"), dict):
        totals = list(state.totals)
        places = list(places_of(totals))
        forged["result"] = {
            **record["result"],
            "totals": totals,
            "places": places,
            "winners": list(state.winners),
        }
    return forged


@pytest.mark.timeout(600)
def test_hearts_league_verify_reports_a_consistent_forgery_by_its_key(tmp_path: Path) -> None:
    key = tmp_path / "organiser" / "signing-key"
    lg = tmp_path / "lg"
    env = _env(key)
    run = [sys.executable, "-m", "hearts_tournaments", "league"]
    steps = [
        ["init", str(lg), "--table-size", "6", "--max-hands", "1", "--sandbox", "none"],
        ["add", str(lg), "heur", "--builtin", "heuristic"],
        ["add", str(lg), "rnd", "--builtin", "random"],
        ["run", str(lg), "--blocks", "1"],
        ["verify", str(lg)],
    ]
    for step in steps:
        result = subprocess.run(
            [*run, *step], capture_output=True, text=True, timeout=600, check=False, env=env
        )
        assert result.returncode == 0, (step, result.stdout, result.stderr)
    assert "every game signed" in result.stdout
    published = json.loads((lg / signing.PUBLISHED).read_text())
    with sqlite3.connect(lg / "league.sqlite") as db:
        key_of, summary, record = db.execute(
            "SELECT key, summary, record FROM games WHERE block IS NOT NULL ORDER BY rowid LIMIT 1"
        ).fetchone()
        forged = _replayed(json.loads(record))
        assert forged["hands"] != json.loads(record)["hands"]
        new_summary = {**json.loads(summary), "totals": forged["result"]["totals"]}
        db.execute(
            "UPDATE games SET summary = ?, record = ? WHERE key = ?",
            (json.dumps(new_summary), record_json(forged), key_of),
        )
    for extra in ((), ("--public-key", published["public_key"])):
        result = subprocess.run(
            [*run, "verify", str(lg), *extra],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
            env=env,
        )
        assert result.returncode == 1, result.stdout
        lines = result.stdout.splitlines()[:-1]
        assert lines == [lines[0]] and lines[0].startswith(f"{key_of}: its signature does not hold"), lines


def _someone_elses(path: Path) -> Path:
    """A file that belongs to another user: the key made by ``signing`` given to uid 65534 when
    this test runs as root; else a system file of root's (the ownership check comes first)."""
    if os.geteuid() == 0:
        signing.load_signing_key(path)
        os.chown(path, 65534, 65534)
        return path
    return Path("/etc/hostname")


KEY_ATTACKS = ["0644", "0640", "0602", "another user's", "a link to another user's 0666 key"]


@pytest.mark.parametrize("attack", KEY_ATTACKS)
def test_a_signing_key_others_can_read_write_or_own_is_refused(tmp_path: Path, attack: str) -> None:
    # Anyone who can read the key signs results in the organiser's name; anyone who can write it
    # (or owns it, or the file a link leads to) swaps in a key of their own. Refused as ssh
    # refuses such a private key, before anything is scheduled, naming the fix.
    key = tmp_path / "organiser" / "signing-key"
    if attack.startswith("0"):
        signing.load_signing_key(key)
        key.chmod(int(attack, 8))
        fix = f"chmod 600 {key}"
    elif attack == "another user's":
        key = _someone_elses(key)
        fix = "belongs to uid"
    else:
        theirs = _someone_elses(tmp_path / "theirs" / "signing-key")
        if theirs.parent == tmp_path / "theirs":
            theirs.chmod(0o666)
        key.parent.mkdir(mode=0o700)
        key.symlink_to(theirs)
        fix = "is a symbolic link"
    (tmp_path / "t.toml").write_text(CONFIG)
    lg = tmp_path / "lg"
    league = [sys.executable, "-m", "hearts_tournaments", "league"]
    for step in (
        ["init", "lg", "--table-size", "6", "--max-hands", "1", "--sandbox", "none"],
        ["add", "lg", "heur", "--builtin", "heuristic"],
        ["add", "lg", "rnd", "--builtin", "random"],
    ):
        made = subprocess.run([*league, *step], capture_output=True, text=True, cwd=tmp_path, check=False)
        assert made.returncode == 0, made.stderr
    runs = ([*HEARTS, "run", "t.toml", "--progress", "never"], [*league, "run", "lg", "--blocks", "1"])
    for command in runs:
        result = subprocess.run(
            command, capture_output=True, text=True, timeout=600, check=False, cwd=tmp_path, env=_env(key)
        )
        assert result.returncode == 2, (command, result.stdout, result.stderr)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
        assert "signing key" in lines[0] and fix in lines[0], lines[0]
    # Nothing was scheduled, played or signed.
    assert not (tmp_path / "out").exists()
    with sqlite3.connect(lg / "league.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM games").fetchone() == (0,)
    assert not (lg / signing.PUBLISHED).exists()


def _peak_rss_mb(command: list[str], env: dict[str, str]) -> tuple[subprocess.CompletedProcess[str], float]:
    """Runs ``command`` from a fresh Python whose only child it is: its result, and its peak
    resident memory in MB (``RUSAGE_CHILDREN``)."""
    probe = (
        "import json, resource, subprocess, sys\n"
        "r = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "print(json.dumps([r.returncode, r.stdout, r.stderr, "
        "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe, *command],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
        env=env,
    )
    code, stdout, stderr, peak = json.loads(out.stdout)
    return subprocess.CompletedProcess(command, code, stdout, stderr), float(peak)


def test_a_huge_or_deep_published_file_is_one_line_and_read_within_a_bound(copy: tuple[Path, Path]) -> None:
    # `--public-key FILE` and the folder's own published.json are read by verify (and report):
    # whoever hands a reader the file, or writes the folder, chooses its size and shape.
    out, key = copy
    deep = out.parent / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    huge = out.parent / "huge.json"
    with huge.open("wb") as handle:  # 200 MB, sparse: nothing to write, everything to read
        handle.truncate(200 * 1024 * 1024)
    baseline = _peak_rss_mb([*HEARTS, "verify", str(out)], _env(key))[1]
    for given in (deep, huge):
        result, peak = _peak_rss_mb([*HEARTS, "verify", str(out), "--public-key", str(given)], _env(key))
        assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and str(given) in lines[0], lines
        # Refused after a small read: no more memory than an ordinary verify (main: 657 MB).
        assert peak < baseline + 50, (given.name, peak, baseline)
    # The same files planted in the folder as its published.json: one problem line each.
    for planted in (deep, huge):
        shutil.copyfile(planted, out / signing.PUBLISHED)
        for command in (["verify", str(out)], ["report", str(out)]):
            result = _hearts(*command, key=key)
            assert "Traceback" not in result.stderr, result.stderr
        result = _verify(out, key)
        assert result.returncode == 1, result.stdout
        assert [line for line in result.stdout.splitlines() if line.startswith("published:")], result.stdout
