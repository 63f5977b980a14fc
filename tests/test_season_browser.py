"""A whole season in a real browser (Debian's Chromium driven by Playwright), as issue 39's "Done
when" says: entrants submit, the season freezes at a set time, the final runs and stops when the
top place is separated, and each entrant's page shows its rank, chart and notifications on a
laptop (1366 px) and a phone (390 px).

A small league (a built-in ``house`` entrant playing the built-in heuristic, accounts alice and
bob) is played by the real ``hearts league run --forever`` in the sandbox; the portal is served in
this process (:func:`tests.helpers.portal.portal_in_process`) so that its clock, which it holds
against the season's freeze, is the test's. Alice and bob each upload a small Python bot through
the form (bob's plays its highest legal card, alice's its lowest). The organiser announces the
freeze with the real ``hearts league freeze --at T``; the portal's clock is set before T, then
past it, while real time catches up with T before the real ``hearts league final`` is played.
Screenshots under the test's tmp_path.

Skipped without Chromium or Playwright, except under CI=true, where that fails.
"""

from __future__ import annotations

import json
import re
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from hearts_tournaments.league.store import LeagueStore, utc_text
from tests.helpers.browser import WAIT_MS
from tests.helpers.cli import hearts
from tests.helpers.portal import (
    LOWEST,
    MANIFEST,
    good_archive,
    league_running,
    make_league,
    portal_in_process,
    tar_gz,
)

ATOM = "{http://www.w3.org/2005/Atom}"
#: Bob's bot: alice's, but playing its highest legal card.
HIGHEST = LOWEST.replace(
    'sorted(request["legal"], key=rank)', 'sorted(request["legal"], key=rank, reverse=True)'
)
#: Seconds from the announcement to the freeze (real time): the final waits for it.
NOTICE_S = 10
#: Deals the final plays at most.
BUDGET = 16


def wait_played(folder: Path, versions: list[str], run: Any, timeout: float = 900) -> None:
    """Until each of ``versions`` has played a stored block (the league's run still going)."""
    deadline = time.monotonic() + timeout
    while True:
        with LeagueStore.open(folder, read_only=True) as store:
            if all(store.history(v) for v in versions):
                return
        assert run.poll() is None, "the league's run ended early"
        assert time.monotonic() < deadline, f"{versions} had not all played a block after {timeout} s"
        time.sleep(0.5)


def shown_when(at: float) -> str:
    """A time as the portal's pages show it."""
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(at))


def feed_entries(body: str) -> list[tuple[str, str, str]]:
    """The (kind, title, content) of each entry of an Atom feed."""
    root = ET.fromstring(body)
    assert root.tag == f"{ATOM}feed", body[:200]
    out = []
    for entry in root.findall(f"{ATOM}entry"):
        category = entry.find(f"{ATOM}category")
        kind = "" if category is None else category.get("term", "")
        out.append((kind, entry.findtext(f"{ATOM}title") or "", entry.findtext(f"{ATOM}content") or ""))
    return out


