"""Pages rendered once per state of the store: entity tags, 304s, and fresh pages after a game.

A shared leaderboard link must not make the server compute the standings for every visitor: the
live server keeps each rendered page until the store changes (or :data:`PAGE_FRESH_S` passes)
and answers a browser that holds the same page with ``304 Not Modified``.
"""

from __future__ import annotations

import gzip
import os
import re
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.types import Scope

from hearts_tournaments.arena.job import ScheduledGame
from hearts_tournaments.web.app import PAGE_FRESH_S, PageCache
from tests.helpers.portal import make_league
from tests.helpers.web_server import get, web_process, web_server
from tests.helpers.web_store import add_games, config_text, create

pytestmark = pytest.mark.timeout(300)

BUILTIN = {"hero": "heuristic", "rando": "random", "other": "random"}
TARGET = 30


def _request(path: str, query: str = "") -> Request:
    scope: Scope = {
        "type": "http",
        "method": "GET",
        "path": path,
        "query_string": query.encode(),
        "headers": [],
        "server": ("test", 80),
        "scheme": "http",
    }
    return Request(scope)


def test_a_kept_page_is_served_until_it_is_stale_by_the_injected_clock() -> None:
    now = [100.0]
    cache = PageCache(size=2, clock=lambda: now[0])
    request = _request("/", "sort=bot")
    key = cache.key((1, 5, 0), request)
    assert cache.get(key) is None
    page = cache.put(key, HTMLResponse("<p>five games</p>"))
    assert cache.get(key) == page and page.body == b"<p>five games</p>"
    # The same content always has the same tag; another store state is another key.
    assert cache.put(key, HTMLResponse("<p>five games</p>")).etag == page.etag
    assert cache.key((1, 6, 0), request) != key
    assert cache.key((1, 5, 0), _request("/", "sort=rank")) != key
    now[0] += PAGE_FRESH_S + 0.01
    assert cache.get(key) is None  # rendered again: a page may say how old its standings are
    # Bounded: the least recently used page goes.
    for n in range(3):
        cache.put(f"k{n}", HTMLResponse(str(n)))
    assert cache.get("k0") is None and cache.get("k2") is not None


def _conditional(url: str, etag: str) -> int:
    request = urllib.request.Request(url, headers={"If-None-Match": etag})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code


def test_the_leaderboard_answers_304_until_a_game_is_stored(tmp_path: Path) -> None:
    text = config_text(BUILTIN.items(), table_size=6, deals=2, duplicate=True, target_score=TARGET, seed="c")
    games: list[ScheduledGame] = create(tmp_path, text)
    add_games(tmp_path, games[:6], BUILTIN, TARGET)
    with web_server(tmp_path) as url:
        first = get(url + "/")
        assert first.status == 200
        etag = first.headers["etag"]
        assert re.fullmatch(r'"[0-9a-f]{24}"', etag)
        assert "6 of 12 games played" in first.body
        assert _conditional(url + "/", etag) == 304
        # Compressed once for clients that ask, the same page.
        request = urllib.request.Request(url + "/", headers={"Accept-Encoding": "gzip"})
        with urllib.request.urlopen(request, timeout=60) as response:
            assert response.headers["Content-Encoding"] == "gzip"
            assert gzip.decompress(response.read()).decode() == first.body
        # Another query is another page, with its own tag.
        other = get(url + "/?sort=bot")
        assert other.status == 200 and other.headers["etag"] != etag
        # A game stored: the page is rendered again, with the new count and a new tag.
        add_games(tmp_path, games[6:7], BUILTIN, TARGET)
        assert _conditional(url + "/", etag) == 200
        after = get(url + "/")
        assert "7 of 12 games played" in after.body and after.headers["etag"] != etag
        # Pages that are not complete (an unknown bot) are never kept.
        missing = get(url + "/bot/nobody")
        assert missing.status == 404 and "etag" not in missing.headers


def _niceness(pid: int) -> dict[int, int]:
    """Each thread of ``pid``: its niceness (field 19 of /proc/PID/task/TID/stat)."""
    out = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        stat = (task / "stat").read_text()
        out[int(task.name)] = int(stat[stat.rindex(")") + 2 :].split()[16])
    return out


def test_the_server_yields_the_cpu_to_the_games_of_a_run(tmp_path: Path) -> None:
    """Pages are served at niceness 19 (the referee runs at 0, bots at 10), so visitors never
    slow a run on the same machine; the portal's checker thread, started before, keeps the
    process's own priority (its checks time a bot as the competition will)."""
    own = os.nice(0)  # this test's own niceness, which its servers start with (never less)
    text = config_text(BUILTIN.items(), table_size=6, deals=2, duplicate=True, target_score=TARGET, seed="n")
    add_games(tmp_path, create(tmp_path, text)[:6], BUILTIN, TARGET)
    with web_process(tmp_path) as (url, process):
        assert get(url + "/").status == 200
        assert _niceness(process.pid)[process.pid] == max(19, own)  # the serving thread
    with web_process(tmp_path, "--nice", "3") as (url, process):
        assert get(url + "/").status == 200
        assert _niceness(process.pid)[process.pid] == max(3, own)
    league = tmp_path / "league"
    make_league(league, ("alice",))
    with web_process(league, "--submissions") as (url, process):
        assert get(url + "/help").status == 200
        threads = _niceness(process.pid)
        assert threads[process.pid] == max(19, own) and own in threads.values(), threads
