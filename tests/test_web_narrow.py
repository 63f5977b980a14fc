"""``hearts web`` at the widths people use, with bad deep links, and before the tournament exists.

Debian's Chromium driven by Playwright (as tests/test_web_browser.py), over a tournament played
by the real runner: the replay fits a 390 px phone (no seat overlaps another or leaves the
screen), the leaderboard fits a 1366 px laptop, a deep link to a moment that does not exist says
so, and a page opened on a folder before the runner creates its tournament comes alive by itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers.browser import WAIT_MS
from tests.helpers.cli import hearts
from tests.helpers.web_server import web_server

CONFIG = """\
[tournament]
name = "narrow"
table_size = {size}
deals = 1
duplicate = false
seed = "narrow"
target_score = 30
max_hands = 1
output = "{output}"
{bots}"""


def config(folder: Path, size: int, output: Path) -> Path:
    names = ["heuristic", "random", "montecarlo-long-name", "heuristic-second", "random-second", "h6"]
    bots = "".join(
        f'\n[[bots]]\nname = "{name}"\nbuiltin = "{"random" if "random" in name else "heuristic"}"\n'
        for name in names[:size]
    )
    path = folder / f"t{size}.toml"
    path.write_text(CONFIG.format(size=size, output=output, bots=bots))
    return path


@pytest.fixture(scope="module")
def tournament(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real one-game tournament at a table of 11 (the most seats around the felt)."""
    root = tmp_path_factory.mktemp("narrow")
    path = config(root, 6, root / "out")
    text = path.read_text().replace("table_size = 6", "table_size = 11")
    path.write_text(text)
    run = hearts("tournament", "run", str(path), "--progress", "never", timeout=600)
    assert run.returncode == 0, run.stderr
    return root / "out"


def overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    return not (
        a["x"] + a["width"] <= b["x"]
        or b["x"] + b["width"] <= a["x"]
        or a["y"] + a["height"] <= b["y"]
        or b["y"] + b["height"] <= a["y"]
    )


@pytest.mark.timeout(600)
def test_narrow_screens_fit(browser: Any, tournament: Path, tmp_path: Path) -> None:
    with web_server(tournament) as url:
        laptop = browser.new_page(viewport={"width": 1366, "height": 900})
        laptop.set_default_timeout(WAIT_MS)
        laptop.goto(url + "/")
        laptop.screenshot(path=str(tmp_path / "leaderboard-1366.png"), full_page=True)
        widths = laptop.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        assert widths[0] <= widths[1], f"the leaderboard is {widths[0]} px wide in a {widths[1]} px window"

        phone = browser.new_page(viewport={"width": 390, "height": 844})
        phone.set_default_timeout(WAIT_MS)
        phone.goto(url + "/game/d000#h1t3")
        phone.wait_for_selector(".seat")
        phone.screenshot(path=str(tmp_path / "replay-390.png"), full_page=True)
        boxes = [s.bounding_box() for s in phone.locator(".seat").all()]
        assert len(boxes) == 11
        for index, box in enumerate(boxes):
            assert box is not None
            assert box["x"] >= 0 and box["x"] + box["width"] <= 390, (index, box)
            for other in boxes[index + 1 :]:
                assert other is not None and not overlap(box, other), (index, box, other)
        widths = phone.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        assert widths[0] <= widths[1], f"the replay is {widths[0]} px wide in a {widths[1]} px window"


@pytest.mark.timeout(600)
def test_a_bad_deep_link_says_so(browser: Any, tournament: Path) -> None:
    with web_server(tournament) as url:
        page = browser.new_page(viewport={"width": 1300, "height": 900})
        page.set_default_timeout(WAIT_MS)
        problem = page.locator("#link-problem")
        for bad, said in (
            ("#h99", "no hand 99"),
            ("#h1t99", "no trick 99 in hand 1"),
            ("#garbage", "not a moment"),
        ):
            page.goto(url + "/game/d000" + bad)
            page.wait_for_selector("#link-problem:not([hidden])")
            text = problem.inner_text()
            assert bad in text and said in text, (bad, text)
            assert page.locator("#where").inner_text().startswith("Hand 1: dealt by seat")
        page.goto(url + "/game/d000#h1t2")
        page.wait_for_selector(".seat")
        assert problem.is_hidden()


@pytest.mark.timeout(600)
def test_a_page_opened_before_the_tournament_exists_comes_alive(browser: Any, tmp_path: Path) -> None:
    out = tmp_path / "later"
    out.mkdir()
    path = config(tmp_path, 6, out)
    with web_server(out) as url:
        page = browser.new_page(viewport={"width": 1300, "height": 900})
        page.set_default_timeout(WAIT_MS)
        page.goto(url + "/")
        assert "holds no tournament" in page.content()
        run = hearts("tournament", "run", str(path), timeout=600)
        assert run.returncode == 0, run.stderr
        page.wait_for_selector("#progress", timeout=WAIT_MS)
        assert page.locator("#standings-table tbody tr").count() == 6
