"""The live server of ``hearts web DIR``: a Starlette app over :class:`~.pages.Site`.

Every route is ``async`` and runs on the event loop's thread, the thread that opened the
read-only SQLite connection. ``/events`` is a server-sent event stream: it checks the store's
game count every :data:`POLL_S` seconds and sends ``games`` when it changes; the live pages
(htmx with its SSE extension) then fetch their table again.

A folder that holds no tournament yet is not an error at start: every page says so with a 404
until the runner creates it, then the pages appear.
"""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import os
import socket
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import structlog
import uvicorn
import uvloop
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from hearts_tournaments.tournament.store import DB_NAME
from hearts_tournaments.web.league_source import LeagueSource
from hearts_tournaments.web.links import Links
from hearts_tournaments.web.pages import Site
from hearts_tournaments.web.registry import PAGES, WebPage
from hearts_tournaments.web.source import (
    LogPolicy,
    NotATournament,
    SourceError,
    TournamentSource,
)

#: A league folder's database: such a folder is shown through the league's source.
LEAGUE_DB = "league.sqlite"

#: Seconds between two looks at the store for new games.
POLL_S = 1.0
#: Seconds between keep-alive comments on an idle event stream.
KEEPALIVE_S = 15.0
#: The most rendered pages :class:`PageCache` keeps.
PAGE_CACHE_SIZE = 512
#: Seconds a kept page is served before it is rendered again with the store unchanged (a
#: tournament's page may show standings a runner is about to refresh).
PAGE_FRESH_S = 30.0
#: Pages at least this long are sent gzip-encoded to clients that ask.
GZIP_MIN_BYTES = 1024
STATIC = Path(__file__).parent / "static"

log = structlog.get_logger(__name__)
LINKS = Links()


class _Folder:
    """The tournament folder, opened on first use (and retried until it holds a tournament).

    A tournament started again in the same folder (``hearts tournament run --fresh``) is a new
    database file: it is noticed by its inode and opened afresh.
    """

    def __init__(self, folder: Path, logs: LogPolicy = LogPolicy.RELEASED, portal: bool = False) -> None:
        self.folder = folder
        self.logs = logs
        self.portal = portal
        self.site: Site | None = None
        self.source: TournamentSource | LeagueSource | None = None
        self.inode: int | None = None
        self.error: NotATournament | None = None

    def _inode(self) -> int | None:
        try:
            league = self.folder / LEAGUE_DB
            return (league if league.is_file() else self.folder / DB_NAME).stat().st_ino
        except OSError:
            return None

    def get(self) -> Site | None:
        inode = self._inode()
        if self.source is not None and inode != self.inode:
            self.source.close()
            self.site = self.source = None
        if self.site is None:
            try:
                league = (self.folder / LEAGUE_DB).is_file()
                self.source = (
                    LeagueSource(self.folder, self.logs)
                    if league
                    else TournamentSource(self.folder, self.logs)
                )
            except NotATournament as exc:
                self.error = exc
                return None
            self.inode = inode
            self.site = Site(self.source, live=True, portal=self.portal)
            self.site.prepare()
        return self.site

    def version(self) -> int:
        site = self.get()
        return -1 if site is None else site.source.version()

    def stamp(self) -> tuple[int, int, int] | None:
        """What every page depends on: the database file, its stored games and the standings'
        generation (None while the folder holds nothing to show)."""
        site = self.get()
        if site is None or self.inode is None:
            return None
        return (self.inode, site.source.version(), self.standings_generation())

    def standings_generation(self) -> int:
        """Changes when fresher standings can be shown (0 for a source without snapshots)."""
        site = self.get()
        source = None if site is None else site.source
        return source.standings_generation() if isinstance(source, TournamentSource) else 0


@dataclass(slots=True)
class _Rendered:
    """A page as it was sent: its body, type, extra headers, entity tag and when it was made;
    its gzip encoding once a client asked for it."""

    body: bytes
    media_type: str | None
    headers: tuple[tuple[str, str], ...]
    etag: str
    made: float
    gzipped: bytes | None = None

    def gzip(self) -> bytes:
        """The body, gzip-encoded (once)."""
        if self.gzipped is None:
            self.gzipped = gzip.compress(self.body, compresslevel=6, mtime=0)
        return self.gzipped


