"""Every page of ``hearts web``, in one list: the live server and the static export walk it.

A :class:`WebPage` says where a page lives (its URL path, as a Starlette route pattern), how it
renders from a :class:`~.pages.Site` (with the path's parameters and the query), which templates
it uses, and which files of a static export hold it (:attr:`WebPage.export`, enumerated from
the source: one per bot, one per deal, one per released game...) or why it has none
(:attr:`WebPage.live_only`). :func:`~.app.make_app` makes one cached route per page;
:func:`~.export.export_site` writes every file each page enumerates. A new page is one entry in
:data:`PAGES` (plus its :class:`~.links.Links` method and template); ``tests/test_web_registry.py``
fails on a page registered by half.

Not pages: the event stream ``/events`` (it watches the folder, renders nothing from the site)
and the static assets under ``/static`` (:data:`NOT_PAGES`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

from hearts_tournaments.web.links import Links
from hearts_tournaments.web.pages import Page, Site
from hearts_tournaments.web.source import Source, StandingsPending

#: Routes of the live server that are not pages of the site (and are not exported).
NOT_PAGES = ("/events", "/static")


@dataclass(frozen=True, slots=True)
class Reply:
    """What a page answers: its status, body, media type and extra headers.

    An ``text/html`` reply is a page (exported whatever its status, a failure noted); any other
    is a download (exported only when its status is 200, counted as a game record).
    """

    status: int
    body: str
    media_type: str = "text/html"
    headers: Mapping[str, str] = field(default_factory=dict)

    @property
    def is_html(self) -> bool:
        return self.media_type == "text/html"


@dataclass(frozen=True, slots=True)
class StaticFile:
    """One file of a static export: its path under the site's folder, and the path parameters
    and query it renders with (as the live route would receive them)."""

    path: str
    params: Mapping[str, object] = field(default_factory=dict)
    query: Mapping[str, str] = field(default_factory=dict)

    @property
    def depth(self) -> int:
        """How many folders below the site's root the file is (its links climb that many)."""
        return self.path.count("/")


@dataclass(frozen=True, slots=True)
class ExportOptions:
    """What ``hearts web export`` was asked to write beyond the pages every site has."""

    seat_views: bool = True


#: How a page renders: from the site, the links of where it is shown, its path parameters
#: (typed by the route pattern: ``{deal:int}`` is an ``int``) and its query.
Render = Callable[[Site, Links, Mapping[str, object], Mapping[str, str]], Reply]
#: The files of a static export that hold a page, enumerated from the source.
Enumerate = Callable[[Source, ExportOptions], Iterator[StaticFile]]


@dataclass(frozen=True, slots=True)
class WebPage:
    """One page of the site.

    Attributes:
        name: A short name (tests and docs refer to it).
        path: The live server's route pattern (Starlette syntax: ``/bot/{name}``).
        render: Renders the page (see :data:`Render`).
        templates: The templates it renders (checked to exist).
        export: The files of a static export that hold it; None for a page of the live server
            only, which then says why in ``live_only``.
        live_only: Why the page is not exported (empty for an exported page).
    """

    name: str
    path: str
    render: Render
    templates: tuple[str, ...]
    export: Enumerate | None = None
    live_only: str = ""


def html(page: Page, retry_pending: bool = False) -> Reply:
    """A rendered page as a reply; ``retry_pending``: standings being computed for the first
    time ask the browser to come again shortly (``Retry-After``, ``Refresh``)."""
    pending = retry_pending and page.status == StandingsPending.status
    return Reply(page.status, page.html, headers={"Retry-After": "2", "Refresh": "2"} if pending else {})


def _leaderboard(site: Site, links: Links, params: Mapping[str, object], query: Mapping[str, str]) -> Reply:
    return html(site.leaderboard(links, dict(query)), retry_pending=True)


def _standings_fragment(
    site: Site, links: Links, params: Mapping[str, object], query: Mapping[str, str]
) -> Reply:
    return html(site.leaderboard(links, dict(query), fragment=True), retry_pending=True)


def _games(site: Site, links: Links, params: Mapping[str, object], query: Mapping[str, str]) -> Reply:
    return html(site.games(links, dict(query)))