@pytest.mark.timeout(1200)
def test_a_season_from_submissions_to_its_final_in_the_browser(browser: Any, tmp_path: Path) -> None:
    folder = tmp_path / "lg"
    tokens = make_league(folder, ("alice", "bob"), house="heuristic")
    assert HIGHEST != LOWEST and "lowest legal card" in MANIFEST
    archives = {"alice": tmp_path / "alice.tar.gz", "bob": tmp_path / "bob.tar.gz"}
    archives["alice"].write_bytes(good_archive())
    bob_manifest = MANIFEST.replace("lowest legal card", "highest legal card")
    archives["bob"].write_bytes(tar_gz([("bot.toml", bob_manifest.encode()), ("bot.py", HIGHEST.encode())]))
    described = {"alice": "lowest legal card", "bob": "highest legal card"}
    shots = tmp_path / "screenshots"
    shots.mkdir()
    errors: list[str] = []
    with portal_in_process(folder) as (url, portal):
        now = [time.time()]
        portal.clock = lambda: now[0]
        pages: dict[str, Any] = {}
        with league_running(folder) as run:
            # Each entrant signs in (its own browser context) and uploads through the form.
            for name in ("alice", "bob"):
                page = browser.new_page(viewport={"width": 1366, "height": 900})
                page.set_default_timeout(WAIT_MS)
                page.on("pageerror", lambda exc: errors.append(str(exc)))
                pages[name] = page
                page.goto(url + "/login")
                page.fill("input[name=token]", tokens[name])
                page.click("#login button[type=submit]")
                page.wait_for_url(url + "/me")
                assert page.locator("#who").inner_text() == name
                assert page.locator("#freezes").count() == 0  # no freeze announced yet
                page.set_input_files("#submit input[type=file]", str(archives[name]))
                page.click("#submit button[type=submit]")
                page.wait_for_url(lambda u: "/me/submissions/" in u)
            for name, page in pages.items():
                page.wait_for_selector("#status[data-status=active], #status[data-status=error]")
                assert page.locator("#status").get_attribute("data-status") == "active", page.locator(
                    "#status-message"
                ).inner_text()
                assert f"{name}@v1" in page.locator("#version").inner_text()
            # Both play blocks: the league's run picks the new versions up by itself.
            wait_played(folder, ["alice@v1", "bob@v1"], run)

            # The organiser announces the deadline; the portal's clock is before it.
            freeze_at = int(time.time()) + NOTICE_S
            now[0] = freeze_at - 60
            done = hearts("league", "freeze", str(folder), "--at", utc_text(freeze_at))
            assert done.returncode == 0 and utc_text(freeze_at) in done.stdout, done
            alice = pages["alice"]
            alice.goto(url + "/me")
            assert (
                alice.locator("#freezes")
                .inner_text()
                .startswith(f"Submissions close at {shown_when(freeze_at)}")
            )
            assert alice.locator("#frozen").count() == 0
            alice.screenshot(path=str(shots / "me-freezes.png"), full_page=True)

            # The portal's clock passes the freeze while alice's page is open: her upload is refused.
            now[0] = freeze_at + 1
            alice.set_input_files("#submit input[type=file]", str(archives["bob"]))
            with alice.expect_response(lambda r: r.url == url + "/me/submit") as answer:
                alice.click("#submit button[type=submit]")
            assert answer.value.status == 403
            alice.wait_for_load_state()
            refusal = alice.locator("body").inner_text()
            assert f"the season froze at {utc_text(freeze_at)}: no new version is accepted" in refusal
            alice.screenshot(path=str(shots / "upload-refused.png"), full_page=True)
            alice.goto(url + "/me")
            frozen = alice.locator("#frozen").inner_text()
            assert f"froze at {utc_text(freeze_at)}" in frozen, frozen
            assert alice.locator("#submit").count() == 0
            with LeagueStore.open(folder, read_only=True) as store:
                assert [v.id for v in store.versions(entrant="alice")] == ["alice@v1"]

            # Real time passes the freeze too (the final is played after it), then the run stops.
            while time.time() <= freeze_at:
                time.sleep(0.2)
        now[0] = time.time()

        # The final: among the versions active at the freeze, until the top place is separated.
        done = hearts("league", "final", str(folder), "--top", "1", "--budget", str(BUDGET), timeout=1000)
        assert done.returncode == 0, done
        report = json.loads((folder / "final.json").read_text())
        assert sorted(report["finalists"]) == ["alice@v1", "bob@v1", "house@v1"], report
        assert report["decided"] and report["established"] == [1], report
        assert report["places"][0]["version"] == "house@v1" and report["deals"] < BUDGET, report
        assert f"final decided after {report['deals']} deals" in done.stdout, done.stdout
        checked = hearts("league", "verify", str(folder), "--public-key", str(folder / "published.json"))
        assert checked.returncode == 0, checked

        # Each entrant's own page, on a laptop and on a phone: rank, chart, notifications.
        for name, page in pages.items():
            place = next(p for p in report["places"] if p["version"] == f"{name}@v1")
            for width in (1366, 390):
                page.set_viewport_size({"width": width, "height": 900})
                page.goto(url + "/me")
                page.screenshot(path=str(shots / f"{name}-me-{width}.png"), full_page=True)
                assert page.locator("#description").inner_text() == described[name]
                rank = page.locator("#rank").inner_text()
                assert re.match(r"^\d(st|nd|rd) of 3 among the league's active entrants", rank), rank
                chart = page.locator(f'section.profile[data-version="{name}@v1"] svg.strength-chart')
                assert chart.count() == 1
                box = chart.bounding_box()
                assert box is not None and box["width"] > 100 and box["height"] > 30, box
                assert chart.locator("polyline.strength").count() == 1
                assert page.locator("#frozen").is_visible() and page.locator("#submit").count() == 0
                link = page.locator("#notifications a#own-feed")
                assert link.is_visible() and link.get_attribute("href") == "/me/feed.atom"
                if width == 390:
                    scroll = page.evaluate("document.scrollingElement.scrollWidth")
                    assert scroll <= 390, scroll
            # The feed the link names, fetched by the page with its session.
            feed = page.evaluate(
                """async () => { const r = await fetch("/me/feed.atom");
                return [r.status, r.headers.get("content-type"), await r.text()]; }"""
            )
            assert feed[0] == 200 and feed[1].startswith("application/atom+xml"), feed[:2]
            entries = feed_entries(feed[2])
            kinds = [kind for kind, _title, _content in entries]
            assert kinds[0] == "final.ended", entries  # newest first
            assert ("version.active", f"{name}@v1 is active: it plays") in [(k, t) for k, t, _c in entries]
            # "freezes" when announced before its time, "froze" if the command came late.
            frozen_titles = [t for k, t, _c in entries if k == "season.frozen"]
            assert len(frozen_titles) == 1, entries
            assert re.fullmatch(f"the season (freezes|froze) at {utc_text(freeze_at)}", frozen_titles[0])
            ended = entries[0][2]
            assert f"decided: {name}@v1 placed {place['place']} of 3" in ended, ended
            other = "bob" if name == "alice" else "alice"
            assert not [e for e in entries if f"{other}@" in e[1] + e[2]], entries
    assert not errors, errors
