"""``/me`` in a real browser (Debian's Chromium driven by Playwright): signed in, it fits a 390 px
phone (nothing scrolls the page sideways: wide tables scroll inside their own box, long names
and paths break), and at 1366 px it shows the entrant's rank and its strength chart. The version's public page
fits the phone as well. The league
is :func:`tests.helpers.portal.played_league` (stored blocks, real store), served by the real
``hearts web LEAGUE --submissions``. Screenshots under the test's tmp_path.

Skipped without Chromium or Playwright, except under CI=true, where that fails.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.browser import WAIT_MS
from tests.helpers.portal import bot_folder, played_league
from tests.helpers.web_server import web_server


@pytest.mark.timeout(600)
def test_me_fits_a_phone_and_shows_rank_and_chart_on_a_laptop(browser: Any, tmp_path: Path) -> None:
    folder = tmp_path / "lg"
    tokens = played_league(folder, bot_folder(tmp_path / "bot"), entrants=8, blocks=12, faults={"e01@v1": 1})
    with web_server(folder, "--submissions") as url:
        for width in (390, 1366):
            page = browser.new_page(viewport={"width": width, "height": 900})
            page.set_default_timeout(WAIT_MS)
            page.goto(url + "/login")
            page.fill("input[name=token]", tokens["alice"])
            page.click("#login button[type=submit]")
            page.wait_for_url(url + "/me")
            page.screenshot(path=str(tmp_path / f"me-{width}.png"), full_page=True)
            page.screenshot(path=str(tmp_path / f"me-{width}-top.png"))
            scroll = page.evaluate("document.scrollingElement.scrollWidth")
            if width == 390:
                assert scroll <= 390, scroll
                # The version's public page too: its tables scroll in their boxes.
                page.goto(url + "/bot/alice@v1")
                assert page.locator("#rank").inner_text().endswith("official table)")
                assert page.evaluate("document.scrollingElement.scrollWidth") <= 390
            else:
                rank = page.locator("#rank").inner_text()
                assert re.match(r"^\d+(st|nd|rd|th) of 8 among the league's active entrants", rank), rank
                chart = page.locator('section.profile[data-version="alice@v1"] svg.strength-chart')
                assert chart.count() == 1
                box = chart.bounding_box()
                assert box is not None and box["width"] > 200 and box["height"] > 60
                assert chart.locator("polyline.strength").count() == 1
                assert chart.locator("polygon.band").count() == 1
            page.close()
