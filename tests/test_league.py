"""League play: commands, validation, matchmaking, and crash safety under SIGKILL."""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hearts_core.defaults import TablePolicy
from hearts_tournaments.arena.bots import BotSpec, Reuse
from hearts_tournaments.arena.sandbox import SandboxKind
from hearts_tournaments.arena.settings import PlaySettings
from hearts_tournaments.league import commands
from hearts_tournaments.league.config import LeagueConfig, LeagueError
from hearts_tournaments.league.matchmaking import Candidate, choose_table
from hearts_tournaments.league.play import StopAfter, run_league
from hearts_tournaments.league.rating_models import RATING_MODELS
from hearts_tournaments.league.store import ACTIVE, ERROR, QUARANTINED, RETIRED, LeagueStore
from tests.helpers import cli
from tests.helpers.cli import HEARTS
from tests.helpers.web_server import get, web_server

SECRET = bytes(range(32))
#: Short games: the test is about blocks, not about play.
FAST = {
    "table_size": 6,
    "seed": "kill",
    "max_hands": 2,
    "decision_ms": 5000,
    "sandbox": "none",
    "bootstrap": 50,
}


def league(folder: Path) -> LeagueStore:
    return commands.init_league(folder, LeagueConfig.from_json(FAST), SECRET)


def builtin(store: LeagueStore, name: str, bot: str, update: bool = False) -> str:
    return commands.add_version(store, commands.make_spec(name, None, bot), update=update)


def hearts(*args: str) -> subprocess.CompletedProcess[str]:
    """``hearts league ARGS``."""
    return cli.hearts("league", *args)


def wait_blocks(folder: Path, count: int, process: subprocess.Popen[bytes], timeout: float = 200) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert process.poll() is None, "run ended early"
        with LeagueStore.open(folder) as store:
            if store.block_count() >= count:
                return
        time.sleep(0.2)
    raise AssertionError(f"fewer than {count} blocks after {timeout} s")


