"""``hearts web`` over HTTP: the real server in a subprocess, tournaments built in-process.

Covers the pages' content against the standings, the withheld rule for duplicate deals, the
error pages, the read-only promise, the event stream, the seat views and the static export.
The browser tests are in test_web_browser.py.
"""

from __future__ import annotations

import hashlib
import json
import re
import socket
import sqlite3
import urllib.request
from pathlib import Path

import pytest

from hearts_core.record import GameRecord
from hearts_server.redacted import redacted_replay
from hearts_tournaments.arena.job import ScheduledGame
from hearts_tournaments.tournament.folder import open_tournament
from hearts_tournaments.tournament.runner import tournament_standings
from hearts_tournaments.tournament.store import Store
from hearts_tournaments.web.meetings import share_intervals
from hearts_tournaments.web.timeline import full_timeline, seat_timeline
from tests.helpers.cli import hearts
from tests.helpers.web_server import get, web_server
from tests.helpers.web_store import add_games, config_text, create

#: An interval written with a dash between its ends, as in "(-3.35–-1.36)" or "(40–60%)".
DASHED = re.compile(r"\(\s*[-+]?\d+(?:\.\d+)?%?\s*(?:–|-)\s*[-+]?\d")
BUILTIN = {"hero": "heuristic", "rando": "random", "other": "random"}
TARGET = 30


def _duplicate(folder: Path) -> list[ScheduledGame]:
    """A duplicate tournament of 2 deals x 6 rotations; nothing played yet."""
    text = config_text(
        BUILTIN.items(), table_size=6, deals=2, duplicate=True, target_score=TARGET, seed="web"
    )
    return create(folder, text)


@pytest.fixture(scope="module")
def partial(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[ScheduledGame]]:
    """Deal 0 fully played (one game with a fault), deal 1 half played."""
    folder = tmp_path_factory.mktemp("partial")
    games = _duplicate(folder)
    deal0 = [g for g in games if g.deal == 0]
    deal1 = [g for g in games if g.deal == 1]
    add_games(folder, deal0 + deal1[:3], BUILTIN, TARGET, faults={deal0[1].key: 2})
    return folder, games


def _hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_pages_show_the_standings_as_the_report_computes_them(
    partial: tuple[Path, list[ScheduledGame]],
) -> None:
    folder, _ = partial
    tournament = open_tournament(folder)
    with tournament.store:
        standings = tournament_standings(tournament)
    report = json.loads(hearts("tournament", "report", str(folder), "--format", "json").stdout)
    assert report["standings"] == standings.to_json()["standings"]
    with web_server(folder) as url:
        page = get(url + "/")
        assert page.status == 200
        assert f"{standings.games_played} of {standings.games_total} games played" in page.body
        rows = re.findall(r'<tr data-bot="([^"]+)"', page.body)
        assert rows == [line.bot for line in standings.standings]
        for line in standings.standings:
            assert line.mean_place is not None and line.mean_place_ci is not None
            shown = f"{line.mean_place:.2f} ({line.mean_place_ci.low:.2f} to {line.mean_place_ci.high:.2f})"
            assert shown in page.body
        # Sorting and filtering from the URL, on the server.
        by_name = get(url + "/?sort=bot&order=desc")
        assert re.findall(r'<tr data-bot="([^"]+)"', by_name.body) == sorted(BUILTIN, reverse=True)
        filtered = get(url + "/?q=ran")
        assert re.findall(r'<tr data-bot="([^"]+)"', filtered.body) == ["rando"]
        # The head-to-head heat map holds every share.
        h2h = get(url + "/h2h")
        assert h2h.status == 200
        share = standings.head_to_head["hero"]["rando"].share
        assert share is not None and f"{100 * share:.0f}%" in h2h.body


