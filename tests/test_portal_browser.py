"""The portal in a real browser (Debian's Chromium driven by Playwright), as the issue's "Done when" says.

A real league (a built-in entrant) is played by the real ``hearts league run --forever``; the real
``hearts web LEAGUE --submissions`` serves it. The browser signs in with alice's token, uploads a
small Python bot through the form, watches its status go to active (checked in the sandbox, then
its validation game), waits for its first block, opens its own log, and fails to open a rival's
log or files. Screenshots under the test's tmp_path.

Skipped without Chromium or Playwright, except under CI=true, where that fails.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hearts_tournaments.league.store import LeagueStore
from tests.helpers.browser import WAIT_MS
from tests.helpers.portal import good_archive, league_running, make_league, wait_blocks
from tests.helpers.web_server import web_server


@pytest.mark.timeout(900)
def test_an_entrant_submits_and_follows_its_bot(browser: Any, tmp_path: Path) -> None:
    folder = tmp_path / "lg"
    tokens = make_league(folder, ("alice", "bob"))
    archive = tmp_path / "bot.tar.gz"
    archive.write_bytes(good_archive())
    shots = tmp_path / "screenshots"
    shots.mkdir()
    with league_running(folder) as run, web_server(folder, "--submissions") as url:
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        page.set_default_timeout(WAIT_MS)
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))

        # Signed out, /me sends the browser to sign in.
        page.goto(url + "/me")
        page.wait_for_url(url + "/login")
        page.fill("input[name=token]", tokens["alice"])
        page.click("#login button[type=submit]")
        page.wait_for_url(url + "/me")
        assert page.locator("#who").inner_text() == "alice"
        cookie = next(c for c in page.context.cookies() if c["name"] == "hearts_portal")
        assert cookie["httpOnly"] and cookie["secure"] and cookie["sameSite"] == "Strict"
        page.screenshot(path=str(shots / "me-empty.png"), full_page=True)

        # Upload through the form; the status page follows it live until active.
        page.set_input_files("#submit input[type=file]", str(archive))
        page.click("#submit button[type=submit]")
        page.wait_for_url(lambda u: "/me/submissions/" in u)
        # Every status the page shows, in order, recorded as the page's polling changes it.
        page.evaluate(
            """() => { const st = document.getElementById("status"); window.seen = [st.dataset.status];
            new MutationObserver(() => { if (window.seen.at(-1) !== st.dataset.status)
            window.seen.push(st.dataset.status); }).observe(st, {attributes: true}); }"""
        )
        page.wait_for_selector("#status[data-status=active], #status[data-status=error]")
        seen = page.evaluate("window.seen")
        assert seen[-1] == "active" and set(seen) <= {"pending", "validating", "active"}, seen
        assert page.locator("#status").get_attribute("data-status") == "active", page.locator(
            "#status-message"
        ).inner_text()
        assert "alice@v1" in page.locator("#version").inner_text()
        page.screenshot(path=str(shots / "status-active.png"), full_page=True)

        # Its first block: the league's run picks the new version up by itself.
        wait_blocks(folder, 1, run)
        page.goto(url + "/me")
        row = page.locator("#my-versions tr[data-version='alice@v1']")
        assert row.get_attribute("data-status") == "active"
        games = page.locator("#my-games tbody tr[data-game]")
        assert games.count() >= 1
        page.screenshot(path=str(shots / "me-playing.png"), full_page=True)

        # Its own log of its first game.
        first = games.first
        key = first.get_attribute("data-game")
        first.locator("a.log").first.click()
        page.wait_for_url(lambda u: "/me/log/" in u)
        assert "stdio bridge summary" in page.locator("body").inner_text()

        # Its replay opens from its own seat on the public pages.
        page.goto(url + "/me")
        page.locator("#my-games tbody tr[data-game] a").first.click()
        page.wait_for_url(lambda u: "/game/" in u and "seat=" in u)

        # A rival's seat of the same game, and a rival's files: refused.
        with LeagueStore.open(folder, read_only=True) as store:
            seats = next(data["seats"] for k, _b, _v, data in store.games() if k == key)
        rival_seat = seats.index("house@v1")
        answer = page.goto(f"{url}/me/log/{key}/{rival_seat}")
        assert answer is not None and answer.status == 403
        assert "not your bot's" in page.locator("body").inner_text()
        answer = page.goto(f"{url}/me/files/house@v1")
        assert answer is not None and answer.status == 403
        answer = page.goto(f"{url}/me/files/alice@v1")
        assert answer is not None and answer.status == 200 and "bot.py" in page.locator("body").inner_text()
        page.screenshot(path=str(shots / "rival-refused.png"), full_page=True)

        # Signing out ends the session.
        page.goto(url + "/me")
        page.click("nav.portal button[type=submit]")
        page.wait_for_url(url + "/login")
        page.goto(url + "/me")
        page.wait_for_url(url + "/login")
        assert not errors, errors
