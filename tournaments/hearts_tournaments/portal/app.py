"""The portal: ``hearts web LEAGUE --submissions``, the public pages plus each entrant's own.

Routes of its own (every other path is the public site, unchanged, except that it shows no bot
logs at all: an entrant sees logs only of its own seats, logged in):

* ``GET/POST /login``: a personal access token for a session. The session is a cookie signed
  with the portal's key (Starlette's ``SessionMiddleware``, itsdangerous), ``HttpOnly``,
  ``SameSite=Strict`` and ``Secure`` (unless ``--insecure-cookies``); it names the account and
  its token's selector, so rotating or revoking the token ends it at once. ``POST /logout``.
* ``GET/POST /register``: an invite code for an account (only while an invite is unused).
* ``GET /me``: the entrant's versions and status, ratings with intervals, submissions, games
  (replays from its own seat), the upload form. ``POST /me/submit``: the form's upload.
* ``GET /me/submissions/ID`` (and ``.json``): a submission's status, polled by the page.
* ``GET /me/log/KEY/SEAT``: its own bot's log of a stored game (a block is stored once every
  rotation of its deal is played); another seat's is refused. ``GET /me/files/VERSION[/PATH]``:
  its own version's files as stored.
* ``POST /api/submissions`` and ``GET /api/submissions/ID`` with ``Authorization: Bearer TOKEN``.

Every form carries a per-session CSRF token, and a POST whose ``Origin`` is another site is
refused. Logins are rate-limited per address, uploads per account and per address. Every
login, submission and account change is in the audit log (``hearts league entrant audit``).

Uploads are checked in memory (:func:`.uploads.check_archive`) before anything is stored; the
accepted ones are queued for one worker thread, which unpacks, checks in the sandbox and adds
each as the entrant's next version (:func:`.uploads.submit_version`), then follows its league
validation.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import hmac
import queue
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog
from jinja2 import ChoiceLoader, Environment, FileSystemLoader, select_autoescape
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.sessions import SessionMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount, Route

from hearts_tournaments.league.commands import list_games
from hearts_tournaments.league.play import league_table
from hearts_tournaments.league.store import LeagueStore, Version
from hearts_tournaments.portal.accounts import ERROR, PortalError, PortalStore, Submission
from hearts_tournaments.portal.kit_reports import load_report
from hearts_tournaments.portal.uploads import (
    MAX_ARCHIVE_BYTES,
    CheckedArchive,
    UploadError,
    abandon_unchecked,
    check_archive,
    submit_version,
    sync_statuses,
)
from hearts_tournaments.web.app import make_app
from hearts_tournaments.web.links import Links
from hearts_tournaments.web.source import LogPolicy

log = structlog.get_logger(__name__)
TEMPLATES = Path(__file__).parent / "templates"
WEB_TEMPLATES = Path(__file__).parent.parent / "web" / "templates"
COOKIE = "hearts_portal"
#: Seconds a session lasts.
SESSION_S = 8 * 3600
#: Seconds between the worker's looks at the league's validations.
SYNC_S = 1.0
#: Accepted submissions waiting for the worker at most (each holds its files in memory).
MAX_QUEUED = 20
#: Bytes of a log or file shown at most.
MAX_SHOWN = 1024 * 1024
LINKS = Links()
#: Portal pages are never cached, framed by another site (its forms could be clicked through
#: from inside a frame) or referred on with their paths.
PAGE_HEADERS = {
    "Cache-Control": "no-store",
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": "frame-ancestors 'none'",
    "Referrer-Policy": "same-origin",
}


@dataclass(frozen=True, slots=True)
class Limits:
    """Rate limits: sign-ins a minute per address and per account, uploads an hour per account and
    per address."""

    logins_per_minute: int = 10
    uploads_per_hour: int = 12
    uploads_per_address_hour: int = 30


class RateLimit:
    """A sliding-window counter per key (in memory: one portal process)."""

    def __init__(self, limit: int, window_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.limit = limit
        self.window = window_s
        self.clock = clock
        self.seen: dict[str, collections.deque[float]] = {}

    def _times(self, key: str) -> collections.deque[float]:
        times = self.seen.setdefault(key, collections.deque())
        while times and times[0] <= self.clock() - self.window:
            times.popleft()
        return times

    def allow(self, key: str) -> bool:
        """Counts one more for ``key``; False when it is over the limit (not counted then)."""
        return allow_all((self, key))


def allow_all(*limits: tuple[RateLimit, str]) -> bool:
    """Counts one more for every (limit, key) when none is at its limit; else counts none."""
    held = [(limit, limit._times(key)) for limit, key in limits]
    if any(len(times) >= limit.limit for limit, times in held):
        return False
    for limit, times in held:
        times.append(limit.clock())
    return True


class Worker:
    """One thread that checks accepted uploads in turn and follows their league validation."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.jobs: queue.Queue[tuple[int, str, CheckedArchive] | None] = queue.Queue()
        self.thread = threading.Thread(target=self._run, name="portal-worker", daemon=True)
        self.stopping = threading.Event()

    def start(self) -> None:
        """Starts the thread (submissions a stopped portal left unchecked are given status error)."""
        with PortalStore(self.folder) as portal:
            abandon_unchecked(portal)
        self.thread.start()

    def stop(self) -> None:
        """Stops the thread after the submission it is checking."""
        self.stopping.set()
        self.jobs.put(None)
        self.thread.join(timeout=120)

    def _run(self) -> None:
        with PortalStore(self.folder) as portal:
            while not self.stopping.is_set():
                try:
                    job = self.jobs.get(timeout=SYNC_S)
                except queue.Empty:
                    job = None
                try:
                    if job is not None:
                        sid, name, checked = job
                        submit_version(
                            self.folder,
                            portal,
                            sid,
                            name,
                            checked,
                            lambda line: log.info("portal", line=line),
                        )
                    sync_statuses(self.folder, portal)
                except Exception as exc:  # the worker goes on with the next submission
                    log.error("portal_worker_failed", error=repr(exc))
                    if job is not None:
                        with contextlib.suppress(Exception):
                            portal.set_submission(
                                job[0], ERROR, "the portal failed while checking it: submit it again"
                            )