class PageCache:
    """Pages rendered once per state of the store, with entity tags of their content.

    A page is a function of the store's state (:meth:`_Folder.stamp`), its path and its query:
    it is rendered once per stored game (a league: per stored block, command or status change)
    and again at most every :data:`PAGE_FRESH_S` seconds (a page may also say how long ago its
    standings were computed), however many people look; a browser that holds the same content
    gets ``304 Not Modified``. At most :data:`PAGE_CACHE_SIZE` pages are kept (the least recently
    used go). ``clock`` is injectable for tests.
    """

    def __init__(self, size: int = 0, clock: Callable[[], float] = time.monotonic) -> None:
        self.size = size or PAGE_CACHE_SIZE
        self.clock = clock
        self._pages: OrderedDict[str, _Rendered] = OrderedDict()

    @staticmethod
    def key(stamp: tuple[int, ...], request: Request) -> str:
        """The page's cache key: the store's state, its path and its query."""
        return f"{stamp}|{request.url.path}|{request.url.query}"

    def get(self, key: str) -> _Rendered | None:
        """The page kept under ``key``, if it is fresh."""
        page = self._pages.get(key)
        if page is None or self.clock() - page.made > PAGE_FRESH_S:
            return None
        self._pages.move_to_end(key)
        return page

    def put(self, key: str, response: Response) -> _Rendered:
        """Keeps a rendered ``200`` page; returns it as kept."""
        body = bytes(response.body)
        kept = tuple((k, v) for k, v in response.headers.items() if k.lower() == "content-disposition")
        etag = '"' + hashlib.blake2b(body, digest_size=12).hexdigest() + '"'
        page = _Rendered(body, response.media_type, kept, etag, self.clock())
        self._pages[key] = page
        self._pages.move_to_end(key)
        while len(self._pages) > self.size:
            self._pages.popitem(last=False)
        return page


def make_app(
    folder: Path,
    logs: LogPolicy = LogPolicy.RELEASED,
    portal: bool = False,
    clock: Callable[[], float] = time.monotonic,
) -> Starlette:
    """The web app serving the tournament in ``folder`` (read-only), bot logs per ``logs``;
    ``portal``: served inside the entrant portal (its pages link to sign-in, registration, help).

    One cached route per page of :data:`~.registry.PAGES`, plus the event stream and the static
    assets (:data:`~.registry.NOT_PAGES`)."""
    state = _Folder(folder, logs, portal)
    pages = PageCache(clock=clock)

    def cached(handler: Callable[[Request], Awaitable[Response]]) -> Callable[[Request], Awaitable[Response]]:
        """``handler``'s pages served from :class:`PageCache` (only complete ``200`` pages are kept)."""

        async def serve(request: Request) -> Response:
            try:
                stamp = state.stamp()
            except SourceError:
                stamp = None
            if stamp is None:
                return await handler(request)
            key = pages.key(stamp, request)
            page = pages.get(key)
            if page is None:
                response = await handler(request)
                if response.status_code != 200 or isinstance(response, StreamingResponse):
                    return response
                page = pages.put(key, response)
            headers = {"ETag": page.etag, "Cache-Control": "no-cache", "Vary": "Accept-Encoding"}
            if page.etag in request.headers.get("if-none-match", ""):
                return Response(status_code=304, headers=headers)
            headers.update(page.headers)
            if len(page.body) >= GZIP_MIN_BYTES and "gzip" in request.headers.get("accept-encoding", ""):
                # Compressed once per page, not per request (the middleware passes it through).
                headers["Content-Encoding"] = "gzip"
                return Response(page.gzip(), media_type=page.media_type, headers=headers)
            return Response(page.body, media_type=page.media_type, headers=headers)

        return serve

    # Opened now, not on the first request: reading a 10,000-game schedule takes a while.
    state.get()
    fallback = Site(None, live=False, portal=portal)

    def missing() -> HTMLResponse:
        message = str(state.error) if state.error else f"{folder} holds no tournament"
        page = fallback.error(
            LINKS, 404, f"{message}. This page comes alive by itself once it holds one.", waiting=True
        )
        return HTMLResponse(page.html, page.status)

    def route(entry: WebPage) -> Route:
        """The live route of a registered page."""

        async def render(request: Request) -> Response:
            site = state.get()
            if site is None:
                return missing()
            query = {k: v for k, v in request.query_params.items()}
            reply = entry.render(site, LINKS, request.path_params, query)
            headers = dict(reply.headers)
            return Response(reply.body, reply.status, headers=headers, media_type=reply.media_type)

        return Route(entry.path, cached(render))

    async def events(request: Request) -> Response:
        async def stream() -> AsyncIterator[str]:
            seen = state.version()
            generation = state.standings_generation()
            yield f"retry: 3000\nevent: hello\ndata: {seen}\n\n"
            idle = 0.0
            while not await request.is_disconnected():
                await asyncio.sleep(POLL_S)
                try:
                    now = state.version()
                    fresher = state.standings_generation()
                except SourceError:
                    continue
                # A new game, or fresher standings of the games already announced.
                if now != seen or fresher != generation:
                    seen, generation = now, fresher
                    idle = 0.0
                    yield f"event: games\ndata: {now}\n\n"
                else:
                    idle += POLL_S
                    if idle >= KEEPALIVE_S:
                        idle = 0.0
                        yield ": keep-alive\n\n"

        return StreamingResponse(
            stream(), media_type="text/event-stream", headers={"Cache-Control": "no-store"}
        )

    async def not_found(request: Request, exc: Exception) -> Response:
        status = exc.status_code if isinstance(exc, HTTPException) else 404
        page = fallback.error(LINKS, status, f"there is no page at {request.url.path}")
        return HTMLResponse(page.html, status)

    async def server_error(request: Request, exc: Exception) -> Response:
        log.error("web_page_failed", path=request.url.path, error=repr(exc))
        page = fallback.error(LINKS, 500, "this page failed to render; the server log has the details")
        return HTMLResponse(page.html, 500)

    routes = [
        *(route(entry) for entry in PAGES),
        Route("/events", events),
        Mount("/static", app=StaticFiles(directory=STATIC), name="static"),
    ]
    return Starlette(
        routes=routes,
        # Compresses pages for clients that ask; event streams are never compressed (they would stall).
        middleware=[Middleware(GZipMiddleware, minimum_size=GZIP_MIN_BYTES)],
        exception_handlers={404: not_found, 405: not_found, 500: server_error, Exception: server_error},
    )


