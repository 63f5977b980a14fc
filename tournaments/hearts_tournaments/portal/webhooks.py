"""An account's webhook: each notice (:mod:`.notify`) POSTed as JSON to the entrant's URL.

The entrant sets an ``https://`` URL on ``/me``; a URL whose host is (or resolves to) a private,
loopback, link-local or reserved address is refused, and so is any other scheme (a portal run
with ``--dev-webhooks`` also takes ``http://`` to 127.0.0.1 or localhost, to test a receiver).
Setting a URL draws a new secret, shown once; each body is signed with it::

    X-Hearts-Signature: sha256=<hex HMAC-SHA256(secret, body)>
    X-Hearts-Delivery: <the delivery's id, the same on every attempt>

A webhook is told what happens after it was set. Deliveries are rows of ``portal.sqlite``
(``deliveries``), made by the :class:`Notifier` thread as it reads the league: a restart goes on
with those pending. An attempt that gets no 2xx (a connection error, a timeout, another status)
is tried again after :data:`BACKOFF_S` seconds, doubled each time, :data:`ATTEMPTS` attempts in
all. Each attempt takes at most its timeout in all, reads at most :data:`MAX_ANSWER_BYTES` of the
answer (its status line), and connects to the address it checked (no second look-up a DNS
answer could change in between).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import hmac
import ipaddress
import json
import secrets
import socket
import sqlite3
import ssl
import threading
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import structlog

from hearts_tournaments.league.config import LeagueError
from hearts_tournaments.league.store import LeagueStore
from hearts_tournaments.portal import notify
from hearts_tournaments.portal.accounts import PORTAL_DB, PortalStore, immediate

log = structlog.get_logger(__name__)

#: Attempts of one delivery at most.
ATTEMPTS = 5
#: Seconds before the second attempt; each further one waits twice the one before.
BACKOFF_S = 30.0
#: Seconds one attempt may take in all (connect, send, the answer's status line).
TIMEOUT_S = 10.0
#: Bytes of a receiver's answer read at most (only its status line matters).
MAX_ANSWER_BYTES = 8192
#: Seconds between the notifier's looks at the league and at deliveries due.
POLL_S = 1.0
#: The longest webhook URL taken.
MAX_URL = 500
PENDING, DELIVERED, FAILED, DROPPED = "pending", "delivered", "failed", "dropped"
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS webhooks (
    account TEXT PRIMARY KEY,
    url TEXT NOT NULL,
    secret TEXT NOT NULL,
    made REAL NOT NULL,
    events_after INTEGER NOT NULL,
    commands_after INTEGER NOT NULL,
    final_seen INTEGER NOT NULL,
    audit_after INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS deliveries (
    id TEXT PRIMARY KEY,
    account TEXT NOT NULL,
    event TEXT NOT NULL,
    body BLOB NOT NULL,
    made REAL NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    due REAL NOT NULL,
    status TEXT NOT NULL,
    answer TEXT NOT NULL DEFAULT '',
    done REAL
);
CREATE INDEX IF NOT EXISTS deliveries_due ON deliveries (status, due);
"""


@dataclass(frozen=True, slots=True)
class Target:
    """Where a delivery goes: the URL's parts and the address checked for it."""

    https: bool
    host: str
    port: int
    path: str
    address: str


