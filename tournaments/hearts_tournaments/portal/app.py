"""The portal: ``hearts web LEAGUE --submissions``, the public pages plus each entrant's own.

Routes of its own (every other path is the public site, unchanged, except that it shows no bot
logs at all: an entrant sees logs only of its own seats, logged in):

* ``GET/POST /login``: a personal access token for a session. The cookie (signed with the
  portal's key by Starlette's ``SessionMiddleware``, ``HttpOnly``, ``SameSite=Strict`` and
  ``Secure`` unless ``--insecure-cookies``) holds a random session id and the form's CSRF token;
  the session itself is a row of ``portal.sqlite`` (:meth:`.accounts.PortalStore.open_session`),
  so ``POST /logout`` ends it for every copy of the cookie, and rotating or revoking the token
  ends all the account's sessions at once.
* ``GET/POST /register``: an invite code for an account (only while an invite is unused).
* ``GET /me``: the entrant's description and rank (``2nd of 14`` active entrants), each played
  version's rating chart, progress to settled, decision times and faults
  (:mod:`hearts_tournaments.league.profile`), versions and status, ratings with intervals,
  submissions, games (replays from its own seat), the upload form. ``POST /me/submit``: the form's upload.
* ``GET /me/submissions/ID`` (and ``.json``): a submission's status, polled by the page.
* ``GET /me/feed.atom``: the entrant's notifications (:mod:`.notify`) as an Atom feed;
  ``POST /me/feed`` makes its feed URL, ``GET /feed/NAME/TOKEN.atom``, the same feed for a feed
  reader without cookies (the token shown once, stored hashed; a new one ends the old one).
  ``POST /me/webhook`` sets (or, empty, removes) the entrant's webhook (:mod:`.webhooks`): its
  secret shown once; the portal's notifier thread POSTs each notice to it, signed.
* ``GET /me/log/KEY/SEAT``: its own bot's log of a stored game (a block is stored once every
  rotation of its deal is played); another seat's is refused. ``GET /me/files/VERSION[/PATH]``:
  its own version's files as stored.
* ``POST /api/submissions`` and ``GET /api/submissions/ID`` with ``Authorization: Bearer TOKEN``.
* Any other ``/api/`` path: ``{"error": "..."}`` with 404 or 405, never an HTML page.
* ``GET /help``, public: what goes in ``bot.toml``, the protocols, the runtimes, the limits
  (the archive's, the uploads', the league's clock), and how to test a bot before sending it.
  The portal's refusals point to it.
* ``GET /runtimes`` (and ``/runtimes.json``), public: the runtimes a bot may name in ``bot.toml``
  and whether this machine has each (:mod:`hearts_tournaments.arena.runtimes`).

Every form carries a per-session CSRF token, and a POST whose ``Origin`` is another site is
refused. Failed sign-ins (by the form or by Bearer) are limited per address and per token
selector, uploads per account and per address. Every body is read within a byte cap and a time
limit whatever its headers say (:mod:`.intake`). Every login, submission and account change is
in the audit log (``hearts league entrant audit``); refusals anyone can repeat are counted in
one row per kind, address and hour.

An upload holds a place of the spool (``LEAGUE/spool``: a fixed number, two per entrant) from its
first byte: its file is written there as it arrives, then checked (:func:`.uploads.check_archive`,
one upload at a time, reading the file as a stream) once its token or session is known to be
still valid; an accepted one is queued for one worker thread, which unpacks, checks in the
sandbox and adds it as the entrant's next version (:func:`.uploads.submit_version`), gives its
place back, then follows its league validation. The portal's memory does not grow with the
uploads it takes.
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
from collections.abc import Callable, Mapping
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
from starlette.routing import Match, Mount, Route

from hearts_tournaments.arena import runtimes
from hearts_tournaments.arena.bots import BOT_NAME_PATTERN
from hearts_tournaments.league import profile
from hearts_tournaments.league.commands import list_games
from hearts_tournaments.league.play import OFFICIAL_TABLES
from hearts_tournaments.league.ratings import TableRow
from hearts_tournaments.league.store import LeagueStore, Version, frozen_refusal
from hearts_tournaments.portal import notify, uploads, webhooks
from hearts_tournaments.portal.accounts import (
    ERROR,
    SESSION_S,
    TOKEN_PREFIX,
    Account,
    PortalError,
    PortalStore,
    Submission,
)
from hearts_tournaments.portal.intake import BODY_SECONDS, Place, Refused, Spool, read_form, read_upload
from hearts_tournaments.portal.kit_reports import load_report
from hearts_tournaments.portal.uploads import (
    MAX_ENTRANT_BYTES,
    CheckedArchive,
    UploadError,
    abandon_unchecked,
    check_archive,
    storage_refusal,
    submit_version,
    sync_statuses,
)
from hearts_tournaments.tournament.report import interval_text
from hearts_tournaments.web.app import make_app
from hearts_tournaments.web.links import Links
from hearts_tournaments.web.source import LogPolicy

log = structlog.get_logger(__name__)
TEMPLATES = Path(__file__).parent / "templates"
WEB_TEMPLATES = Path(__file__).parent.parent / "web" / "templates"
COOKIE = "hearts_portal"
#: Every method an ``/api/`` path may be asked with: each gets a JSON answer.
ALL_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
#: Seconds between the worker's looks at the league's validations.
SYNC_S = 1.0
#: An entrant's versions (the newest that played) whose chart, timing and faults ``/me`` shows.
MAX_PROFILED = 3
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
    """What one client may take: failed sign-ins a minute per address and per token selector,
    uploads an hour per account and per address, seconds a request's body may take to arrive,
    bytes of files one entrant's versions may keep."""

    logins_per_minute: int = 10
    uploads_per_hour: int = 12
    uploads_per_address_hour: int = 30
    body_seconds: float = BODY_SECONDS
    entrant_bytes: int = MAX_ENTRANT_BYTES