def test_a_deal_with_games_to_play_is_withheld_until_it_is_complete(
    partial: tuple[Path, list[ScheduledGame]],
    tmp_path: Path,
) -> None:
    source, games = partial
    folder = tmp_path / "t"
    folder.mkdir()
    for name in ("tournament.sqlite",):
        db = sqlite3.connect(source / name)
        db.execute("VACUUM INTO ?", (str(folder / name),))
        db.close()
    deal1 = [g for g in games if g.deal == 1]
    played, waiting = deal1[:3], deal1[3:]
    with sqlite3.connect(folder / "tournament.sqlite") as db:
        records = {key: json.loads(r) for key, r in db.execute("SELECT key, record FROM games")}
    secret = records[played[0].key]["hands"][0]["deal"]
    with web_server(folder) as url:
        for game in played:
            for path in (f"/game/{game.key}", f"/game/{game.key}?seat=1", f"/game/{game.key}/record.json"):
                reply = get(url + path)
                assert reply.status == 403, path
                assert "every game of deal 1 is played" in reply.body
        pages = [
            get(url + p).body for p in ("/", "/games", "/deal/1", "/h2h", *(f"/bot/{b}" for b in BUILTIN))
        ]
        for body in pages:
            assert f'href="/game/{played[0].key}"' not in body
            for hand in secret:  # no seat's cards of the unfinished deal, in any order
                assert " ".join(hand) not in body
                assert json.dumps(hand) not in body
        listed = get(url + "/games?deal=1").body
        withheld_rows = re.findall(r'<tr [^>]*data-status="withheld">(.*?)</tr>', listed, re.S)
        assert len(withheld_rows) == len(played)
        for row in withheld_rows:  # no per-seat totals or places of a withheld game
            assert "#" not in row and "muted" not in row
        assert get(url + f"/game/{waiting[0].key}").status == 404  # not played yet
        assert get(url + "/game/d000-r00").status == 200  # deal 0 is complete
        # The rest of the deal is played while the page is served: now it is shown.
        add_games(folder, waiting, BUILTIN, TARGET)
        reply = get(url + f"/game/{played[0].key}")
        assert reply.status == 200
        assert json.dumps(secret[0], separators=(",", ":")) in reply.body
        assert get(url + f"/game/{played[0].key}/record.json").status == 200


def test_the_server_never_changes_the_store(partial: tuple[Path, list[ScheduledGame]]) -> None:
    folder, _ = partial
    db_path = folder / "tournament.sqlite"
    with sqlite3.connect(db_path) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    before = _hash(db_path)
    with web_server(folder) as url:
        for path in (
            "/",
            "/games",
            "/h2h",
            "/bot/hero",
            "/game/d000-r00",
            "/game/d000-r00?seat=3",
            "/deal/0",
        ):
            assert get(url + path).status == 200
    assert _hash(db_path) == before
    wal = folder / "tournament.sqlite-wal"
    assert not wal.exists() or wal.stat().st_size == 0


def test_the_replay_and_record_download(partial: tuple[Path, list[ScheduledGame]]) -> None:
    folder, _ = partial
    with sqlite3.connect(folder / "tournament.sqlite") as db:
        stored = db.execute("SELECT record FROM games WHERE key = 'd000-r00'").fetchone()[0]
    record = json.loads(stored)
    with web_server(folder) as url:
        download = get(url + "/game/d000-r00/record.json")
        assert download.status == 200
        assert download.body == stored
        assert "attachment" in download.headers["content-disposition"]
        page = get(url + "/game/d000-r00")
        data = json.loads(
            re.search(r'<script type="application/json" id="timeline">(.*?)</script>', page.body, re.S)[1]
        )  # type: ignore[index]
        assert data == full_timeline(GameRecord.read(stored)).to_json()
        # Every hand's totals are in the no-JavaScript table.
        for hand in data["hands"]:
            for total in hand["totals"]:
                assert f"→ {total}</span>" in page.body
        # A seat's view: that seat's cards, nobody else's.
        for seat in range(6):
            view = get(url + f"/game/d000-r00?seat={seat}")
            shown = json.loads(re.search(r'id="timeline">(.*?)</script>', view.body, re.S)[1])  # type: ignore[index]
            assert shown == seat_timeline(GameRecord.read(stored), seat).to_json()
            for hand, truth in zip(shown["hands"], record["hands"], strict=True):
                for other in range(6):
                    if other == seat:
                        assert sorted(hand["dealt"][other]) == sorted(truth["deal"][other])
                    else:
                        assert hand["dealt"][other] is None and hand["passed"][other] is None
                        assert json.dumps(truth["deal"][other], separators=(",", ":")) not in view.body