def signature(secret: str, body: bytes) -> str:
    """The ``X-Hearts-Signature`` header of ``body``."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def target(url: str, dev: bool) -> Target | str:
    """Where ``url`` delivers to, or why it is refused (one line: what, why, the fix).

    Resolves its host: every address it has must be public (with ``dev``: loopback too)."""
    shown = url[:80]
    rule = "an https:// URL" + (" (or http:// to 127.0.0.1 or localhost)" if dev else "")
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError:
        return f"webhook URL {shown!r} cannot be read: give {rule}"
    host = parts.hostname or ""
    if len(url) > MAX_URL or not url.isascii() or any(c.isspace() or ord(c) < 32 for c in url):
        return (
            f"webhook URL {shown!r} is too long or holds spaces or letters beyond ASCII: give {rule} of at "
            f"most {MAX_URL} characters, percent-encoded"
        )
    if not (parts.scheme == "https" or (parts.scheme == "http" and dev and host in LOCAL_HOSTS)):
        return (
            f"webhook URL {shown!r} is refused: only https:// is accepted (http:// only to 127.0.0.1 or "
            "localhost on a portal run with --dev-webhooks)"
        )
    if not host:
        return f"webhook URL {shown!r} names no host: give {rule}"
    if parts.username is not None or parts.password is not None:
        return f"webhook URL {shown!r} holds a user name or password: give {rule} without them"
    port = port or (443 if parts.scheme == "https" else 80)
    try:
        found = {str(info[4][0]) for info in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)}
    except (OSError, UnicodeError):
        return f"webhook URL host {host[:80]!r} does not resolve: check its spelling"
    for address in sorted(found):
        ip: ipaddress.IPv4Address | ipaddress.IPv6Address = ipaddress.ip_address(address.partition("%")[0])
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped  # ::ffff:10.0.0.1 is 10.0.0.1
        if not (ip.is_global and not ip.is_multicast) and not (dev and ip.is_loopback):
            return (
                f"webhook URL host {host[:80]!r} is a private, loopback or reserved address ({ip}): "
                "a webhook must reach a public address"
            )
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return Target(parts.scheme == "https", host, port, path, sorted(found)[0])


def post(to: Target, body: bytes, headers: dict[str, str], timeout: float) -> tuple[int | None, str]:
    """POSTs ``body`` to ``to``: the answer's status (None: none came) and a line about it.

    At most ``timeout`` seconds in all and :data:`MAX_ANSWER_BYTES` of the answer read."""
    deadline = time.monotonic() + timeout

    def left() -> float:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError
        return remaining

    netloc = f"[{to.host}]" if ":" in to.host else to.host
    head = f"POST {to.path} HTTP/1.1\r\nHost: {netloc}:{to.port}\r\nConnection: close\r\n"
    head += f"Content-Length: {len(body)}\r\n"
    head += "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    try:
        with contextlib.ExitStack() as stack:
            raw = stack.enter_context(socket.create_connection((to.address, to.port), timeout=left()))
            sock: socket.socket = raw
            if to.https:
                sock = stack.enter_context(
                    ssl.create_default_context().wrap_socket(raw, server_hostname=to.host)
                )
            sock.settimeout(left())
            sock.sendall(head.encode("latin-1") + b"\r\n" + body)
            answer = b""
            while b"\r\n" not in answer and len(answer) < MAX_ANSWER_BYTES:
                sock.settimeout(left())
                chunk = sock.recv(MAX_ANSWER_BYTES - len(answer))
                if not chunk:
                    break
                answer += chunk
    except TimeoutError:
        return None, f"no answer within {timeout:g} s"
    except OSError as exc:  # ssl.SSLError is one too
        return None, f"cannot reach it: {exc.strerror or exc}"
    line = answer.partition(b"\r\n")[0].decode("latin-1", "replace")
    words = line.split()
    if len(words) < 2 or not words[0].startswith("HTTP/") or not words[1].isdigit():
        return None, f"not an HTTP answer: {line[:80]!r}"
    return int(words[1]), line[:120]


@dataclass(frozen=True, slots=True)
class Webhook:
    """An account's webhook as ``/me`` shows it (never its secret)."""

    account: str
    url: str
    made: float


@dataclass(frozen=True, slots=True)
class Delivery:
    """One notice to deliver to one webhook."""

    id: str
    account: str
    event: str
    body: bytes
    made: float
    attempts: int
    due: float
    status: str
    answer: str
    done: float | None


