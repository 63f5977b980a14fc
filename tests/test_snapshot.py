"""Standings snapshots: a report and the web read the standings of the stored games from
``standings.json`` instead of refitting the strength model, never trust a stale one, and
``verify`` checks a snapshot against the records.

The tournaments are real: a run of the real runner (bots as processes, ``sandbox = "none"``,
one hand a game), and folders built in-process with the engine (``tests/helpers/web_store``) served by
the real ``hearts web``.
"""

from __future__ import annotations

import json
import re
import urllib.request
from pathlib import Path

import pytest
from rich.console import Console

from hearts_tournaments.tournament.folder import SNAPSHOT_NAME, open_tournament
from hearts_tournaments.tournament.report import ReportFormat, render
from hearts_tournaments.tournament.results import Standings
from hearts_tournaments.tournament.runner import tournament_standings
from hearts_tournaments.tournament.standings_snapshot import (
    Refresher,
    fingerprint,
    load_snapshot,
    snapshot_path,
)
from hearts_tournaments.tournament.store import Store
from tests.helpers.cli import hearts
from tests.helpers.shared import CAREFUL_AND_TWO_DICE
from tests.helpers.web_server import get, web_server
from tests.helpers.web_store import add_games, config_text, create

CONFIG = """
[tournament]
name = "snap"
table_size = 6
deals = 2
duplicate = true
seed = 3
max_hands = 1
concurrency = 2
decision_ms = 5000
sandbox = "none"

[gauntlet]
candidate = "careful"
"""
CONFIG += CAREFUL_AND_TWO_DICE
BUILTIN = {"hero": "heuristic", "rando": "random", "other": "random"}
TARGET = 20


def test_a_run_keeps_the_snapshot_and_verify_does_not_trust_it(tmp_path: Path) -> None:
    config = tmp_path / "t.toml"
    config.write_text(CONFIG)
    output = tmp_path / "out"
    played = hearts("tournament", "run", str(config), "--output", str(output))
    assert played.returncode == 0, played.stderr
    kept = json.loads((output / SNAPSHOT_NAME).read_text())
    report = hearts("tournament", "report", str(output), "--format", "json")
    assert report.returncode == 0, report.stderr
    assert json.loads(report.stdout) == kept["report"]
    assert kept["report"]["gauntlet"] is not None  # a gauntlet's section reads back too
    with Store.open(output, read_only=True) as store:
        assert kept["fingerprint"] == fingerprint(store)
    assert (output / SNAPSHOT_NAME).stat().st_mode & 0o077 == 0
    assert hearts("tournament", "verify", str(output)).returncode == 0
    # A forged snapshot of the same games: report shows what is kept, verify refuses it.
    first = kept["report"]["standings"][0]
    first["strength"] = 9.0
    kept["report"]["separation"]["separated"] = 99
    (output / SNAPSHOT_NAME).write_text(json.dumps(kept))
    assert (
        json.loads(hearts("tournament", "report", str(output), "--format", "json").stdout) == kept["report"]
    )
    verified = hearts("tournament", "verify", str(output))
    assert verified.returncode == 1
    problems = verified.stdout.splitlines()
    assert (
        f"{SNAPSHOT_NAME}: standings: {first['bot']}: strength is 9.0 in the snapshot but" in verified.stdout
    )
    assert f"{SNAPSHOT_NAME}: separation differs from the records' in the snapshot" in problems
    # Gone: the report computes the standings again and keeps them.
    (output / SNAPSHOT_NAME).unlink()
    again = hearts("tournament", "report", str(output), "--format", "json")
    assert json.loads(again.stdout)["standings"][0]["strength"] != 9.0
    assert (output / SNAPSHOT_NAME).is_file()
    assert hearts("tournament", "verify", str(output)).returncode == 0


def _folder(tmp_path: Path, games: int, snapshot: bool = True) -> tuple[Path, list]:  # type: ignore[type-arg]
    folder = tmp_path / "t"
    bots = list(BUILTIN.items())
    text = config_text(bots, table_size=6, deals=4, duplicate=True, target_score=TARGET, seed="s")
    scheduled = create(folder, text)
    add_games(folder, scheduled[:games], BUILTIN, TARGET, snapshot=snapshot)
    return folder, scheduled


def test_a_snapshot_of_other_games_is_not_used(tmp_path: Path) -> None:
    folder, scheduled = _folder(tmp_path, 6)
    before = load_snapshot(folder)
    assert before is not None and before.standings.games_played == 6
    add_games(folder, scheduled[6:9], BUILTIN, TARGET, snapshot=False)
    tournament = open_tournament(folder)
    with tournament.store:
        assert tournament_standings(tournament, cached=True).games_played == 9
        assert (
            tournament_standings(tournament, cached=True).to_json()
            == tournament_standings(tournament).to_json()
        )
    after = load_snapshot(folder)
    assert after is not None and after.standings.games_played == 9 and after.fingerprint != before.fingerprint