def test_the_seat_timeline_holds_what_the_seat_was_sent(partial: tuple[Path, list[ScheduledGame]]) -> None:
    folder, _ = partial
    with sqlite3.connect(folder / "tournament.sqlite") as db:
        record = GameRecord.read(db.execute("SELECT record FROM games WHERE key = 'd000-r02'").fetchone()[0])
    full = full_timeline(record).to_json()
    for seat in (0, 4):
        mine = seat_timeline(record, seat).to_json()
        sent = json.dumps(list(redacted_replay(record, seat)))
        for hand, truth in zip(mine["hands"], full["hands"], strict=True):
            assert hand["tricks"] == truth["tricks"]
            assert hand["totals"] == truth["totals"] and hand["kitty"] == truth["kitty"]
            assert hand["passed"][seat] == truth["passed"][seat]
            assert hand["received"][seat] == truth["received"][seat]
            for card in hand["passed"][seat]:
                assert f'"{card}"' in sent


def test_head_to_head_intervals_bootstrap_deals_around_the_standings_share(
    partial: tuple[Path, list[ScheduledGame]],
) -> None:
    folder, games = partial
    tournament = open_tournament(folder)
    with tournament.store:
        standings = tournament_standings(tournament)
    with Store.open(folder) as store:
        deal_of = {g.key: g.deal for g in games}
        played = [(deal_of[o.key], o) for o in store.outcomes(records=False)]
    intervals = share_intervals("hero", played, standings.seed)
    assert set(intervals) == {"rando", "other"}
    for other, interval in intervals.items():
        share = standings.head_to_head["hero"][other].share
        assert share is not None and interval.low <= share <= interval.high
    assert share_intervals("hero", played, standings.seed) == intervals  # seeded
    assert share_intervals("hero", [p for p in played if p[0] == 0], standings.seed) == {}  # one deal
    with web_server(folder) as url:
        page = get(url + "/bot/hero").body
        low, high = intervals["rando"].low, intervals["rando"].high
        assert f"({100 * low:.0f}% to {100 * high:.0f}%)" in page
        # Every interval on the bot's page reads "(low to high)": a dash between two numbers that
        # carry their own minus signs read "(-3.35--1.36)". Its strength's interval is signed.
        line = next(x for x in standings.standings if x.bot == "hero")
        assert line.strength_ci is not None
        assert f"({line.strength_ci.low:.2f} to {line.strength_ci.high:.2f})" in page
        for path in ("/", "/bot/hero", "/bot/rando", "/h2h"):
            assert not DASHED.search(get(url + path).body), (path, DASHED.findall(get(url + path).body))


def test_faults_are_shown_with_their_log_lines(partial: tuple[Path, list[ScheduledGame]]) -> None:
    folder, games = partial
    faulty = [g for g in games if g.deal == 0][1]
    bot = faulty.seats[0]
    with web_server(folder) as url:
        page = get(url + f"/bot/{bot}")
        assert page.status == 200
        assert f'Game <a href="/game/{faulty.key}">{faulty.key}</a>' in page.body
        assert "no answer within 1000 ms" in page.body
        assert "thinking_too_long" in page.body
        assert f"logs/{bot}/{faulty.key}-s0.log" in page.body
        standings = get(url + "/").body
        assert re.search(rf'data-bot="{bot}".*?<td class="num" data-value="2">2</td>', standings, re.S)