def serve(
    folder: Path,
    host: str,
    port: int,
    on_ready: Callable[[str], None],
    logs: LogPolicy = LogPolicy.RELEASED,
    app: Starlette | None = None,
    nice: int = 0,
) -> None:
    """Serves ``folder`` until SIGINT or SIGTERM.

    Args:
        folder: The tournament folder.
        host: Address to listen on.
        port: Port to listen on; 0 picks a free one.
        on_ready: Called with the base URL once the server accepts connections.
        logs: Whose bot logs the pages show.
        app: The app to serve instead of ``make_app(folder, logs)`` (the portal's).
        nice: The CPU niceness of the thread that serves, and of the threads it starts (see
            :func:`yield_cpu`): threads started before keep theirs.

    Raises:
        OSError: if the address cannot be bound (port in use, bad host).
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.create_server((host, port), family=family, backlog=128)
    sock.setblocking(False)
    config = uvicorn.Config(
        app if app is not None else make_app(folder, logs),
        log_config=None,
        access_log=False,
        lifespan="off",
        timeout_graceful_shutdown=1,
    )
    server = uvicorn.Server(config)
    bound = sock.getsockname()
    shown = f"[{bound[0]}]" if family == socket.AF_INET6 else bound[0]

    async def main() -> None:
        task = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started and not task.done():
            await asyncio.sleep(0.02)
        if server.started:
            url = f"http://{shown}:{bound[1]}"
            log.info("web_listening", url=url, folder=str(folder))
            on_ready(url)
        await task

    # uvloop (with httptools, which uvicorn picks by itself) serves several times the requests
    # per second of asyncio's own loop: a shared leaderboard link is many visitors at once.
    yield_cpu(nice)
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        runner.run(main())


def yield_cpu(nice: int) -> None:
    """Lowers the calling thread's CPU priority to niceness ``nice``, never raises it (that
    needs privileges). On Linux a niceness is a thread's, and a thread or process it starts
    inherits it: the serving thread and the pages' worker threads yield to the games of a run
    on the same machine, while threads started before (the portal's checker) keep theirs."""
    tid = threading.get_native_id() if sys.platform == "linux" else 0
    if nice > os.getpriority(os.PRIO_PROCESS, tid):
        os.setpriority(os.PRIO_PROCESS, tid, nice)
