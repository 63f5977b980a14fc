"""``hearts web`` in a real browser: Debian's Chromium driven by Playwright.

A real small tournament is played by the real runner (``hearts tournament run``, bot
processes over the in-process gRPC referee); its last game is then taken out of the store, as
if the runner had been killed while playing it. The real ``hearts web`` serves the folder;
the browser opens the leaderboard, follows a bot's link, opens a replay, steps through it with
the keyboard, switches to one seat's view, and watches the leaderboard update when
``hearts tournament resume`` plays the missing game. Screenshots of every page are saved under
the test's tmp_path.

Skipped without Chromium or Playwright, except under CI=true, where that fails.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hearts_core.rules import PassDirection
from tests.helpers.browser import WAIT_MS
from tests.helpers.cli import hearts
from tests.helpers.forget import forget_games
from tests.helpers.web_server import get, web_server

CONFIG = """\
[tournament]
name = "browser"
table_size = 6
deals = 3
duplicate = false
seed = "browser"
target_score = 30

[[bots]]
name = "heuristic"
builtin = "heuristic"

[[bots]]
name = "random"
builtin = "random"
"""


@pytest.fixture(scope="module")
def tournament(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real 3-game tournament, its last game taken out of the store (to be resumed)."""
    root = tmp_path_factory.mktemp("browser")
    (root / "t.toml").write_text(CONFIG)
    run = hearts(
        "tournament", "run", str(root / "t.toml"), "-o", str(root / "out"), "--progress", "never", timeout=600
    )
    assert run.returncode == 0, run.stderr
    out = root / "out"
    with sqlite3.connect(out / "tournament.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM games").fetchone()[0] == 3
    forget_games(out, ["d002"])
    return out