class RateLimit:
    """A sliding-window counter per key (in memory: one portal process); keys whose window is
    empty are forgotten, so many keys tried once cost nothing for long."""

    def __init__(self, limit: int, window_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.limit = limit
        self.window = window_s
        self.clock = clock
        self.seen: dict[str, collections.deque[float]] = {}
        self.sweep_at = 1024

    def _times(self, key: str) -> collections.deque[float]:
        times = self.seen.setdefault(key, collections.deque())
        while times and times[0] <= self.clock() - self.window:
            times.popleft()
        return times

    def full(self, key: str) -> bool:
        """Whether ``key`` is at its limit."""
        return len(self._times(key)) >= self.limit

    def add(self, key: str) -> None:
        """Counts one more for ``key``."""
        self._times(key).append(self.clock())
        if len(self.seen) >= self.sweep_at:
            for stale in [k for k in self.seen if not self._times(k)]:
                del self.seen[stale]
            self.sweep_at = max(1024, 2 * len(self.seen))

    def allow(self, key: str) -> bool:
        """Counts one more for ``key``; False when it is over the limit (not counted then)."""
        return allow_all((self, key))


def allow_all(*limits: tuple[RateLimit, str]) -> bool:
    """Counts one more for every (limit, key) when none is at its limit; else counts none."""
    if any(limit.full(key) for limit, key in limits):
        return False
    for limit, key in limits:
        limit.add(key)
    return True


@dataclass(frozen=True, slots=True)
class Job:
    """An accepted upload waiting for the worker: its submission, entrant, spool place, checks."""

    submission: int
    entrant: str
    place: Place
    checked: CheckedArchive


class Worker:
    """One thread that checks accepted uploads in turn and follows their league validation."""

    def __init__(self, folder: Path, spool: Spool, keep_bytes: int) -> None:
        self.folder = folder
        self.spool = spool
        self.keep_bytes = keep_bytes
        self.jobs: queue.Queue[Job | None] = queue.Queue()
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
                        submit_version(
                            self.folder,
                            portal,
                            job.submission,
                            job.entrant,
                            job.place.path,
                            job.checked,
                            lambda line: log.info("portal", line=line),
                            self.keep_bytes,
                        )
                    sync_statuses(self.folder, portal)
                except Exception as exc:  # the worker goes on with the next submission
                    log.error("portal_worker_failed", error=repr(exc))
                    if job is not None:
                        with contextlib.suppress(Exception):
                            portal.set_submission(
                                job.submission, ERROR, "the portal failed while checking it: submit it again"
                            )
                finally:
                    if job is not None:
                        self.spool.give_back(job.place)


def _address(request: Request) -> str:
    return request.client.host if request.client is not None else "?"


class Portal:
    """The state behind the routes: the folder, the portal database, limits, the spool, the worker."""

    def __init__(self, folder: Path, limits: Limits, secure: bool, dev_webhooks: bool = False) -> None:
        self.folder = folder
        self.db = PortalStore(folder)
        #: ``--dev-webhooks``: a webhook may also be http:// to 127.0.0.1 or localhost.
        self.dev_webhooks = dev_webhooks
        self.hooks = webhooks.Hooks(folder)
        self.notifier = webhooks.Notifier(folder, dev_webhooks)
        self.limits = limits
        self.secure = secure
        self.failures = RateLimit(limits.logins_per_minute, 60.0)
        self.uploads = RateLimit(limits.uploads_per_hour, 3600.0)
        self.upload_addresses = RateLimit(limits.uploads_per_address_hour, 3600.0)
        self.spool = Spool(folder)
        self.checking = asyncio.Lock()  # one archive checked at a time
        self.worker = Worker(folder, self.spool, limits.entrant_bytes)
        #: Seconds since the epoch now: against the season's freeze (a test injects its own).
        self.clock: Callable[[], float] = time.time
        #: The official table with the league's state it was fitted at (LeagueStore.state): /me
        #: refits it once per stored block or status change, not once per visit.
        self.env = Environment(
            loader=ChoiceLoader([FileSystemLoader(TEMPLATES), FileSystemLoader(WEB_TEMPLATES)]),
            autoescape=select_autoescape(["html"]),
        )
        self.env.filters["when"] = lambda t: time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(t))
        self.env.filters["interval"] = interval_text
        self.env.globals["portal"] = True

    # ------------------------------------------------------------------ sessions
    def who(self, request: Request) -> str | None:
        """The signed-in entrant, or None (signed out, expired, or its token rotated or revoked)."""
        sid = request.session.get("sid")
        if not isinstance(sid, str):
            return None
        name = self.db.session(sid)
        if name is None:
            request.session.pop("sid", None)
        return name

    def sign_in(self, token: str, address: str) -> Account | Refused:
        """The live account whose token this is, or why not.

        Failures count per address and per the token's selector (the part that names the
        account), :attr:`Limits.logins_per_minute` a minute each. An address past its limit is
        refused whatever it sends; a selector past its limit refuses only wrong tokens, so
        guesses at an account's token never lock its owner out.
        """
        limit = self.limits.logins_per_minute
        if self.failures.full(f"address:{address}"):
            return Refused(
                429,
                f"too many failed sign-ins from {address}: at most {limit} a minute; try again in a minute",
            )
        account = self.db.authenticate(token)
        if account is not None:
            return account
        selector = f"selector:{token.strip()[len(TOKEN_PREFIX) : len(TOKEN_PREFIX) + 12]}"
        if self.failures.full(selector):
            return Refused(
                429,
                f"too many failed sign-ins for this account: at most {limit} a minute; try again in a minute",
            )
        self.failures.add(f"address:{address}")
        self.failures.add(selector)
        return Refused(401, "that token is wrong, rotated or revoked: ask the organiser for your current one")

    def csrf(self, request: Request) -> str:
        """The session's CSRF token (made on first use)."""
        token = request.session.get("csrf")
        if not isinstance(token, str):
            token = secrets.token_urlsafe(32)
            request.session["csrf"] = token
        return token

    def foreign(self, request: Request) -> str | None:
        """Why a POST is refused for its ``Origin`` (another site's), or None."""
        origin = request.headers.get("origin")
        if origin is not None and origin != f"{request.url.scheme}://{request.url.netloc}":
            return f"a form posted from {origin[:80]} is refused: post it from this site's own page"
        return None

    def cross_site(self, request: Request, form: Mapping[str, str]) -> str | None:
        """Why a form POST is refused as cross-site, or None."""
        foreign = self.foreign(request)
        if foreign is not None:
            return foreign
        expected = request.session.get("csrf")
        given = form.get("csrf")
        if (
            not isinstance(expected, str)
            or not isinstance(given, str)
            or not hmac.compare_digest(expected.encode(), given.encode())
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
    async def accept(
        self, request: Request, name: str, still: Callable[[], str | None], form: bool
    ) -> tuple[int, dict[str, Any]]:
        """One upload, by form (``form``: its CSRF field checked) or API: the status and JSON of
        the answer. ``still`` says why the token or session that sent it no longer holds, or
        None: asked once the whole body has arrived, before anything is queued."""
        address = _address(request)
        place: Place | None = None
        size = 0
        try:
            foreign = self.foreign(request) if form else None
            if foreign is not None:  # refused before a byte of its body is read
                raise Refused(403, foreign)
            frozen = await asyncio.to_thread(self.closed)
            if frozen is not None:
                raise Refused(403, frozen)
            place = self.spool.take(name)
            if not allow_all(
                (self.uploads, f"account:{name}"), (self.upload_addresses, f"address:{address}")
            ):
                raise Refused(
                    429,
                    f"too many uploads: at most {self.limits.uploads_per_hour} an hour per entrant and "
                    f"{self.limits.uploads_per_address_hour} per address; try again later",
                )
            upload = await read_upload(request, place.path, self.limits.body_seconds)
            size = upload.file_bytes or 0
            refused = self.cross_site(request, upload.fields) if form else None
            if refused is not None:
                raise Refused(403, refused)
            async with self.checking:
                checked = await asyncio.to_thread(check_archive, place.path)
                adding = checked.unpacked_bytes + self.spool.waiting_bytes(name, place)
                too_much = await asyncio.to_thread(self._storage, name, adding)
                if too_much is not None:
                    raise Refused(413, too_much)
                self.spool.reserve(place, checked.unpacked_bytes)
            # Asked now, with the whole body here and nothing awaited before it is queued.
            ended = still()
            if ended is not None:
                raise Refused(401, ended)
            sid = self.db.add_submission(name, size, address)
            self.worker.jobs.put(Job(sid, name, place, checked))
            place = None  # the worker's now: it gives the place back
        except (Refused, UploadError, OSError) as exc:
            if isinstance(exc, OSError):  # the spool's disk: nothing the entrant can mend
                log.error("portal_spool_failed", entrant=name, error=repr(exc))
                exc = Refused(503, f"the portal cannot store uploads now ({exc.strerror}): try again later")
            status, why = (exc.status, exc.why) if isinstance(exc, Refused) else (400, str(exc))
            if status == 429:  # as often as the entrant likes: counted, not listed
                self.db.refusal(name, "submission_limited", address, {"why": why})
            else:
                self.db.refused(name, size, address, why)
                log.info("portal_upload_refused", entrant=name, address=address, why=why)
            return status, {"error": why}
        finally:
            if place is not None:
                self.spool.give_back(place)
        submission = self.db.submission(sid)
        assert submission is not None
        return 202, {**submission.to_json(), "status_url": f"/me/submissions/{sid}"}

    def closed(self) -> str | None:
        """Why no submission is accepted now (the season froze), or None."""
        with LeagueStore.open(self.folder, read_only=True) as store:
            return frozen_refusal(store.frozen_at(), self.clock())

    def _storage(self, name: str, adding: int) -> str | None:
        with LeagueStore.open(self.folder, read_only=True) as store:
            return storage_refusal(store, name, adding, self.limits.entrant_bytes)

    def bearer(self, request: Request) -> Account | Refused:
        """The account of the request's ``Authorization: Bearer`` token, or why not (the refusal
        is in the audit log, counted)."""
        address = _address(request)
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not token:
            answer: Account | Refused = Refused(
                401, "no token: send Authorization: Bearer YOUR_TOKEN (the token the organiser gave you)"
            )
        else:
            answer = self.sign_in(token, address)
        if isinstance(answer, Refused):
            action = "api_limited" if answer.status == 429 else "api_refused"
            self.db.refusal("?", action, address, {"why": answer.why})
        return answer

    # ------------------------------------------------------------------ the entrant's own data
    def own(self, name: str) -> dict[str, Any]:
        """What ``/me`` shows of the league (run in a thread: the official table is refitted)."""
        with LeagueStore.open(self.folder, read_only=True) as store:
            versions = store.versions(entrant=name)
            ids = {v.id for v in versions}
            table = self.official_table(store) if versions else []
            rows = [r for r in table if r.version in ids]
            entrant_of = {v.id: v.entrant for v in store.versions()}
            standing = profile.entrant_standing(table, entrant_of, name)
            played = [v for v in reversed(versions) if store.history(v.id)]
            shown = [profile.version_profile(store, v, rows, own=True) for v in played[:MAX_PROFILED]]
            games = []
            if versions:
                for game in reversed(list_games(store, bot=name)):
                    seats = [s for s, who in enumerate(game["seats"]) if who in ids]
                    games.append({**game, "mine": seats})
                    if len(games) >= 60:
                        break
            frozen_at = store.frozen_at()
        closed = frozen_refusal(frozen_at, self.clock())
        return {
            "versions": versions,
            "table": rows,
            "games": games,
            "frozen_at": frozen_at,
            "closed": closed,
            "standing": standing,
            "description": profile.description(versions[-1]) if versions else "",
            "profiles": shown,
        }

    def official_table(self, store: LeagueStore) -> list[TableRow]:
        """The league's official table, fitted again only when the league's state changed (the
        memo the league's public pages share, :data:`~hearts_tournaments.league.play.OFFICIAL_TABLES`)."""
        return OFFICIAL_TABLES.table(store)

    def feed(self, name: str, self_url: str, base: str) -> bytes:
        """``name``'s notices as an Atom feed (run in a thread)."""
        with LeagueStore.open(self.folder, read_only=True) as store:
            with PortalStore(self.folder) as portal:  # this thread's own connection
                found, _ = notify.notices(store, name, portal=portal)
                account = portal.account(name)
            league_id = store.meta("league_id")
        return notify.atom_feed(
            found,
            feed_id=f"urn:hearts:{league_id}:{name}",
            title=f"{name}: notifications of the league",
            self_url=self_url,
            page_url=f"{base}/me",
            updated=account.created if account is not None else 0.0,
        )

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
    folder: Path, limits: Limits | None = None, secure: bool = True, dev_webhooks: bool = False
) -> tuple[Starlette, Portal]:
    """The portal over the league in ``folder``, and its state (start its worker and notifier;
    stop them after)."""
    folder = folder.absolute()  # the snapshots' paths are bound into sandboxes from anywhere
    portal = Portal(folder, limits or Limits(), secure, dev_webhooks)
    public = make_app(folder, LogPolicy.NEVER, portal=True)

    def need_login(request: Request) -> Response:
        return RedirectResponse("/login", 303)

    async def login_page(request: Request) -> Response:
        if portal.who(request) is not None:
            return RedirectResponse("/me", 303)
        return portal.page(
            "portal_login.html", request=request, title="Sign in", invites=portal.db.open_invites()
        )

    async def form_of(request: Request, anonymous: str) -> dict[str, str] | Response:
        """A small form's fields, or the answer refusing it (``anonymous``: the audit's action)."""
        address = _address(request)
        try:
            fields = await read_form(request, portal.limits.body_seconds)
        except Refused as exc:
            portal.db.refusal("?", "body_refused", address, {"why": exc.why})
            return portal.message(request, exc.status, exc.why)
        refused = portal.cross_site(request, fields)
        if refused is not None:
            portal.db.refusal("?", anonymous, address, {"why": refused})
            return portal.message(request, 403, refused)
        return fields

    async def login(request: Request) -> Response:
        address = _address(request)
        fields = await form_of(request, "login_refused")
        if isinstance(fields, Response):
            return fields
        token = fields.get("token", "")
        signed = portal.sign_in(token, address)
        if isinstance(signed, Refused):
            action = "login_limited" if signed.status == 429 else "login_failed"
            portal.db.refusal("?", action, address, {"selector": token.strip()[4:16]})
            return portal.message(request, signed.status, signed.why)
        request.session.clear()
        request.session.update({"sid": portal.db.open_session(signed), "csrf": secrets.token_urlsafe(32)})
        portal.db.audit(signed.name, "login", "", address)
        return RedirectResponse("/me", 303)

    async def logout(request: Request) -> Response:
        fields = await form_of(request, "logout_refused")
        if isinstance(fields, Response):
            return fields
        name = portal.who(request)
        sid = request.session.get("sid")
        if isinstance(sid, str):
            portal.db.end_session(sid)
        if name is not None:
            portal.db.audit(name, "logout", "", _address(request))
        request.session.clear()
        return RedirectResponse("/login", 303)

    async def register_page(request: Request) -> Response:
        if not portal.db.open_invites():
            return portal.message(request, 404, "registration is closed: the organiser creates accounts")
        return portal.page(
            "portal_register.html", request=request, title="Register", name_pattern=BOT_NAME_PATTERN.pattern
        )

    async def register(request: Request) -> Response:
        address = _address(request)
        fields = await form_of(request, "register_refused")
        if isinstance(fields, Response):
            return fields
        if portal.failures.full(f"address:{address}"):
            why = f"too many failed attempts from {address}: try again in a minute"
            portal.db.refusal("?", "register_limited", address, {"why": why})
            return portal.message(request, 429, why)
        try:
            token = portal.db.register(fields.get("invite", ""), fields.get("name", ""), address)
        except PortalError as exc:
            portal.failures.add(f"address:{address}")
            portal.db.refusal("?", "register_failed", address, {"why": str(exc)})
            return portal.message(request, 400, str(exc))
        account = portal.db.authenticate(token)
        if account is not None:  # signed in as the login route does: /me opens without the token
            request.session.clear()
            sid = portal.db.open_session(account)
            request.session.update({"sid": sid, "csrf": secrets.token_urlsafe(32)})
            portal.db.audit(account.name, "login", "registered", address)
        base = f"{request.url.scheme}://{request.url.netloc}"
        return portal.page("portal_token.html", request=request, title="Your token", token=token, base=base)

    async def me(request: Request) -> Response:
        name = portal.who(request)
        if name is None:
            return need_login(request)
        data = await asyncio.to_thread(portal.own, name)
        data["submissions"] = portal.db.submissions(name)  # the portal's connection: this thread only
        data["feed_made"] = portal.db.feed_token_made(name)
        data["webhook"] = portal.hooks.webhook(name)
        data["deliveries"] = portal.hooks.deliveries(name, 10)
        data["dev_webhooks"] = portal.dev_webhooks
        return portal.page("portal_me.html", request=request, title=f"{name} · portal", name=name, **data)

    def base(request: Request) -> str:
        return f"{request.url.scheme}://{request.url.netloc}"

    def atom(body: bytes) -> Response:
        return Response(
            body,
            media_type="application/atom+xml; charset=utf-8",
            headers={"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"},
        )

    async def own_feed(request: Request) -> Response:
        name = portal.who(request)
        if name is None:
            return PlainTextResponse("sign in first, or use your feed URL (made on /me)\n", 401)
        return atom(await asyncio.to_thread(portal.feed, name, str(request.url), base(request)))

    async def secret_feed(request: Request) -> Response:
        name, token = str(request.path_params["account"]), str(request.path_params["token"])
        if not portal.db.feed_valid(name, token):
            portal.db.refusal("?", "feed_refused", _address(request), {"account": name[:40]})
            return PlainTextResponse(
                "no such feed: its URL is wrong or was replaced by a new one (see /me)\n", 404
            )
        return atom(await asyncio.to_thread(portal.feed, name, str(request.url), base(request)))

    async def new_feed(request: Request) -> Response:
        fields = await form_of(request, "feed_form_refused")
        if isinstance(fields, Response):
            return fields
        name = portal.who(request)
        if name is None:
            return portal.message(request, 401, "sign in first: your session ended or was never made")
        token = portal.db.new_feed_token(name, _address(request))
        url = f"{base(request)}/feed/{name}/{token}.atom"
        return portal.page("portal_feed.html", request=request, title="Your feed URL", url=url)

    async def set_webhook(request: Request) -> Response:
        fields = await form_of(request, "webhook_form_refused")
        if isinstance(fields, Response):
            return fields
        name = portal.who(request)
        if name is None:
            return portal.message(request, 401, "sign in first: your session ended or was never made")
        url = fields.get("url", "").strip()
        if url:
            to = await asyncio.to_thread(webhooks.target, url, portal.dev_webhooks)
            if isinstance(to, str):
                portal.db.audit(name, "webhook_refused", {"why": to}, _address(request))
                return portal.message(request, 400, to)
        secret = portal.hooks.set(name, url, time.time())
        portal.db.audit(
            name, "webhook_set" if url else "webhook_removed", {"url": url[:200]}, _address(request)
        )
        if secret is None:
            return RedirectResponse("/me#notifications", 303)
        return portal.page(
            "portal_webhook.html", request=request, title="Your webhook", url=url, secret=secret
        )

    async def submit_form(request: Request) -> Response:
        name = portal.who(request)
        if name is None:
            return portal.message(request, 401, "sign in first: your session ended or was never made")

        def still() -> str | None:
            if portal.who(request) == name:
                return None
            return (
                "your session ended while the upload arrived (signed out, or the token rotated or "
                "revoked): nothing was queued; sign in and send it again"
            )

        status, body = await portal.accept(request, name, still, form=True)
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
        kit = load_report(portal.db, found.id)
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
        account = portal.bearer(request)
        if isinstance(account, Refused):
            return JSONResponse({"error": account.why}, account.status)
        token = request.headers["authorization"].partition(" ")[2]

        def still() -> str | None:
            now = portal.db.authenticate(token)
            if now is not None and now.name == account.name:
                return None
            return (
                "the token was rotated or revoked while the upload arrived: nothing was queued; send "
                "it again with your current token"
            )

        status, body = await portal.accept(request, account.name, still, form=False)
        return JSONResponse(body, status)

    async def api_submission(request: Request) -> Response:
        account = portal.bearer(request)
        if isinstance(account, Refused):
            return JSONResponse({"error": account.why}, account.status)
        found = own_submission(request, account.name)
        if found is None:
            return JSONResponse({"error": "no submission of yours by that number"}, 404)
        return JSONResponse(found.to_json())

    async def runtimes_page(request: Request) -> Response:
        listed = [s.to_json() for s in runtimes.states(staleness=False)]
        return portal.page("portal_runtimes.html", request=request, title="Runtimes", runtimes=listed)

    async def runtimes_json(request: Request) -> Response:
        return JSONResponse([s.to_json() for s in runtimes.states(staleness=False)])

    async def help_page(request: Request) -> Response:
        with LeagueStore.open(portal.folder, read_only=True) as store:
            config = store.config
        return portal.page(
            "portal_help.html",
            request=request,
            title="Help",
            config=config,
            limits=portal.limits,
            entrant_mib=portal.limits.entrant_bytes >> 20,
            archive={
                "archive_mib": uploads.MAX_ARCHIVE_BYTES >> 20,
                "unpacked_mib": uploads.MAX_UNPACKED_BYTES >> 20,
                "files": uploads.MAX_FILES,
                "manifest_bytes": uploads.MAX_MANIFEST_BYTES,
                "keys": uploads.MANIFEST_KEYS,
            },
            runtimes=[s.to_json() for s in runtimes.states(staleness=False)],
            base=f"{request.url.scheme}://{request.url.netloc}",
            dev_webhooks=portal.dev_webhooks,
            webhook_timeout=f"{webhooks.TIMEOUT_S:g}",
            webhook_attempts=webhooks.ATTEMPTS,
        )

    async def api_unknown(request: Request) -> Response:
        """Any other ``/api/`` path: a JSON answer, never the public site's HTML page."""
        for route in api_routes:
            match, _ = route.matches(request.scope)
            if match is Match.PARTIAL:
                allowed = ", ".join(sorted(route.methods or ()))
                return JSONResponse(
                    {"error": f"{request.method} is not allowed on {request.url.path}: use {allowed}"},
                    405,
                    headers={"Allow": allowed},
                )
        return JSONResponse({"error": f"there is no API at {request.url.path}: see /help"}, 404)

    api_routes = [
        Route("/api/submissions", api_submit, methods=["POST"]),
        Route("/api/submissions/{sid}", api_submission, methods=["GET"]),
    ]

    routes = [
        Route("/runtimes", runtimes_page, methods=["GET"]),
        Route("/runtimes.json", runtimes_json, methods=["GET"]),
        Route("/login", login_page, methods=["GET"]),
        Route("/login", login, methods=["POST"]),
        Route("/logout", logout, methods=["POST"]),
        Route("/register", register_page, methods=["GET"]),
        Route("/register", register, methods=["POST"]),
        Route("/me", me, methods=["GET"]),
        Route("/me/submit", submit_form, methods=["POST"]),
        Route("/me/feed.atom", own_feed, methods=["GET"]),
        Route("/me/feed", new_feed, methods=["POST"]),
        Route("/me/webhook", set_webhook, methods=["POST"]),
        Route("/feed/{account}/{token}.atom", secret_feed, methods=["GET"]),
        Route("/me/submissions/{sid}.json", submission_json, methods=["GET"]),
        Route("/me/submissions/{sid}", submission_page, methods=["GET"]),
        Route("/me/log/{key}/{seat}", own_log, methods=["GET"]),
        Route("/me/files/{vid}", own_files, methods=["GET"]),
        Route("/me/files/{vid}/{path:path}", own_files, methods=["GET"]),
        Route("/help", help_page, methods=["GET"]),
        *api_routes,
        Route("/api/{rest:path}", api_unknown, methods=list(ALL_METHODS)),
        Mount("/", app=public),
    ]

    async def server_error(request: Request, exc: Exception) -> Response:
        log.error("portal_page_failed", path=request.url.path, error=repr(exc))
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": "this request failed; the portal's log has the details"}, 500)
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