def _address(request: Request) -> str:
    return request.client.host if request.client is not None else "?"


class Portal:
    """The state behind the routes: the folder, the portal database, limits, the worker."""

    def __init__(self, folder: Path, limits: Limits, secure: bool) -> None:
        self.folder = folder
        self.db = PortalStore(folder)
        self.limits = limits
        self.secure = secure
        self.logins = RateLimit(limits.logins_per_minute, 60.0)
        self.uploads = RateLimit(limits.uploads_per_hour, 3600.0)
        self.upload_addresses = RateLimit(limits.uploads_per_address_hour, 3600.0)
        self.worker = Worker(folder)
        self.env = Environment(
            loader=ChoiceLoader([FileSystemLoader(TEMPLATES), FileSystemLoader(WEB_TEMPLATES)]),
            autoescape=select_autoescape(["html"]),
        )
        self.env.filters["when"] = lambda t: time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(t))

    # ------------------------------------------------------------------ sessions
    def who(self, request: Request) -> str | None:
        """The logged-in entrant, or None (a session whose token was rotated or revoked is ended)."""
        name = request.session.get("who")
        selector = request.session.get("sel")
        if not isinstance(name, str) or not isinstance(selector, str):
            return None
        if not self.db.session_valid(name, selector):
            request.session.clear()
            return None
        return name

    def csrf(self, request: Request) -> str:
        """The session's CSRF token (made on first use)."""
        token = request.session.get("csrf")
        if not isinstance(token, str):
            token = secrets.token_urlsafe(32)
            request.session["csrf"] = token
        return token

    def cross_site(self, request: Request, form: Any) -> str | None:
        """Why a form POST is refused as cross-site, or None."""
        origin = request.headers.get("origin")
        if origin is not None and origin != f"{request.url.scheme}://{request.url.netloc}":
            return f"a form posted from {origin[:80]} is refused: post it from this site's own page"
        expected = request.session.get("csrf")
        given = form.get("csrf") if form is not None else None
        if (
            not isinstance(expected, str)
            or not isinstance(given, str)
            or not hmac.compare_digest(expected, given)
        ):
            return "the form's CSRF token is missing or wrong: reload the page and send it again"
        return None

    def page(
        self, template: str, status: int = 200, request: Request | None = None, **context: Any
    ) -> HTMLResponse:
        """A portal page rendered with the public site's frame."""
        who = self.who(request) if request is not None else None
        csrf = self.csrf(request) if request is not None else ""
        html = self.env.get_template(template).render(
            links=LINKS, live=False, title=context.pop("title", "Portal"), who=who, csrf=csrf, **context
        )
        return HTMLResponse(html, status, headers=PAGE_HEADERS)

    def message(self, request: Request, status: int, text: str) -> HTMLResponse:
        """A page of one line (an error, a refusal)."""
        return self.page("portal_message.html", status, request, title="Portal", text=text)

    # ------------------------------------------------------------------ uploads
    async def accept(self, request: Request, name: str) -> tuple[int, dict[str, Any]]:
        """One upload, by form or API: the status and JSON of the answer."""
        address = _address(request)
        length = request.headers.get("content-length")
        refused: str | None = None
        status = 400
        if not allow_all((self.uploads, f"account:{name}"), (self.upload_addresses, f"address:{address}")):
            refused, status = (
                f"too many uploads: at most {self.limits.uploads_per_hour} an hour per entrant and "
                f"{self.limits.uploads_per_address_hour} per address; try again later",
                429,
            )
        elif self.worker.jobs.qsize() >= MAX_QUEUED:
            refused, status = (
                f"the portal is checking {MAX_QUEUED} submissions already: try again in a few minutes",
                503,
            )
        elif length is None or not length.isdigit():
            refused, status = "send the upload with a Content-Length", 411
        elif int(length) > MAX_ARCHIVE_BYTES + 64 * 1024:
            refused, status = f"the upload is {length} bytes, more than {MAX_ARCHIVE_BYTES >> 20} MiB", 413
        data = b""
        if refused is None:
            try:
                form = await request.form(max_files=1, max_fields=4)
            except Exception as exc:  # a malformed multipart body
                form = None
                refused = f"the upload is not a multipart form with a 'bot' file ({type(exc).__name__})"
            upload = form.get("bot") if form is not None else None
            if form is not None and request.url.path != "/api/submissions":
                refused = self.cross_site(request, form)
                status = 403 if refused else status
            if refused is None:
                if upload is None or isinstance(upload, str):
                    refused = "the upload has no file field 'bot': send -F bot=@bot.tar.gz"
                else:
                    data = await upload.read(MAX_ARCHIVE_BYTES + 1)
            if form is not None:
                await form.close()
        checked: CheckedArchive | None = None
        if refused is None:
            try:
                checked = await asyncio.to_thread(check_archive, data)
            except UploadError as exc:
                refused = str(exc)
        if refused is not None or checked is None:
            why = refused or "refused"
            self.db.refused(name, len(data), address, why)
            log.info("portal_upload_refused", entrant=name, address=address, why=why)
            return status, {"error": why}
        sid = self.db.add_submission(name, len(data), address)
        self.worker.jobs.put((sid, name, checked))
        submission = self.db.submission(sid)
        assert submission is not None
        return 202, {**submission.to_json(), "status_url": f"/me/submissions/{sid}"}

    def bearer(self, request: Request) -> str | None:
        """The entrant of the request's ``Authorization: Bearer`` token, or None."""
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token:
            return None
        account = self.db.authenticate(token)
        return None if account is None else account.name

    # ------------------------------------------------------------------ the entrant's own data
    def own(self, name: str) -> dict[str, Any]:
        """What ``/me`` shows of the league (run in a thread: the official table is refitted)."""
        with LeagueStore.open(self.folder, read_only=True) as store:
            versions = store.versions(entrant=name)
            ids = {v.id for v in versions}
            rows = [r for r in league_table(store, everyone=True) if r.version in ids] if versions else []
            games = []
            if versions:
                for game in reversed(list_games(store, bot=name)):
                    seats = [s for s, who in enumerate(game["seats"]) if who in ids]
                    games.append({**game, "mine": seats})
                    if len(games) >= 60:
                        break
        return {"versions": versions, "table": rows, "games": games}

    def own_version(self, name: str, vid: str) -> Version | None:
        """``vid`` if it is one of ``name``'s versions."""
        with LeagueStore.open(self.folder, read_only=True) as store:
            found = [v for v in store.versions(entrant=name) if v.id == vid]
        return found[0] if found else None

    def own_log(self, name: str, key: str, seat: int) -> tuple[int, str]:
        """The log of ``name``'s bot at ``seat`` of stored game ``key``, or why not."""
        with LeagueStore.open(self.folder, read_only=True) as store:
            found = [data for k, _b, _v, data in store.games() if k == key]
            mine = {v.id for v in store.versions(entrant=name)}
        if not found:
            return 404, f"no stored game {key!r}: a block's games are shown once every rotation is played"
        seats = found[0]["seats"]
        if not 0 <= seat < len(seats):
            return 404, f"game {key} has no seat {seat}"
        if seats[seat] not in mine:
            return 403, f"seat {seat} of {key} is not your bot's: you see only your own bot's logs"
        path = self.folder / "logs" / seats[seat] / f"{key}-s{seat}.log"
        try:
            with path.open("rb") as handle:
                return 200, handle.read(MAX_SHOWN).decode("utf-8", errors="replace")
        except OSError:
            return 404, f"the log of seat {seat} of {key} is not kept"