def test_error_pages_are_clear_and_have_the_right_status(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    with web_server(empty) as url:
        reply = get(url + "/")
        assert reply.status == 404
        assert "holds no tournament" in reply.body and "Traceback" not in reply.body
        # The runner creates the tournament: the pages appear without a restart.
        games = _duplicate(empty)
        add_games(empty, games[:6], BUILTIN, TARGET)
        assert get(url + "/").status == 200
        assert get(url + "/game/nope").status == 404
        assert get(url + "/bot/nobody").status == 404
        assert get(url + "/deal/99").status == 404
        assert get(url + "/game/d000-r00?seat=6").status == 404
        assert get(url + "/game/d000-r00?seat=x").status == 400
        assert get(url + "/no/such/page").status == 404
        with sqlite3.connect(empty / "tournament.sqlite") as db:
            bad = json.dumps({"players": 6, "hands": [{"deal": 1}]})
            db.execute("UPDATE games SET record = ? WHERE key = 'd000-r01'", (bad,))
            db.execute("UPDATE games SET record = 'not json' WHERE key = 'd000-r02'")
        for key in ("d000-r01", "d000-r02"):
            reply = get(url + f"/game/{key}")
            assert reply.status == 500
            assert "record" in reply.body and "Traceback" not in reply.body
        assert get(url + "/game/d000-r01?seat=2").status == 500
    not_db = tmp_path / "notdb"
    not_db.mkdir()
    (not_db / "tournament.sqlite").write_text("this is not SQLite")
    with web_server(not_db) as url:
        reply = get(url + "/games")
        assert reply.status == 404 and "not a tournament database" in reply.body


def test_a_tournament_started_afresh_in_the_folder_is_shown(tmp_path: Path) -> None:
    games = _duplicate(tmp_path)
    add_games(tmp_path, games[:4], BUILTIN, TARGET)
    with web_server(tmp_path) as url:
        assert "4 of 12 games played" in get(url + "/").body
        text = config_text(
            BUILTIN.items(), table_size=6, deals=1, duplicate=True, target_score=TARGET, seed="new"
        )
        again = create(tmp_path, text, fresh=True)
        add_games(tmp_path, again[:1], BUILTIN, TARGET)
        assert "1 of 6 games played" in get(url + "/").body


def test_cli_errors_are_one_line(tmp_path: Path) -> None:
    missing = hearts("web", str(tmp_path / "missing"))
    assert missing.returncode == 2
    assert missing.stderr.strip().splitlines() == [f"hearts: error: {tmp_path / 'missing'} is not a folder"]
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        taken = hearts("web", str(tmp_path), "--port", str(port), timeout=60)
    assert taken.returncode == 2
    assert (
        taken.stderr.strip().splitlines()[-1].startswith(f"hearts: error: cannot listen on 127.0.0.1:{port}")
    )
    assert "Traceback" not in taken.stderr
    export = hearts("web", "export", str(tmp_path), str(tmp_path / "site"))
    assert export.returncode == 2
    assert export.stderr.strip().splitlines() == [
        f"hearts: error: {tmp_path} holds no tournament (no tournament.sqlite)"
    ]


def test_the_event_stream_announces_each_new_game(tmp_path: Path) -> None:
    games = _duplicate(tmp_path)
    add_games(tmp_path, games[:2], BUILTIN, TARGET)
    with web_server(tmp_path) as url, urllib.request.urlopen(url + "/events", timeout=60) as stream:
        assert stream.readline() == b"retry: 3000\n"
        assert stream.readline() == b"event: hello\n"
        assert stream.readline() == b"data: 2\n"
        assert stream.readline() == b"\n"
        add_games(tmp_path, games[2:3], BUILTIN, TARGET)
        lines = [stream.readline() for _ in range(3)]
        assert lines == [b"event: games\n", b"data: 3\n", b"\n"]
        fragment = get(url + "/fragment/standings")
        assert "3 of 12 games played" in fragment.body and "<html" not in fragment.body


def test_export_writes_the_same_pages_as_a_static_site(
    partial: tuple[Path, list[ScheduledGame]], tmp_path: Path
) -> None:
    folder, games = partial
    out = tmp_path / "site"
    result = hearts("web", "export", str(folder), str(out))
    assert result.returncode == 0, result.stderr
    released = [g for g in games if g.deal == 0]
    assert (
        result.stdout.strip()
        == f"wrote {3 + 3 + 2 + len(released) * 7} pages and {len(released)} game records to {out}"
    )
    index = (out / "index.html").read_text()
    assert 'href="bot/hero.html"' in index and 'href="static/style.css"' in index
    assert "sse-connect" not in index
    with sqlite3.connect(folder / "tournament.sqlite") as db:
        stored = dict(db.execute("SELECT key, record FROM games"))
    for game in released:
        assert (out / "game" / f"{game.key}.json").read_text() == stored[game.key]
        assert (out / "game" / f"{game.key}-seat5.html").is_file()
    withheld = next(g for g in games if g.deal == 1)
    assert not (out / "game" / f"{withheld.key}.json").exists()
    assert not (out / "game" / f"{withheld.key}.html").exists()
    page = (out / "game" / f"{released[0].key}.html").read_text()
    assert 'href="../static/viewer.js"' in page or 'src="../static/viewer.js"' in page
    assert (out / "static" / "htmx.min.js").read_text().startswith("/*! htmx.org")
