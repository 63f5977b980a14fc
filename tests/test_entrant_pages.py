"""The pages an entrant comes back to (issue 39), over a real league: 22 entrants whose blocks are
stored as ``hearts league run`` stores them (in-process games, the real store, matchmaking and
online ratings; :func:`tests.helpers.portal.played_league`), served by the real
``hearts web LEAGUE --submissions``.

``/me`` and the public bot page show the entrant's rank as an ordinal among the active entrants,
its ``bot.toml`` description, its online rating after each block drawn with its band, its
progress to a settled rating; ``/me`` alone its decision times (mean, nearest-rank 95th
percentile, time bank used) and its faults with their reasons. The league table draws each
interval as a bar and says the table ranks by strength.
"""

from __future__ import annotations

import html
import itertools
import json
import math
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hearts_tournaments.league import commands, play, profile
from hearts_tournaments.league.play import league_table
from hearts_tournaments.league.store import LeagueStore
from hearts_tournaments.portal.accounts import PortalStore
from hearts_tournaments.portal.app import Limits, Portal
from hearts_tournaments.web.league_source import LeagueSource
from tests.helpers.portal import Client, bot_folder, played_league
from tests.helpers.web_server import web_server
from tests.helpers.web_store import play_league

#: The ranks the ordinal is checked at, and how each reads.
ORDINALS = {1: "1st", 2: "2nd", 3: "3rd", 11: "11th", 12: "12th", 13: "13th", 21: "21st", 22: "22nd"}
#: The version given a timeout fault in each of its games.
FAULTY = "e03@v1"