def make_portal_app(
    folder: Path, limits: Limits | None = None, secure: bool = True
) -> tuple[Starlette, Portal]:
    """The portal over the league in ``folder``, and its state (start its worker; stop it after)."""
    folder = folder.absolute()  # the snapshots' paths are bound into sandboxes from anywhere
    portal = Portal(folder, limits or Limits(), secure)
    public = make_app(folder, LogPolicy.NEVER)

    def need_login(request: Request) -> Response:
        return RedirectResponse("/login", 303)

    async def login_page(request: Request) -> Response:
        if portal.who(request) is not None:
            return RedirectResponse("/me", 303)
        return portal.page(
            "portal_login.html", request=request, title="Sign in", invites=portal.db.open_invites()
        )

    async def login(request: Request) -> Response:
        address = _address(request)
        form = await request.form(max_files=0, max_fields=4)
        refused = portal.cross_site(request, form)
        if refused is not None:
            portal.db.audit("?", "login_refused", {"why": refused}, address)
            return portal.message(request, 403, refused)
        token = str(form.get("token", ""))
        # Per address, and per account (the token's selector: guesses at a known account's secret).
        selector = token.strip()[4:16]
        if not allow_all((portal.logins, f"address:{address}"), (portal.logins, f"selector:{selector}")):
            portal.db.audit("?", "login_limited", {"selector": selector}, address)
            return portal.message(
                request,
                429,
                f"too many sign-ins from {address} or for this account: at most "
                f"{limits_of().logins_per_minute} a minute; try again in a minute",
            )
        account = portal.db.authenticate(token)
        if account is None:
            portal.db.audit("?", "login_failed", "", address)
            return portal.message(
                request,
                401,
                "that token is wrong, rotated or revoked: ask the organiser for your current one",
            )
        request.session.clear()
        request.session.update(
            {"who": account.name, "sel": account.selector, "csrf": secrets.token_urlsafe(32)}
        )
        portal.db.audit(account.name, "login", "", address)
        return RedirectResponse("/me", 303)

    def limits_of() -> Limits:
        return portal.limits

    async def logout(request: Request) -> Response:
        form = await request.form(max_files=0, max_fields=4)
        refused = portal.cross_site(request, form)
        if refused is not None:
            return portal.message(request, 403, refused)
        request.session.clear()
        return RedirectResponse("/login", 303)

    async def register_page(request: Request) -> Response:
        if not portal.db.open_invites():
            return portal.message(request, 404, "registration is closed: the organiser creates accounts")
        return portal.page("portal_register.html", request=request, title="Register")

    async def register(request: Request) -> Response:
        address = _address(request)
        form = await request.form(max_files=0, max_fields=4)
        refused = portal.cross_site(request, form)
        if refused is not None:
            return portal.message(request, 403, refused)
        if not portal.logins.allow(f"address:{address}"):
            return portal.message(request, 429, f"too many attempts from {address}: try again in a minute")
        try:
            token = portal.db.register(str(form.get("invite", "")), str(form.get("name", "")), address)
        except PortalError as exc:
            portal.db.audit("?", "register_failed", {"why": str(exc)}, address)
            return portal.message(request, 400, str(exc))
        return portal.page("portal_token.html", request=request, title="Your token", token=token)

    async def me(request: Request) -> Response:
        name = portal.who(request)
        if name is None:
            return need_login(request)
        data = await asyncio.to_thread(portal.own, name)
        data["submissions"] = portal.db.submissions(name)  # the portal's connection: this thread only
        return portal.page("portal_me.html", request=request, title=f"{name} · portal", name=name, **data)

    async def submit_form(request: Request) -> Response:
        name = portal.who(request)
        if name is None:
            return portal.message(request, 401, "sign in first: your session ended or was never made")
        status, body = await portal.accept(request, name)
        if status != 202:
            return portal.message(request, status, body["error"])
        return RedirectResponse(f"/me/submissions/{body['id']}", 303)

    def own_submission(request: Request, name: str) -> Submission | None:
        raw = str(request.path_params["sid"])
        found = portal.db.submission(int(raw)) if raw.isdigit() else None
        return found if found is not None and found.account == name else None

    async def submission_page(request: Request) -> Response:
        name = portal.who(request)
        if name is None:
            return need_login(request)
        found = own_submission(request, name)
        if found is None:
            return portal.message(request, 404, "no submission of yours by that number")
        kit = load_report(portal.folder, name, found.id)
        return portal.page(
            "portal_submission.html", request=request, title=f"submission {found.id}", s=found, kit=kit
        )

    async def submission_json(request: Request) -> Response:
        name = portal.who(request)
        if name is None:
            return JSONResponse({"error": "sign in first"}, 401)
        found = own_submission(request, name)
        if found is None:
            return JSONResponse({"error": "no submission of yours by that number"}, 404)
        return JSONResponse(found.to_json(), headers={"Cache-Control": "no-store"})

    async def own_log(request: Request) -> Response:
        name = portal.who(request)
        if name is None:
            return PlainTextResponse("sign in first\n", 401)
        raw = str(request.path_params["seat"])
        if not raw.isdigit():
            return PlainTextResponse(f"seat must be a number, not {raw!r}\n", 400)
        status, text = await asyncio.to_thread(portal.own_log, name, request.path_params["key"], int(raw))
        return PlainTextResponse(
            text if status == 200 else text + "\n", status, headers={"Cache-Control": "no-store"}
        )

    async def own_files(request: Request) -> Response:
        name = portal.who(request)
        if name is None:
            return PlainTextResponse("sign in first\n", 401)
        vid = request.path_params["vid"]
        version = portal.own_version(name, vid)
        if version is None or version.spec.snapshot is None:
            return PlainTextResponse(
                f"{vid} is not a submitted version of yours: you see only your own files\n", 403
            )
        root = version.spec.snapshot / "0"
        rel = request.path_params.get("path", "")
        if not rel:
            listing = sorted(
                str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and not p.is_symlink()
            )
            return PlainTextResponse("\n".join(listing) + "\n", headers={"Cache-Control": "no-store"})
        target = (root / rel).resolve()
        if root.resolve() not in target.parents or not target.is_file() or (root / rel).is_symlink():
            return PlainTextResponse(f"{rel} is not a file of {vid}\n", 404)
        with target.open("rb") as handle:
            body = handle.read(MAX_SHOWN)
        return Response(body, media_type="text/plain; charset=utf-8", headers={"Cache-Control": "no-store"})

    async def api_submit(request: Request) -> Response:
        name = portal.bearer(request)
        if name is None:
            portal.db.audit("?", "api_refused", "wrong, rotated or revoked token", _address(request))
            return JSONResponse(
                {"error": "the token is wrong, rotated or revoked: send Authorization: Bearer YOUR_TOKEN"},
                401,
            )
        status, body = await portal.accept(request, name)
        return JSONResponse(body, status)

    async def api_submission(request: Request) -> Response:
        name = portal.bearer(request)
        if name is None:
            return JSONResponse({"error": "the token is wrong, rotated or revoked"}, 401)
        found = own_submission(request, name)
        if found is None:
            return JSONResponse({"error": "no submission of yours by that number"}, 404)
        return JSONResponse(found.to_json())

    routes = [
        Route("/login", login_page, methods=["GET"]),
        Route("/login", login, methods=["POST"]),
        Route("/logout", logout, methods=["POST"]),
        Route("/register", register_page, methods=["GET"]),
        Route("/register", register, methods=["POST"]),
        Route("/me", me, methods=["GET"]),
        Route("/me/submit", submit_form, methods=["POST"]),
        Route("/me/submissions/{sid}.json", submission_json, methods=["GET"]),
        Route("/me/submissions/{sid}", submission_page, methods=["GET"]),
        Route("/me/log/{key}/{seat}", own_log, methods=["GET"]),
        Route("/me/files/{vid}", own_files, methods=["GET"]),
        Route("/me/files/{vid}/{path:path}", own_files, methods=["GET"]),
        Route("/api/submissions", api_submit, methods=["POST"]),
        Route("/api/submissions/{sid}", api_submission, methods=["GET"]),
        Mount("/", app=public),
    ]

    async def server_error(request: Request, exc: Exception) -> Response:
        log.error("portal_page_failed", path=request.url.path, error=repr(exc))
        return PlainTextResponse("this page failed; the portal's log has the details\n", 500)

    app = Starlette(
        routes=routes,
        exception_handlers={500: server_error, Exception: server_error},
        middleware=[
            Middleware(
                SessionMiddleware,
                secret_key=portal.db.session_key(),
                session_cookie=COOKIE,
                max_age=SESSION_S,
                same_site="strict",
                https_only=secure,
            )
        ],
    )
    return app, portal
