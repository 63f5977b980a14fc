"""The page registry (``web/registry.py``): no page registered by half.

Every registered page has its route in the live app and nothing else is routed; every page names
templates that exist; every page is either exported with an enumeration of its static files or
says why it is live only; and every page is both served by the real ``hearts web`` and, when
exported, written by the real ``hearts web export`` as exactly the files it enumerates, with no
link of the exported site leading to a file that is not there.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote, urlencode, urlsplit

import pytest
from starlette.routing import BaseRoute, Mount, Route

from hearts_tournaments import web
from hearts_tournaments.web.app import make_app
from hearts_tournaments.web.registry import NOT_PAGES, PAGES, ExportOptions, StaticFile, WebPage
from hearts_tournaments.web.source import LogPolicy, TournamentSource
from tests.helpers.cli import hearts
from tests.helpers.web_server import get, web_server
from tests.helpers.web_store import add_games, config_text, create

TEMPLATES = Path(web.__file__).parent / "templates"
BUILTIN = {"hero": "heuristic", "rando": "random", "other": "random"}
TABLE = 6
TARGET = 30


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Deal 0 fully played, deal 1 half played (its games withheld, so not exported)."""
    folder = tmp_path_factory.mktemp("registry")
    text = config_text(
        BUILTIN.items(), table_size=TABLE, deals=2, duplicate=True, target_score=TARGET, seed="reg"
    )
    games = create(folder, text)
    deal1 = [g for g in games if g.deal == 1]
    add_games(folder, [g for g in games if g.deal == 0] + deal1[:3], BUILTIN, TARGET)
    return folder


def _path(route: BaseRoute) -> str:
    assert isinstance(route, Route | Mount)
    return route.path


def test_every_registered_page_has_its_route_and_no_route_is_unregistered(tmp_path: Path) -> None:
    app = make_app(tmp_path)  # an empty folder: the routes exist all the same
    routed = [_path(route) for route in app.routes]
    registered = [page.path for page in PAGES]
    assert len(set(registered)) == len(registered), "two pages registered at one path"
    assert len({page.name for page in PAGES}) == len(PAGES), "two pages registered under one name"
    missing = [p for p in registered if p not in routed]
    assert not missing, f"registered pages without a route in make_app: {missing}"
    unregistered = [p for p in routed if p not in registered and p not in NOT_PAGES]
    assert not unregistered, f"routes of make_app that are not registered in web/registry.py: {unregistered}"


def test_every_page_names_templates_that_exist() -> None:
    for page in PAGES:
        for template in page.templates:
            assert (TEMPLATES / template).is_file(), f"page {page.name!r} names a missing template {template}"


def test_every_page_is_exported_or_says_why_not() -> None:
    for page in PAGES:
        assert (page.export is None) == bool(page.live_only), (
            f"page {page.name!r}: give it an export enumeration, or say in live_only why it has none"
        )


def _url(page: WebPage, file: StaticFile | None) -> str:
    """The live URL of ``page``, with the path parameters and query of ``file``."""
    params = {} if file is None else dict(file.params)

    def fill(match: re.Match[str]) -> str:
        name = match.group(1)
        assert name in params, f"page {page.name!r}: no value for its path parameter {name!r}"
        return str(params[name])

    path = re.sub(r"\{(\w+)(?::\w+)?\}", fill, page.path)
    query = "" if file is None or not file.query else "?" + urlencode(file.query)
    return path + query


def _enumerated(folder: Path, options: ExportOptions) -> dict[str, list[StaticFile]]:
    source = TournamentSource(folder, LogPolicy.RELEASED, live=False)
    try:
        return {page.name: list(page.export(source, options)) for page in PAGES if page.export is not None}
    finally:
        source.close()


@pytest.mark.timeout(300)
def test_every_page_is_served_and_exported(folder: Path, tmp_path: Path) -> None:
    enumerated = _enumerated(folder, ExportOptions(seat_views=True))
    for name, files in enumerated.items():
        assert files, f"page {name!r} enumerates no file of this tournament's export"
    with web_server(folder) as url:
        for page in PAGES:
            each: list[StaticFile | None] = [*enumerated.get(page.name, ())] or [None]
            for file in each:
                reply = get(url + _url(page, file))
                assert reply.status == 200, f"page {page.name!r} at {_url(page, file)}: {reply.status}"
    out = tmp_path / "site"
    result = hearts("web", "export", str(folder), str(out))
    assert result.returncode == 0, result.stderr
    written = {str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()}
    written = {p for p in written if not p.startswith("static/")}
    expected = {file.path for files in enumerated.values() for file in files}
    assert written == expected
    # Every link of the exported site leads to a file it holds.
    for name in sorted(written):
        if not name.endswith(".html"):
            continue
        page_file = out / name
        for link in re.findall(r'(?:href|src)="([^"]+)"', page_file.read_text(encoding="utf-8")):
            parts = urlsplit(link)
            if parts.scheme or link.startswith(("#", "/")) or not parts.path:
                continue
            target = (page_file.parent / unquote(parts.path)).resolve()
            assert target.is_file(), f"{name} links to {link}, which the export did not write"


def test_an_export_without_seat_views_enumerates_no_seat_view(folder: Path) -> None:
    with_views = _enumerated(folder, ExportOptions(seat_views=True))["game"]
    without = _enumerated(folder, ExportOptions(seat_views=False))["game"]
    assert [f for f in with_views if not f.query] == without
    assert len(with_views) == len(without) * (1 + TABLE)