class Hooks:
    """The webhooks and deliveries of ``portal.sqlite`` (a connection of its own: one per thread)."""

    def __init__(self, folder: Path) -> None:
        PortalStore(folder).close()  # made (0600) with its own tables first
        self.folder = folder
        self._db = sqlite3.connect(
            folder / PORTAL_DB, isolation_level=None, timeout=30.0, check_same_thread=False
        )
        self._db.execute("PRAGMA busy_timeout=30000")
        self._db.executescript(_SCHEMA)
        self._portal = PortalStore(folder)

    def close(self) -> None:
        """Closes the connections."""
        self._db.close()
        self._portal.close()

    def __enter__(self) -> Hooks:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _transaction(self) -> contextlib.AbstractContextManager[sqlite3.Connection]:
        return immediate(self._db)

    def set(self, account: str, url: str, now: float) -> str | None:
        """Sets ``account``'s webhook to ``url`` (checked already), told what happens from now on;
        returns its new secret. ``url`` empty removes it (its pending deliveries dropped)."""
        with self._transaction() as db:
            if not url:
                db.execute("DELETE FROM webhooks WHERE account = ?", (account,))
                db.execute(
                    "UPDATE deliveries SET status = ?, done = ? WHERE account = ? AND status = ?",
                    (DROPPED, now, account, PENDING),
                )
                return None
            try:
                with LeagueStore.open(self.folder, read_only=True) as store:
                    cursor = notify.cursor_now(store, self._portal)
            except LeagueError:
                cursor = notify.Cursor()
            secret = "whsec_" + secrets.token_urlsafe(32)
            db.execute(
                "INSERT OR REPLACE INTO webhooks VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (account, url, secret, now, cursor.events, cursor.commands, int(cursor.final), cursor.audit),
            )
            return secret

    def webhook(self, account: str) -> Webhook | None:
        """``account``'s webhook, or None."""
        row = self._db.execute("SELECT account, url, made FROM webhooks WHERE account = ?", (account,))
        found = row.fetchone()
        return None if found is None else Webhook(*found)

    def _secret(self, account: str) -> tuple[str, str] | None:
        row = self._db.execute("SELECT url, secret FROM webhooks WHERE account = ?", (account,)).fetchone()
        return None if row is None else (str(row[0]), str(row[1]))

    def deliveries(self, account: str | None = None, limit: int = 20) -> list[Delivery]:
        """Deliveries, newest first (of one account, or all)."""
        sql = "SELECT id, account, event, body, made, attempts, due, status, answer, done FROM deliveries"
        args: tuple[str | int, ...] = (limit,)
        if account is not None:
            sql += " WHERE account = ?"
            args = (account, limit)
        return [Delivery(*r) for r in self._db.execute(sql + " ORDER BY made DESC, id LIMIT ?", args)]

    def scan(self, now: float) -> int:
        """Makes a pending delivery of each notice of a webhook's entrant it was not told yet;
        how many."""
        hooks = self._db.execute(
            "SELECT account, events_after, commands_after, final_seen, audit_after FROM webhooks"
        ).fetchall()
        if not hooks:
            return 0
        made = 0
        with LeagueStore.open(self.folder, read_only=True) as store:
            for account, events, given, final, audit in hooks:
                after = notify.Cursor(events, given, bool(final), audit)
                found, cursor = notify.notices(store, account, after, self._portal)
                holder = self._portal.account(account)
                if holder is None or holder.revoked is not None:
                    found = []  # a revoked account is told nothing, then or later
                with self._transaction() as db:
                    moved = db.execute(
                        "UPDATE webhooks SET events_after = ?, commands_after = ?, final_seen = ?, "
                        "audit_after = ? WHERE account = ? AND events_after = ? AND commands_after = ? "
                        "AND final_seen = ? AND audit_after = ?",
                        (
                            cursor.events,
                            cursor.commands,
                            int(cursor.final),
                            cursor.audit,
                            account,
                            events,
                            given,
                            final,
                            audit,
                        ),
                    ).rowcount
                    if not moved:  # set again meanwhile: told from then on
                        continue
                    for notice in found:
                        body = json.dumps(notice.payload(account), sort_keys=True).encode()
                        db.execute(
                            "INSERT OR IGNORE INTO deliveries (id, account, event, body, made, due, status) "
                            "VALUES (?, ?, ?, ?, ?, ?, ?)",
                            (f"{account}:{notice.key}", account, notice.event, body, now, now, PENDING),
                        )
                        made += 1
        return made

    def due(self, now: float) -> list[Delivery]:
        """Pending deliveries due at ``now``, the oldest first."""
        rows = self._db.execute(
            "SELECT id, account, event, body, made, attempts, due, status, answer, done FROM deliveries "
            "WHERE status = ? AND due <= ? ORDER BY due, made, id",
            (PENDING, now),
        )
        return [Delivery(*r) for r in rows.fetchall()]

    def attempted(self, delivery: Delivery, ok: bool, answer: str, now: float) -> Delivery:
        """Records an attempt: delivered, tried again later, or failed for good after
        :data:`ATTEMPTS`."""
        attempts = delivery.attempts + 1
        if ok:
            status, due, done = DELIVERED, delivery.due, now
        elif attempts >= ATTEMPTS:
            status, due, done = FAILED, delivery.due, now
        else:
            status, due, done = PENDING, now + BACKOFF_S * 2 ** (attempts - 1), None
        self._db.execute(
            "UPDATE deliveries SET attempts = ?, status = ?, due = ?, answer = ?, done = ? WHERE id = ?",
            (attempts, status, due, answer[:200], done, delivery.id),
        )
        return dataclasses.replace(
            delivery, attempts=attempts, status=status, due=due, answer=answer[:200], done=done
        )