def test_standings_read_back_render_as_computed(tmp_path: Path) -> None:
    folder, _ = _folder(tmp_path, 16, snapshot=False)
    tournament = open_tournament(folder)
    with tournament.store:
        computed = tournament_standings(tournament)
    read = Standings.from_json(json.loads(json.dumps(computed.to_json())))
    assert read.to_json() == computed.to_json()
    for fmt in (ReportFormat.MARKDOWN, ReportFormat.CSV):
        assert render(read, fmt) == render(computed, fmt)
    tables = []
    for standings in (read, computed):
        console = Console(record=True, width=250)
        render(standings, ReportFormat.TABLE, console)
        tables.append(console.export_text())
    assert tables[0] == tables[1]
    assert read.separation_line() == computed.separation_line()
    assert [s.bot for s in read.standings] == [s.bot for s in computed.standings]


def test_the_refresher_computes_in_the_background(tmp_path: Path) -> None:
    folder, scheduled = _folder(tmp_path, 6, snapshot=False)
    refresher = Refresher(folder)
    try:
        refresher.poke()
        assert refresher.wait_computed(240)
        with Store.open(folder, read_only=True) as store:
            kept = load_snapshot(folder)
            assert kept is not None and kept.fingerprint == fingerprint(store)
        add_games(folder, scheduled[6:8], BUILTIN, TARGET, snapshot=False)
        refresher.poke()
        assert refresher.wait_computed(240)
        kept = load_snapshot(folder)
        assert kept is not None and kept.standings.games_played == 8
    finally:
        refresher.close()


def _events(url: str) -> object:
    stream = urllib.request.urlopen(url + "/events", timeout=120)
    assert [stream.readline() for _ in range(4)][1] == b"event: hello\n"
    return stream


def _next_event(stream: object) -> list[bytes]:
    return [stream.readline() for _ in range(3)]  # type: ignore[attr-defined]


def test_the_web_computes_standings_a_folder_lacks(tmp_path: Path) -> None:
    folder, _ = _folder(tmp_path, 6, snapshot=False)
    with web_server(folder) as url:
        stream = _events(url)
        first = get(url + "/")
        if first.status == 503:  # not ready within the page's short wait: it says so, and reloads
            assert "being computed" in first.body and first.headers.get("Refresh") == "2"
            assert _next_event(stream)[0] == b"event: games\n"
            first = get(url + "/")
        assert first.status == 200 and "6 of 24 games played" in first.body
    assert not snapshot_path(folder).exists()  # the web writes nothing in the folder


def test_a_slow_stale_snapshot_is_shown_at_once_and_the_fresh_one_announced(tmp_path: Path) -> None:
    folder, scheduled = _folder(tmp_path, 6)
    # As if computing these standings had taken 1,000 s, long ago (no runner at work).
    data = json.loads(snapshot_path(folder).read_text())
    data["seconds"], data["written_at"] = 1000.0, 0.0
    snapshot_path(folder).write_text(json.dumps(data))
    add_games(folder, scheduled[6:7], BUILTIN, TARGET, snapshot=False)
    with web_server(folder) as url:
        stream = _events(url)
        page = get(url + "/")
        assert page.status == 200 and "6 of 24 games played" in page.body
        assert re.search(r"These standings are of 6 games; 7 are stored", page.body)
        assert _next_event(stream) == [b"event: games\n", b"data: 7\n", b"\n"]
        fresh = get(url + "/fragment/standings")
        assert "7 of 24 games played" in fresh.body and "These standings are of" not in fresh.body


@pytest.mark.parametrize("live", [True])
def test_the_leaderboard_shows_tiers_and_the_separation_list(tmp_path: Path, live: bool) -> None:
    folder, _ = _folder(tmp_path, 24)
    kept = load_snapshot(folder)
    assert kept is not None
    with web_server(folder) as url:
        body = get(url + "/").body
    standings = kept.standings
    for line in standings.standings:
        assert re.search(rf'data-bot="{line.bot}"[^>]*data-tier="{line.tier}"', body)
    assert standings.separation_line() in body
    for n in standings.separations:
        assert f'data-pair="{n.a}|{n.b}" data-separated="{"yes" if n.separated else "no"}"' in body
    assert body.count("new-tier") == sum(n.separated for n in standings.separations)