@pytest.mark.timeout(900)
def test_sigkill_loses_nothing_and_recompute_matches_an_uninterrupted_run(tmp_path: Path) -> None:
    a = tmp_path / "a"
    with league(a) as store:
        builtin(store, "heur", "heuristic")
        builtin(store, "rnd", "random")
    log = (tmp_path / "run.log").open("wb")
    process = subprocess.Popen(
        [*HEARTS, "league", "run", str(a), "--forever", "--concurrency", "3"],
        stdout=log,
        stderr=log,
        start_new_session=True,
    )
    try:
        wait_blocks(a, 1, process)
        assert hearts("add", str(a), "rnd2", "--builtin", "random").returncode == 0
        wait_blocks(a, 2, process)
        assert hearts("retire", str(a), "rnd").returncode == 0
        wait_blocks(a, 3, process)
        # Another `run` is refused while one plays.
        refused = hearts("run", str(a), "--blocks", "1")
        assert refused.returncode == 1 and "another `hearts league run`" in refused.stderr
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    with LeagueStore.open(a) as store:
        killed_at = store.block_count()
    done = hearts("run", str(a), "--blocks", "2", "--concurrency", "3")
    assert done.returncode == 0, done.stderr
    with LeagueStore.open(a) as store:
        rows = store.block_rows()
        assert [r[0] for r in rows] == list(range(killed_at + 2))
        by_block = store.block_games()
        for number, _seed, seats, _seen in rows:
            games = by_block[number]
            # Complete: every rotation of one seating, once.
            assert len(games) == 6
            assert sorted(g.key for g in games) == [f"b{number:06d}-r{r:02d}" for r in range(6)]
            for r, game in enumerate(games):
                assert game.seats == tuple(seats[(s - r) % 6] for s in range(6))
        keys = [k for k, *_ in store.games()]
        assert len(keys) == len(set(keys))
        retired_at = next(b for b, v, k, _t in store.events() if v == "rnd@v1" and k == RETIRED)
        assert all("rnd@v1" not in seats for n, _s, seats, _c in rows if n > retired_at)
        assert {v.id: v.status for v in store.versions()} == {
            "heur@v1": ACTIVE,
            "rnd@v1": RETIRED,
            "rnd2@v1": ACTIVE,
        }
        log_a = store.commands()
        plan = [(n, seen) for n, _s, _t, seen in rows]
        (tmp_path / "game.json").write_text(store.record("b000000-r00") or "")
    replayed = subprocess.run(
        [*HEARTS, "replay", str(tmp_path / "game.json")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert replayed.returncode == 0 and json.loads(replayed.stdout)["totals"], replayed.stderr
    official = hearts("recompute", str(a))
    assert official.returncode == 0
    assert official.stdout == hearts("recompute", str(a)).stdout

    # The same commands at the same points, never interrupted: the same blocks, the same table.
    b = tmp_path / "b"
    with league(b) as store:
        given = 0
        for _number, seen in plan:
            for seq, body in log_a:
                if given < seq <= seen:
                    store.execute(body)
                    given = seq
            assert run_league(store, StopAfter(blocks=1), concurrency=3) == 1
        assert [r[2] for r in store.block_rows()] == [r[2] for r in rows]
    assert hearts("recompute", str(b)).stdout == official.stdout


def test_a_crashing_version_gets_status_error_and_never_plays(tmp_path: Path) -> None:
    crash = tmp_path / "crash.py"
    crash.write_text("import sys\nsys.exit(3)\n")
    with league(tmp_path / "l") as store:
        builtin(store, "heur", "heuristic")
        builtin(store, "rnd", "random")
        spec = commands.make_spec("crash", f"{sys.executable} {crash}", None)
        commands.add_version(store, spec)
        lines: list[str] = []
        assert run_league(store, StopAfter(blocks=1), concurrency=3, emit=lines.append) == 1
        version = store.resolve("crash")
        assert version.status == ERROR and "validation" in version.note
        assert any(line.startswith("crash@v1: error") for line in lines)
        assert all("crash@v1" not in seats for _n, _s, seats, _c in store.block_rows())
        assert [g["validates"] for g in commands.list_games(store, "crash", "validation")] == ["crash@v1"]
        info = commands.info(store, "heur")
        assert info["blocks"] == 1 and info["games"] == 6 and len(info["history"]) == 1
        # `hearts web LEAGUE_DIR` shows the league's blocks as the tournament pages do.
        with web_server(tmp_path / "l") as url:
            assert "heur@v1" in get(url + "/").body
            assert get(url + "/game/b000000-r03").status == 200
            assert "crash@v1" not in get(url + "/games").body
        # The same command again is refused.
        with pytest.raises(LeagueError, match="already runs exactly this"):
            builtin(store, "rnd", "random", update=True)


def test_a_version_that_fails_rated_games_is_quarantined_and_said_so(tmp_path: Path) -> None:
    flag = tmp_path / "broken"
    script = tmp_path / "flaky.py"
    script.write_text(
        "import os, sys\n"
        "if os.path.exists(sys.argv[1]):\n    sys.exit(1)\n"
        "from hearts_tournaments.arena.builtin_bot import main\n"
        "sys.exit(main(['random', *sys.argv[2:]]))\n"
    )
    config = LeagueConfig.from_json({**FAST, "quarantine_after": 2})
    with commands.init_league(tmp_path / "l", config, SECRET) as store:
        builtin(store, "heur", "heuristic")
        builtin(store, "rnd", "random")
        commands.add_version(store, commands.make_spec("flaky", f"{sys.executable} {script} {flag}", None))
        lines: list[str] = []

        def emit(line: str) -> None:
            lines.append(line)
            if line.startswith("flaky@v1: active"):
                flag.write_text("from now on it crashes")

        assert run_league(store, StopAfter(blocks=2), concurrency=3, emit=emit) == 2
        assert store.resolve("flaky").status == QUARANTINED
        assert any(line.startswith("flaky@v1: quarantined after") for line in lines)
        (first, second) = [seats for _n, _s, seats, _c in store.block_rows()]
        assert "flaky@v1" in first and "flaky@v1" not in second
        info = commands.info(store, "flaky")
        assert info["failed_games"] == 6 and info["events"][-1]["status"] == QUARANTINED
        assert len(commands.list_games(store, "flaky", "failed")) == 6
        assert commands.set_status(store, "flaky", "unretire") == "flaky@v1: active"


def test_matchmaking_keeps_games_even_and_never_seats_two_of_one_entrant() -> None:
    rng = random.Random(1)
    blocks = dict.fromkeys((f"e{i}" for i in range(20)), 0)
    meetings: dict[tuple[str, str], int] = {}
    for _ in range(200):
        candidates = [Candidate(f"{e}@v1", e, n, 25.0 + i, 3.0) for i, (e, n) in enumerate(blocks.items())]
        seats = choose_table(candidates, 8, meetings, rng)
        assert len(seats) == 8 and len(set(seats)) == 8
        for vid in seats:
            blocks[vid.split("@")[0]] += 1
        present = sorted(set(seats))
        for i, x in enumerate(present):
            for y in present[i + 1 :]:
                meetings[(x, y)] = meetings.get((x, y), 0) + 1
    assert max(blocks.values()) - min(blocks.values()) <= 2
    with pytest.raises(ValueError, match="two entrants"):
        choose_table([Candidate("a@v1", "a", 0, 25, 8), Candidate("a@v2", "a", 0, 25, 8)], 6, {}, rng)
    # Kept versions (update --keep) play, but never at one table with each other.
    kept = [Candidate(f"{e}@v{n}", e, 0, 25, 8) for e in "abcd" for n in (1, 2)]
    for _ in range(50):
        seats = choose_table(kept, 6, {}, rng)
        assert len(seats) == 6 and len({v.split("@")[0] for v in seats}) == len(set(seats)) == 4
    few = choose_table([Candidate("a@v1", "a", 0, 25, 8), Candidate("b@v1", "b", 0, 25, 8)], 7, {}, rng)
    assert sorted(set(few)) == ["a@v1", "b@v1"] and len(few) == 7


def test_league_commands_fail_with_one_line(tmp_path: Path) -> None:
    assert "holds no league" in hearts("show", str(tmp_path / "none")).stderr
    assert hearts("init", str(tmp_path / "x"), "--table-size", "5").stderr.count("\n") == 1
    assert hearts("init", str(tmp_path / "l")).returncode == 0
    for args, message in [
        (("add", "l", "a"), "exactly one of --command and --builtin"),
        (("add", "l", "a", "--builtin", "nope"), "unknown built-in bot"),
        (("add", "l", "a", "--command", "x 'y"), "does not parse"),
        (("retire", "l", "ghost"), "no entrant or version"),
        (("run", "l"), "give one of"),
        (("run", "l", "--blocks", "1"), "fewer than two active versions"),
        (("show", "l", "--format", "xml"), "--format must be"),
        (("games", "l", "--status", "odd"), "--status must be"),
    ]:
        result = subprocess.run(
            [*HEARTS, "league", *args], capture_output=True, text=True, cwd=tmp_path, timeout=60, check=False
        )
        assert result.returncode != 0 and message in result.stderr, (args, result.stderr)
        assert "Traceback" not in result.stderr and result.stderr.count("\n") == 1, result.stderr


def test_run_logs_to_a_file_and_says_each_block_is_stored(tmp_path: Path) -> None:
    """`hearts league run` keeps the referee's and runner's log lines in LEAGUE/league.log, as the
    tournament runner does, and says of each block that it is stored, with its result."""
    folder = tmp_path / "l"
    with league(folder) as store:
        builtin(store, "heur", "heuristic")
        builtin(store, "rnd", "random")
    result = hearts("run", str(folder), "--blocks", "2")
    assert result.returncode == 0, result.stderr
    assert len(result.stderr.splitlines()) <= 2, result.stderr  # no referee JSON on stderr
    log = folder / "league.log"
    assert log.is_file() and (log.stat().st_mode & 0o777) == 0o600
    events = [json.loads(line)["event"] for line in log.read_text().splitlines()]
    assert "league_block_stored" in events
    blocks = [line for line in result.stdout.splitlines() if line.startswith("block ")]
    assert len(blocks) == 2, result.stdout
    for line in blocks:
        # "block 0 stored: 6 games; mean place heur@v1 ..., rnd@v1 ..."
        assert re.match(r"block \d+ stored: 6 games; mean place (heur|rnd)@v1 \d\.\d\d, ", line), line
    assert f"its log: {log}" in result.stdout


def test_the_web_shows_a_league_as_a_league(tmp_path: Path) -> None:
    """`hearts web LEAGUE` has the league's own page: the official table with pinned and
    provisional marks, ranked by strength, every version's status and why, the blocks and
    the validation games; never a tournament's "complete"."""
    crash = tmp_path / "crash.py"
    crash.write_text("import sys\nsys.exit(3)\n")
    folder = tmp_path / "l"
    with league(folder) as store:
        commands.add_version(store, commands.make_spec("heur", None, "heuristic"), pinned=0.0)
        builtin(store, "rnd", "random")
        commands.add_version(store, commands.make_spec("crash", f"{sys.executable} {crash}", None))
        assert run_league(store, StopAfter(blocks=1), concurrency=3) == 1
        with web_server(folder) as url:
            page = get(url + "/")
            assert page.status == 200, page.body[:500]
            body = page.body
            assert "Official table" in body and "complete" not in body
            assert "1 block stored" in body
            heur = re.search(r'<tr data-version="heur@v1".*?</tr>', body, re.S)
            assert heur is not None and "pinned at +0.00" in heur.group(0) and "provisional" in heur.group(0)
            failed = re.search(r'<tr data-version="crash@v1" data-status="error".*?</tr>', body, re.S)
            assert failed is not None
            versions = body[body.index('id="league-versions"') :]
            assert "failed its validation game" in versions
            validations = body[body.index('id="league-validations"') :]
            assert "validate-crash@v1" in validations and "none: it passed" in validations
            assert get(url + "/game/b000000-r00").status == 200
            # Live: a block stored while the page is served shows at the next look.
            assert run_league(store, StopAfter(blocks=1), concurrency=3) == 1
            assert "2 blocks stored" in get(url + "/").body
            assert "2 blocks stored" in get(url + "/fragment/standings").body


@pytest.mark.timeout(600)
def test_a_league_rated_with_thurstone_mosteller_plays_and_shows_its_columns(tmp_path: Path) -> None:
    """`init --rating openskill-tm`: `run` rates its blocks with that model, and `show` (table and
    JSON) and the web page show its columns, not the default model's."""
    folder = tmp_path / "l"
    made = hearts("init", str(folder), "--rating", "openskill-tm", "--sandbox", "none", "--max-hands", "2")
    assert made.returncode == 0, made.stderr
    model, default = RATING_MODELS["openskill-tm"], RATING_MODELS["openskill-pl"]
    with LeagueStore.open(folder) as store:
        builtin(store, "heur", "heuristic")
        builtin(store, "rnd", "random")
        assert run_league(store, StopAfter(blocks=2), concurrency=3) == 2
        replayed: dict[str, dict[str, float]] = {}
        other: dict[str, dict[str, float]] = {}
        for _number, games in sorted(store.block_games().items()):
            replayed.update(model.update(games, replayed))
            other.update(default.update(games, other))
        assert {v: r.state for v, r in store.ratings().items()} == replayed != other
    table = hearts("show", str(folder))
    assert table.returncode == 0, table.stderr
    head, *rows = table.stdout.splitlines()
    assert head.split()[-1] == "online-tm" and " online " not in f" {head} "
    heur = next(row for row in rows if " heur@v1 " in row)
    assert heur.endswith(model.columns[0].text(replayed["heur@v1"]))
    shown = json.loads(hearts("show", str(folder), "--format", "json").stdout)
    assert {r["version"]: (r["mu"], r["sigma"]) for r in shown} == {
        v: (round(s["mu"], 6), round(s["sigma"], 6)) for v, s in replayed.items()
    }
    with web_server(folder) as url:
        body = get(url + "/").body
    assert "Online μ ± σ (Thurstone-Mosteller)" in body and "Online μ ± σ</th>" not in body
    row = re.search(r'<tr data-version="heur@v1".*?</tr>', body, re.S)
    assert row is not None and f"<td>{model.columns[0].text(replayed['heur@v1'])}</td>" in row.group(0)


def test_a_league_config_gives_the_arena_its_play_settings(tmp_path: Path) -> None:
    """``LeagueConfig.play_settings``: the league's table, rules, policy, sandbox and names, a
    process per seat per game (``reuse = "never"``), the league's folder as the base."""
    config = LeagueConfig(
        name="winter",
        table_size=7,
        target_score=50,
        max_hands=9,
        policy=TablePolicy(decision_ms=1234),
        sandbox="none",
        hide_names=True,
    )
    bots = (BotSpec(name="v1", builtin="random"),)
    settings = config.play_settings(tmp_path, bots)
    assert settings == PlaySettings(
        name="winter",
        table_size=7,
        bots=bots,
        target_score=50,
        max_hands=9,
        policy=TablePolicy(decision_ms=1234),
        sandbox=SandboxKind.NONE,
        reuse=Reuse.NEVER,
        hide_names=True,
        base_dir=tmp_path,
    )
    assert settings.bot("v1") is bots[0] and settings.sandbox_of(bots[0]) is SandboxKind.NONE