def test_the_pages_in_a_browser(browser: Any, tournament: Path, tmp_path: Path) -> None:
    shots = tmp_path / "screenshots"
    shots.mkdir()
    with web_server(tournament) as url:
        page = browser.new_page(viewport={"width": 1300, "height": 950})
        page.set_default_timeout(WAIT_MS)
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))

        # The leaderboard: two bots, 2 of 3 games.
        page.goto(url + "/")
        progress = page.locator("#progress")
        assert progress.inner_text().startswith("2 of 3 games played")
        assert page.locator("#standings-table tbody tr").count() == 2
        page.screenshot(path=str(shots / "leaderboard.png"), full_page=True)

        # Sorting by a column keeps the choice in the URL.
        page.get_by_role("link", name="Bot", exact=True).click()
        page.wait_for_url(lambda u: "sort=bot" in u)
        assert page.locator("#standings-table tbody tr").first.get_attribute("data-bot") == "heuristic"

        # A bot's page, by its link.
        page.get_by_role("link", name="random", exact=True).first.click()
        page.wait_for_url("**/bot/random")
        assert page.locator("h1").inner_text().startswith("Bot random")
        assert page.locator("#positions tbody tr").count() >= 1
        page.screenshot(path=str(shots / "bot.png"), full_page=True)

        # The game list, and a replay from it.
        page.get_by_role("navigation").get_by_role("link", name="Games").click()
        page.wait_for_url("**/games")
        assert page.locator("#games-table .st-pending").count() == 1
        page.get_by_role("link", name="d000", exact=True).click()
        page.wait_for_url(lambda u: "/game/d000" in u)
        where = page.locator("#where")
        assert where.inner_text().startswith("Hand 1: dealt by seat 0")
        page.keyboard.press("ArrowRight")  # after the passes
        page.keyboard.press("ArrowRight")  # the first card
        assert where.inner_text().startswith("Hand 1, trick 1 of 17, card 1 of 6")
        page.keyboard.press("Shift+ArrowRight")  # the end of that trick
        assert where.inner_text().startswith("Hand 1, trick 1 of 17, card 6 of 6")
        assert page.evaluate("location.hash") == "#h1t1"
        page.keyboard.press("Shift+ArrowRight")
        assert page.evaluate("location.hash") == "#h1t2"
        page.screenshot(path=str(shots / "replay.png"), full_page=True)

        # A deep link to a moment, and the scrubber.
        page.goto(url + "/game/d000#h1t7")
        assert where.inner_text().startswith("Hand 1, trick 7 of 17, card 6 of 6")
        assert (
            "Won by seat" in page.locator(".centre").inner_text()
            or "set aside" in page.locator(".centre").inner_text()
        )
        # Play at 4x, pause: the viewer moved on by itself.
        page.select_option("#speed", "250")
        page.locator("#play").click()
        page.wait_for_function("!location.hash.startsWith('#h1t7')", timeout=WAIT_MS)
        page.locator("#play").click()
        assert page.locator("#play").inner_text() == "▶ Play"
        page.locator("#scrubber").focus()
        page.keyboard.press("End")
        assert "end" in where.inner_text()

        # Seat 2's view: its own cards face up, every other hand hidden, in the DOM and the page.
        record = json.loads(get(url + "/game/d000/record.json").body)
        page.goto(url + "/game/d000#h1")
        page.select_option("#seat-select", "2")
        page.wait_for_url(lambda u: u.endswith("/game/d000?seat=2#h1"))
        assert page.locator("h1").inner_text().endswith("seat 2's view (heuristic)")
        mine = page.locator('.seat[data-seat="2"] .hand-cards .card')
        assert sorted(mine.evaluate_all("els => els.map(e => e.dataset.card)")) == sorted(
            record["hands"][0]["deal"][2]
        )
        html = page.content()
        for other in (0, 1, 3, 4, 5):
            box = page.locator(f'.seat[data-seat="{other}"] .hand-cards')
            assert box.inner_text() == "17 cards (hidden)"
            assert box.locator(".card").count() == 0
            for index, hand in enumerate(record["hands"]):
                assert json.dumps(hand["deal"][other], separators=(",", ":")) not in html
                if PassDirection.for_hand(index).source(2, 6) != other:  # seat 2 received that one
                    assert json.dumps(hand["passes"][other], separators=(",", ":")) not in html
        page.screenshot(path=str(shots / "seat-view.png"), full_page=True)

        # Live: the leaderboard is open while the runner plays the missing game.
        page.goto(url + "/")
        assert page.locator("#progress").inner_text().startswith("2 of 3 games played")
        page.wait_for_timeout(1500)  # the event stream is connected
        resume = subprocess.run(
            [
                sys.executable,
                "-m",
                "hearts_tournaments",
                "tournament",
                "resume",
                str(tournament),
                "--progress",
                "never",
            ],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert resume.returncode == 0, resume.stderr
        page.wait_for_function(
            "document.querySelector('#progress').innerText.startsWith('3 of 3 games played')", timeout=WAIT_MS
        )
        page.screenshot(path=str(shots / "leaderboard-live.png"), full_page=True)

        # The head-to-head heat map and the deal page.
        page.goto(url + "/h2h")
        assert page.locator("#h2h tbody tr").count() == 2
        page.screenshot(path=str(shots / "h2h.png"), full_page=True)
        page.goto(url + "/deal/2")
        assert page.locator("#deal td.cards .card").count() == 17 * 6
        page.screenshot(path=str(shots / "deal.png"), full_page=True)

        # Without JavaScript: the tables, sorting, filters and the record download still work.
        plain = browser.new_context(java_script_enabled=False).new_page()
        plain.goto(url + "/?sort=mean_place&order=desc")
        assert plain.locator("#standings-table tbody tr").first.get_attribute("data-bot") == "random"
        plain.goto(url + "/games?status=clean")
        assert plain.locator("#games-table tbody tr").count() == 3
        plain.goto(url + "/game/d000")
        assert plain.locator("#hand-scores tbody tr").count() == len(record["hands"])
        assert plain.locator("#viewer").is_hidden()
        assert (
            plain.get_by_role("link", name="Download the game record").get_attribute("href")
            == "/game/d000/record.json"
        )
        plain.screenshot(path=str(shots / "replay-without-js.png"), full_page=True)
        plain.context.close()

        # The static export of the finished run: sorting, filters from the URL and the viewer, from disk.
        site = tmp_path / "site"
        export = hearts("web", "export", str(tournament), str(site))
        assert export.returncode == 0, export.stderr
        page.goto((site / "index.html").as_uri())
        rows = page.locator("#standings-table tbody tr")
        assert rows.first.get_attribute("data-bot") == "heuristic"
        page.get_by_role("button", name="Bot", exact=True).click()
        page.get_by_role("button", name="Bot", exact=True).click()
        assert rows.first.get_attribute("data-bot") == "random"
        page.goto((site / "games.html").as_uri() + "?status=pending")
        assert page.locator("#games-table tbody tr:visible").count() == 0
        page.goto((site / "games.html").as_uri() + "?status=clean")
        assert page.locator("#games-table tbody tr:visible").count() == 3
        page.goto((site / "game" / "d001.html").as_uri() + "#h1t2")
        assert where.inner_text().startswith("Hand 1, trick 2 of 17, card 6 of 6")
        page.select_option("#seat-select", "1")
        page.wait_for_url(lambda u: u.endswith("/game/d001-seat1.html#h1t2"))
        assert page.locator('.seat[data-seat="0"] .hand-cards').inner_text().endswith("cards (hidden)")
        page.screenshot(path=str(shots / "export-seat-view.png"), full_page=True)
        assert errors == []
    for name in (
        "leaderboard",
        "bot",
        "replay",
        "seat-view",
        "leaderboard-live",
        "h2h",
        "deal",
        "export-seat-view",
    ):
        assert (shots / f"{name}.png").stat().st_size > 10_000