@pytest.fixture(scope="module")
def league(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    root = tmp_path_factory.mktemp("entrant")
    folder = root / "lg"
    counter = itertools.count()
    # Decision times that vary (0.25 to 100.25 ms, a fixed sequence): a wrong percentile shows.
    tokens = played_league(
        folder,
        bot_folder(root / "bot"),
        ms=lambda vid: float(next(counter) * 37 % 101) + 0.25,
        faults={FAULTY: 1},
    )
    with LeagueStore.open(folder, read_only=True) as store:
        table = league_table(store, everyone=True)
    with web_server(folder, "--submissions") as url:
        yield {"folder": folder, "url": url, "tokens": tokens, "table": table}


def _me(league: dict[str, Any], name: str) -> str:
    client = Client(league["url"])
    signed = client.login(league["tokens"][name])
    assert signed.status == 303, signed.body
    page = client.get("/me")
    assert page.status == 200, page.body
    return page.body


def _rank_text(body: str) -> str:
    found = re.search(r'id="rank"[^>]*>(.*?)</(?:p|td)>', body, re.S)
    assert found is not None, body
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", found.group(1))).split())


def _section(body: str, version: str) -> str:
    start = body.index(f'<section class="profile" data-version="{version}">')
    return body[start : body.index("</section>", start)]


@pytest.mark.timeout(600)
def test_the_rank_reads_as_an_ordinal_among_the_active_entrants(league: dict[str, Any]) -> None:
    table = league["table"]
    assert len(table) == 22 and all(r.status == "active" for r in table)
    by_rank = {r.rank: r.version for r in table}
    for rank, word in ORDINALS.items():
        version = by_rank[rank]
        entrant = version.split("@")[0]
        assert _rank_text(_me(league, entrant)).startswith(f"{word} of 22 among the league's active entrants")
        public = Client(league["url"]).get(f"/bot/{version}")
        assert public.status == 200, public.body
        assert _rank_text(public.body).startswith(f"{word} of 22 active entrants"), _rank_text(public.body)


@pytest.mark.timeout(600)
def test_the_description_is_on_me_and_on_the_public_bot_page(league: dict[str, Any]) -> None:
    shown = '<p id="description" class="description">lowest legal card</p>'
    assert shown in _me(league, "alice")
    assert shown in Client(league["url"]).get("/bot/alice@v1").body
    # A built-in entrant has no bot.toml: no description at all.
    assert 'id="description"' not in _me(league, "e01")
    assert 'id="description"' not in Client(league["url"]).get("/bot/e01@v1").body


def _points(text: str) -> list[tuple[float, float]]:
    return [(float(x), float(y)) for x, y in (p.split(",") for p in text.split())]


@pytest.mark.timeout(600)
def test_the_chart_draws_every_block_inside_its_band(league: dict[str, Any]) -> None:
    with LeagueStore.open(league["folder"], read_only=True) as store:
        history = store.history("alice@v1")
    assert len(history) >= 3
    for body in (_me(league, "alice"), Client(league["url"]).get("/bot/alice@v1").body):
        svg = re.search(r'<svg class="strength-chart".*?</svg>', _section(body, "alice@v1"), re.S)
        assert svg is not None
        band = _points(re.search(r'<polygon class="band" points="([^"]+)"', svg.group(0)).group(1))  # type: ignore[union-attr]
        line = _points(re.search(r'<polyline class="strength" points="([^"]+)"', svg.group(0)).group(1))  # type: ignore[union-attr]
        assert len(line) == len(history)
        upper, lower = band[: len(line)], band[len(line) :][::-1]
        for (x, y), (ux, uy), (lx, ly) in zip(line, upper, lower, strict=True):
            assert x == ux == lx and uy <= y <= ly, (x, y, uy, ly)
        # Higher ratings are drawn higher: the line follows the stored history.
        mus = [mu for _b, mu, _s in history]
        top, bottom = mus.index(max(mus)), mus.index(min(mus))
        assert line[top][1] <= line[bottom][1]
        assert f"after block {history[-1][0]}: {history[-1][1]:.1f} ± {history[-1][2]:.1f}" in svg.string


@pytest.mark.timeout(600)
def test_the_progress_to_settled_is_the_tables(league: dict[str, Any]) -> None:
    row = next(r for r in league["table"] if r.version == "alice@v1")
    section = _section(_me(league, "alice"), "alice@v1")
    assert f'data-settled="{"no" if row.provisional else "yes"}"' in section
    if row.provisional:
        assert f"{row.blocks} of 8 blocks played" in section
    else:
        assert f"settled</span> after {row.blocks} blocks" in section


def _stored_times(folder: Path, version: str) -> tuple[list[float], list[float]]:
    """By hand from the database: the version's own decision times, and the share of the time
    bank each of its seats used per game."""
    times, shares = [], []
    with sqlite3.connect(LeagueStore.path_in(folder)) as db:
        rows = db.execute(
            "SELECT g.record, r.seat FROM results r JOIN games g ON g.key = r.game "
            "WHERE r.version = ? AND g.block IS NOT NULL",
            (version,),
        ).fetchall()
    for record, seat in rows:
        data = json.loads(record)
        mine = [d for d in data["decisions"] if d["seat"] == seat]
        times += [d["ms"] for d in mine if "by_referee" not in d]
        shares.append(sum(d["ms"] for d in mine) / data["time_bank_ms"])
    return times, shares


@pytest.mark.timeout(600)
def test_decision_times_are_the_stored_records(league: dict[str, Any]) -> None:
    times, shares = _stored_times(league["folder"], "alice@v1")
    ordered = sorted(times)
    p95 = ordered[math.ceil(0.95 * len(ordered)) - 1]
    assert len(set(times)) > 20 and p95 < ordered[-1]  # the data tells percentiles apart
    section = _section(_me(league, "alice"), "alice@v1")
    assert f'<td class="num p95-ms">{p95:.1f} ms</td>' in section
    assert f'<td class="num mean-ms">{sum(times) / len(times):.1f} ms</td>' in section
    assert f"{100 * sum(shares) / len(shares):.1f}% mean, {100 * max(shares):.1f}% at most" in section
    assert f'<td class="num">{len(times)}</td>' in section
    # Only on the entrant's own page.
    assert "p95-ms" not in Client(league["url"]).get("/bot/alice@v1").body


@pytest.mark.timeout(600)
def test_faults_per_game_with_their_reason(league: dict[str, Any]) -> None:
    with LeagueStore.open(league["folder"], read_only=True) as store:
        games = [k for k, block, _v, data in store.games(FAULTY) if block is not None]
    section = _section(_me(league, FAULTY.split("@")[0]), FAULTY)
    assert f"{len(games)} faults in {len(games)} games (1.00 per game)." in section
    listed = re.findall(r'<tr data-game="([^"]+)">.*?</tr>', section, re.S)
    assert listed and set(listed) <= set(games)
    assert "timeout: no answer within 1000 ms (seat " in section
    clean = _section(_me(league, "alice"), "alice@v1")
    assert "0 faults in " in clean and "fault-games" not in clean


@pytest.mark.timeout(600)
def test_a_rivals_page_shows_none_of_alices_own_data(league: dict[str, Any]) -> None:
    rival = _me(league, "e01")
    assert "alice" not in rival and "lowest legal card" not in rival
    assert _section(rival, "e01@v1")
    client = Client(league["url"])
    client.login(league["tokens"]["e01"])
    assert client.get("/me/files/alice@v1").status == 403
    # Alice's public page: her description and chart, none of what only she sees.
    public = client.get("/bot/alice@v1").body
    assert "lowest legal card" in public
    for private in ("p95-ms", "/me/files/", "/me/log/", "Decision time", "fault-games"):
        assert private not in public, private


@pytest.mark.timeout(600)
def test_the_league_table_draws_intervals_and_says_it_ranks_by_strength(league: dict[str, Any]) -> None:
    body = Client(league["url"]).get("/").body
    table = body[body.index('<table class="standings" id="league-table">') :]
    table = table[: table.index("</table>")]
    head = re.search(r'<th scope="col" class="num score-head">(.*?)</th>', table, re.S)
    assert head is not None
    assert re.search(r'<abbr title="The table ranks by the strength[^"]*">Strength</abbr>', head.group(1))
    assert '<small class="head-note">ranks by strength</small>' in head.group(1)
    for row in league["table"]:
        cells = re.search(rf'<tr data-version="{re.escape(row.version)}".*?</tr>', table, re.S)
        assert cells is not None
        bar = re.search(
            r'<rect x="([\d.]+)" y="2" width="([\d.]+)".*?<circle cx="([\d.]+)"', cells.group(0), re.S
        )
        assert bar is not None, row.version
        low, width, mark = (float(g) for g in bar.groups())
        assert low <= mark <= low + width
        assert f"{row.strength:.2f} ({row.low:.2f} to {row.high:.2f})" in cells.group(0)


@pytest.mark.timeout(300)
def test_figures_from_records_follow_each_stored_block(tmp_path: Path) -> None:
    """Decision times and faults are cached per version until the next block, then read again."""
    folder = tmp_path / "lg"
    played_league(folder, bot_folder(tmp_path / "bot"), entrants=6, blocks=2, faults={"e00@v1": 2})
    with LeagueStore.open(folder) as store:
        before = (profile.timing(store, "alice@v1"), profile.faults(store, "e00@v1"))
        assert before[0] is not None and before[0].games == 12 and before[1].faults == 24
        play_league(store, 1)
        after = (profile.timing(store, "alice@v1"), profile.faults(store, "e00@v1"))
        assert after[0] is not None and after[0].games == 18
        assert after[1].games == 18 and after[1].faults == 24  # the new block's games had none


@pytest.mark.timeout(300)
def test_an_active_version_without_a_block_is_not_ranked_yet(tmp_path: Path) -> None:
    folder = tmp_path / "lg"
    played_league(folder, bot_folder(tmp_path / "bot"), entrants=6, blocks=2)
    with LeagueStore.open(folder) as store:
        commands.add_version(store, commands.make_spec("newbie", None, "random"))
        play_league(store, 0)  # validated: active, no block played
        table = league_table(store, everyone=True)
        entrant_of = {v.id: v.entrant for v in store.versions()}
    assert [r.version for r in table][-1] == "newbie@v1" and table[-1].score is None
    newbie = profile.entrant_standing(table, entrant_of, "newbie")
    assert newbie is not None and not newbie.scored and newbie.of == 7
    with PortalStore(folder) as portal:
        token = portal.add_account("newbie")
    with web_server(folder, "--submissions") as url:
        client = Client(url)
        client.login(token)
        assert _rank_text(client.get("/me").body) == (
            "Not ranked yet: newbie@v1 has played no block (7 active entrants)."
        )


@pytest.mark.timeout(300)
def test_me_refits_the_official_table_once_per_state_of_the_league(tmp_path: Path) -> None:
    """Every visit to /me used to refit the official table (about a second at 22 entrants): the
    portal keeps it until a block is stored or a version changes status."""
    folder = tmp_path / "lg"
    played_league(folder, bot_folder(tmp_path / "bot"), entrants=6, blocks=2)
    portal = Portal(folder, Limits(), secure=False)
    with LeagueStore.open(folder, read_only=True) as store:
        first = portal.official_table(store)
        assert portal.official_table(store) is first  # nothing changed: the same table
    with LeagueStore.open(folder) as store:
        play_league(store, 1)
    with LeagueStore.open(folder, read_only=True) as store:
        again = portal.official_table(store)
        assert again is not first and again == league_table(store, everyone=True)
    with LeagueStore.open(folder) as store:
        commands.set_status(store, "e01@v1", "retire")
    with LeagueStore.open(folder, read_only=True) as store:
        retired = portal.official_table(store)
        assert retired is not again and retired == league_table(store, everyone=True)


@pytest.mark.timeout(300)
def test_me_and_the_public_league_page_fit_one_state_once_between_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The portal's /me and the league's public page (each its own connection, in the portal its
    own thread) used to keep a table each: the same state was fitted twice in one process."""
    folder = tmp_path / "lg"
    played_league(folder, bot_folder(tmp_path / "bot"), entrants=6, blocks=2)
    fits: list[int] = []
    fit = play.official_table

    def counted(*args: Any, **kwargs: Any) -> Any:
        fits.append(1)
        return fit(*args, **kwargs)

    monkeypatch.setattr(play, "official_table", counted)
    portal = Portal(folder, Limits(), secure=False)
    public = LeagueSource(folder)
    try:
        with LeagueStore.open(folder, read_only=True) as store:
            table = portal.official_table(store)
        assert public.league()["table"] is table
        assert len(fits) == 1
        with LeagueStore.open(folder) as store:
            play_league(store, 1)
        assert public.league()["table"] is not table
        with LeagueStore.open(folder, read_only=True) as store:
            assert portal.official_table(store) is public.league()["table"]
        assert len(fits) == 2
    finally:
        public.close()