def _games_fragment(
    site: Site, links: Links, params: Mapping[str, object], query: Mapping[str, str]
) -> Reply:
    return html(site.games(links, dict(query), fragment=True))


def _h2h(site: Site, links: Links, params: Mapping[str, object], query: Mapping[str, str]) -> Reply:
    return html(site.h2h(links), retry_pending=True)


def _bot(site: Site, links: Links, params: Mapping[str, object], query: Mapping[str, str]) -> Reply:
    return html(site.bot(links, str(params["name"])), retry_pending=True)


def _game(site: Site, links: Links, params: Mapping[str, object], query: Mapping[str, str]) -> Reply:
    raw = query.get("seat", "")
    if raw and not raw.isdigit():
        return html(site.error(links, 400, f"seat must be a seat number, not {raw!r}"))
    return html(site.game(links, str(params["key"]), int(raw) if raw else None))


def _record(site: Site, links: Links, params: Mapping[str, object], query: Mapping[str, str]) -> Reply:
    key = str(params["key"])
    status, text = site.record_text(key)
    if status != 200:
        return Reply(status, text + "\n", media_type="text/plain")
    return Reply(
        200,
        text,
        media_type="application/json",
        headers={"Content-Disposition": f'attachment; filename="{key}.json"'},
    )


def _deal(site: Site, links: Links, params: Mapping[str, object], query: Mapping[str, str]) -> Reply:
    deal = params["deal"]
    assert isinstance(deal, int)  # the route pattern converts it
    return html(site.deal(links, deal))


def _one(path: str) -> Enumerate:
    """A page exported as one file."""

    def files(source: Source, options: ExportOptions) -> Iterator[StaticFile]:
        yield StaticFile(path)

    return files


def _bot_files(source: Source, options: ExportOptions) -> Iterator[StaticFile]:
    for bot in source.bots():
        yield StaticFile(f"bot/{bot}.html", {"name": bot})


def _deal_files(source: Source, options: ExportOptions) -> Iterator[StaticFile]:
    for deal in sorted({r.deal for r in source.games()}):
        yield StaticFile(f"deal/{deal}.html", {"deal": deal})


def _game_files(source: Source, options: ExportOptions) -> Iterator[StaticFile]:
    """A released game's replay, and each seat's view of it (``--seat-views``)."""
    for row in source.games():
        if not row.released:
            continue
        yield StaticFile(f"game/{row.key}.html", {"key": row.key})
        if options.seat_views:
            for seat in range(len(row.seats)):
                yield StaticFile(f"game/{row.key}-seat{seat}.html", {"key": row.key}, {"seat": str(seat)})


def _record_files(source: Source, options: ExportOptions) -> Iterator[StaticFile]:
    for row in source.games():
        if row.released:
            yield StaticFile(f"game/{row.key}.json", {"key": row.key})


_FRAGMENT = "an htmx fragment of the live page; the export sorts and filters in the browser"

#: Every page, in the order an export writes them.
PAGES: tuple[WebPage, ...] = (
    WebPage(
        "leaderboard",
        "/",
        _leaderboard,
        ("leaderboard.html", "league.html"),
        export=_one("index.html"),
    ),
    WebPage(
        "standings-fragment",
        "/fragment/standings",
        _standings_fragment,
        ("standings_table.html", "league_body.html"),
        live_only=_FRAGMENT,
    ),
    WebPage("games", "/games", _games, ("games.html",), export=_one("games.html")),
    WebPage("games-fragment", "/fragment/games", _games_fragment, ("games_table.html",), live_only=_FRAGMENT),
    WebPage("h2h", "/h2h", _h2h, ("h2h.html",), export=_one("h2h.html")),
    WebPage("bot", "/bot/{name}", _bot, ("bot.html",), export=_bot_files),
    WebPage("deal", "/deal/{deal:int}", _deal, ("deal.html",), export=_deal_files),
    WebPage("game", "/game/{key}", _game, ("game.html",), export=_game_files),
    WebPage("record", "/game/{key}/record.json", _record, (), export=_record_files),
)


def page_named(name: str) -> WebPage:
    """The registered page called ``name``."""
    for page in PAGES:
        if page.name == name:
            return page
    raise KeyError(name)