class Notifier:
    """A thread that makes deliveries of what the league records and POSTs them, never in the
    way of the portal's requests (a connection of its own, a thread of its own).

    ``clock`` says what time it is (seconds since the epoch) for when a delivery is due; a test
    injects its own and calls :meth:`step` itself instead of starting the thread.
    """

    def __init__(
        self,
        folder: Path,
        dev: bool = False,
        clock: Callable[[], float] = time.time,
        timeout: float = TIMEOUT_S,
        poll_s: float = POLL_S,
    ) -> None:
        self.folder = folder
        self.dev = dev
        self.clock = clock
        self.timeout = timeout
        self.poll_s = poll_s
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, name="portal-notifier", daemon=True)
        self._hooks: Hooks | None = None

    @property
    def hooks(self) -> Hooks:
        """The notifier's own connection (made on first use, in the thread that uses it)."""
        if self._hooks is None:
            self._hooks = Hooks(self.folder)
        return self._hooks

    def start(self) -> None:
        """Starts the thread."""
        self.thread.start()

    def stop(self) -> None:
        """Stops the thread after the attempt it is making."""
        self.stopping.set()
        self.thread.join(timeout=self.timeout + 30)

    def _run(self) -> None:
        while not self.stopping.is_set():
            try:
                self.step()
            except Exception as exc:  # the league being written, a full disk: tried again
                log.error("portal_notifier_failed", error=repr(exc))
            self.stopping.wait(self.poll_s)
        if self._hooks is not None:
            self._hooks.close()

    def step(self) -> list[Delivery]:
        """Makes the deliveries of what happened since, and attempts every one due: those attempted."""
        hooks = self.hooks
        hooks.scan(self.clock())
        done = []
        for delivery in hooks.due(self.clock()):
            if self.stopping.is_set():
                break
            try:
                done.append(self.attempt(delivery))
            except Exception as exc:  # counted as a failed attempt: the others still go
                log.error("portal_webhook_failed", delivery=delivery.id, error=repr(exc))
                done.append(hooks.attempted(delivery, False, f"the portal failed: {exc!r}", self.clock()))
        return done

    def attempt(self, delivery: Delivery) -> Delivery:
        """One attempt of ``delivery`` to its account's webhook as set now."""
        hooks = self.hooks
        found = hooks._secret(delivery.account)
        if found is None:  # removed meanwhile
            hooks.set(delivery.account, "", self.clock())
            return delivery
        url, secret = found
        to = target(url, self.dev)  # looked up again: the address connected to is the one checked
        if isinstance(to, str):
            status, line = None, to
        else:
            headers = {
                "Content-Type": "application/json",
                "User-Agent": "hearts-portal-webhook",
                "X-Hearts-Event": delivery.event,
                "X-Hearts-Delivery": delivery.id,
                "X-Hearts-Signature": signature(secret, delivery.body),
            }
            status, line = post(to, delivery.body, headers, self.timeout)
        ok = status is not None and 200 <= status < 300
        done = hooks.attempted(delivery, ok, line, self.clock())
        log.info(
            "portal_webhook", delivery=delivery.id, attempt=done.attempts, status=done.status, answer=line
        )
        return done
