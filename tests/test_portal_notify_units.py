"""Notifications without the portal: notices derived from a league's rows (one from before events
had a time still opens and tells them), the Atom feed of any text parses as XML, webhook URLs
refused, and deliveries to a real local receiver retried by an injected clock."""

from __future__ import annotations

import contextlib
import json
import socketserver
import sqlite3
import threading
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from hearts_tournaments.league import commands
from hearts_tournaments.league.config import LeagueConfig
from hearts_tournaments.league.store import FINAL_ENDED_META, FINAL_REPORT_META, LeagueStore
from hearts_tournaments.portal import notify, webhooks
from hearts_tournaments.portal.accounts import PortalStore
from tests.helpers.receiver import receiver, verified

DOC = (Path(__file__).resolve().parent.parent / "docs" / "COMPETITION.md").read_text()
ATOM = "{http://www.w3.org/2005/Atom}"


def small_league(folder: Path) -> None:
    """A league whose alice@v1 became active (retired while pending, then unretired) and whose
    season froze, all by commands at known times (no game played); alice and bob have accounts."""
    with commands.init_league(folder, LeagueConfig(table_size=6, seed="n"), bytes(32)) as store:
        store.clock = lambda: 1_000.0
        commands.add_version(store, commands.make_spec("alice", None, "random"))
        commands.add_version(store, commands.make_spec("bob", None, "random"))
        store.clock = lambda: 2_000.0
        store.execute({"op": "retire", "name": "alice@v1"})
        store.clock = lambda: 3_000.0
        store.execute({"op": "unretire", "name": "alice@v1"})
        store.clock = lambda: 4_000.0
        store.execute({"op": "freeze", "at": 4_000.0})
    with PortalStore(folder) as portal:
        for name in ("alice", "bob"):
            portal.add_account(name)


def test_notices_are_derived_from_the_league_in_order(tmp_path: Path) -> None:
    small_league(tmp_path / "lg")
    with LeagueStore.open(tmp_path / "lg", read_only=True) as store:
        found, cursor = notify.notices(store, "alice")
        assert [(n.event, n.version, n.at) for n in found] == [
            ("version.active", "alice@v1", 3_000.0),
            ("season.frozen", None, 4_000.0),
        ]
        assert found[1].title == "the season froze at 1970-01-01T01:06:40Z"
        assert notify.notices(store, "alice", cursor)[0] == []  # nothing after the cursor
        assert cursor == notify.cursor_now(store)
        assert [n.event for n in notify.notices(store, "bob")[0]] == ["season.frozen"]


def test_a_league_from_before_events_had_a_time_opens_and_tells_them(tmp_path: Path) -> None:
    folder = tmp_path / "lg"
    small_league(folder)
    db = sqlite3.connect(folder / "league.sqlite")
    db.execute("ALTER TABLE events DROP COLUMN at")  # as a league made before it
    db.commit()
    db.close()
    with LeagueStore.open(folder, read_only=True) as store:  # read-only: not migrated, still read
        found, _ = notify.notices(store, "alice")
        assert [(n.event, n.at) for n in found] == [("version.active", 0.0), ("season.frozen", 4_000.0)]
    with LeagueStore.open(folder) as store:  # writable: the column is added, old rows without it
        store.clock = lambda: 5_000.0
        store.execute({"op": "retire", "name": "alice@v1"})
        store.execute({"op": "unretire", "name": "alice@v1"})
        actives = [n.at for n in notify.notices(store, "alice")[0] if n.event == "version.active"]
        assert actives == [0.0, 5_000.0]


def test_the_feed_of_any_text_is_atom_that_parses(tmp_path: Path) -> None:
    weird = 'log: \x00\x07 <script>&amp; \ud800 "quoted" ]]>'
    items = [
        notify.Notice("event-1", notify.VERSION_ERROR, "alice", "alice@v2", 10.0, "alice@v2 failed", weird),
        notify.Notice("event-2", notify.VERSION_ACTIVE, "alice", "alice@v3", 20.0, "alice@v3 active", ""),
    ]
    body = notify.atom_feed(
        items * 40, feed_id="urn:x", title="t <&>", self_url="http://h/f", page_url="http://h/me", updated=0
    )
    root = ET.fromstring(body)
    assert root.findtext(f"{ATOM}title") == "t <&>"
    entries = root.findall(f"{ATOM}entry")
    assert len(entries) == notify.FEED_ENTRIES  # bounded
    assert entries[0].findtext(f"{ATOM}updated") == "1970-01-01T00:00:20Z"  # newest first
    error = next(e for e in entries if e.findtext(f"{ATOM}title") == "alice@v2 failed")
    assert "<script>&amp;" in (error.findtext(f"{ATOM}content") or "")
    empty = ET.fromstring(
        notify.atom_feed([], feed_id="urn:x", title="t", self_url="s", page_url="p", updated=86400.0)
    )
    assert empty.findtext(f"{ATOM}updated") == "1970-01-02T00:00:00Z" and not empty.findall(f"{ATOM}entry")


def test_a_webhook_url_must_be_https_to_a_public_address() -> None:
    refused = {
        "ftp://example.com/x": "only https:// is accepted",
        "http://example.com/x": "only https:// is accepted",
        "http://127.0.0.1:9/x": "only https:// is accepted",
        "https://10.1.2.3/x": "private, loopback or reserved address (10.1.2.3)",
        "https://127.0.0.1/x": "private, loopback or reserved address (127.0.0.1)",
        "https://[::1]/x": "private, loopback or reserved address (::1)",
        "https://169.254.169.254/latest": "private, loopback or reserved address",
        "https://localhost/x": "private, loopback or reserved address",
        "https://user:pw@93.184.215.14/x": "holds a user name or password",
        "https://host.invalid/x": "does not resolve",
        "https://93.184.215.14:99999/x": "cannot be read",
        "javascript:alert(1)": "only https:// is accepted",
        "https:///x": "names no host",
        "https://[::ffff:10.0.0.1]/x": "private, loopback or reserved address (10.0.0.1)",
        "https://93.184.215.14/é": "beyond ASCII",
        "https://bücher.example/x": "beyond ASCII",
        "https://93.184.215.14/" + "x" * 600: "too long",
    }
    for url, why in refused.items():
        answer = webhooks.target(url, dev=False)
        assert isinstance(answer, str) and why in answer and "\n" not in answer, (url, answer)
    public = webhooks.target("https://93.184.215.14/hook?a=1", dev=False)
    assert public == webhooks.Target(True, "93.184.215.14", 443, "/hook?a=1", "93.184.215.14")
    # With --dev-webhooks: http:// to loopback only, nothing private beyond it.
    assert isinstance(webhooks.target("http://127.0.0.1:9/x", dev=True), webhooks.Target)
    assert isinstance(webhooks.target("http://localhost:9/x", dev=True), webhooks.Target)
    assert "only https://" in str(webhooks.target("http://93.184.215.14/x", dev=True))
    assert "private" in str(webhooks.target("https://10.1.2.3/x", dev=True))


def alice_goes_active(folder: Path, at: float) -> None:
    with LeagueStore.open(folder) as store:
        store.clock = lambda: at
        store.execute({"op": "retire", "name": "alice@v1"})
        store.execute({"op": "unretire", "name": "alice@v1"})
        store.execute({"op": "retire", "name": "bob@v1"})
        store.execute({"op": "unretire", "name": "bob@v1"})  # a rival's: never alice's to hear of


@pytest.mark.timeout(120)
def test_a_failing_receiver_gets_one_success_after_retries_by_the_clock(tmp_path: Path) -> None:
    folder = tmp_path / "lg"
    small_league(folder)
    now = [10_000.0]
    with receiver(500, 503, 200) as got, webhooks.Hooks(folder) as hooks:
        secret = hooks.set("alice", got.url, now[0])
        assert secret is not None
        notifier = webhooks.Notifier(folder, dev=True, clock=lambda: now[0])
        assert notifier.step() == []  # what happened before the webhook was set is not sent
        alice_goes_active(folder, 10_001.0)
        first = notifier.step()
        assert [(d.attempts, d.status) for d in first] == [(1, "pending")]
        assert first[0].due == now[0] + webhooks.BACKOFF_S
        assert notifier.step() == []  # not due yet
        # A restart: a new notifier (a connection of its own) goes on with the pending delivery.
        notifier = webhooks.Notifier(folder, dev=True, clock=lambda: now[0])
        now[0] += webhooks.BACKOFF_S
        assert [(d.attempts, d.status) for d in notifier.step()] == [(2, "pending")]
        now[0] += 2 * webhooks.BACKOFF_S - 1
        assert notifier.step() == []
        now[0] += 1
        assert [(d.attempts, d.status) for d in notifier.step()] == [(3, "delivered")]
        now[0] += 10_000
        assert notifier.step() == []  # delivered once: never again
        posts = got.wait(3)
        assert len(posts) == 3
        assert len({p.headers["x-hearts-delivery"] for p in posts}) == 1 and len({p.body for p in posts}) == 1
        for post in posts:
            assert verified(secret, post.body, post.headers["x-hearts-signature"])
            assert not verified("whsec_wrong", post.body, post.headers["x-hearts-signature"])
        payload = json.loads(posts[0].body)
        assert payload == {
            "event": "version.active",
            "account": "alice",
            "entrant": "alice",
            "version": "alice@v1",
            "at": "1970-01-01T02:46:41Z",
            "detail": "unretire (command 7)",
        }
        assert [d.status for d in hooks.deliveries("alice")] == ["delivered"]
        assert hooks.deliveries("bob") == []


@pytest.mark.timeout(120)
def test_a_receiver_that_never_succeeds_fails_after_the_last_attempt(tmp_path: Path) -> None:
    folder = tmp_path / "lg"
    small_league(folder)
    now = [10_000.0]
    with receiver(500) as got, webhooks.Hooks(folder) as hooks:
        hooks.set("alice", got.url, now[0])
        notifier = webhooks.Notifier(folder, dev=True, clock=lambda: now[0])
        alice_goes_active(folder, 10_001.0)
        states = []
        for _ in range(webhooks.ATTEMPTS + 2):
            states += [(d.attempts, d.status) for d in notifier.step()]
            now[0] += 10_000
        assert states == [(n, "pending") for n in range(1, webhooks.ATTEMPTS)] + [
            (webhooks.ATTEMPTS, "failed")
        ]
        assert len(got.wait(webhooks.ATTEMPTS)) == webhooks.ATTEMPTS


class Hostile(socketserver.BaseRequestHandler):
    """Reads the request, then never answers, or answers without end."""

    mode = "silent"

    def handle(self) -> None:
        self.request.recv(65536)
        if self.server.mode == "silent":  # type: ignore[attr-defined]
            self.server.release.wait(60)  # type: ignore[attr-defined]
            return
        with contextlib.suppress(OSError):
            while True:
                self.request.sendall(b"x" * 65536)  # no line end ever


@pytest.mark.timeout(120)
@pytest.mark.parametrize("mode", ["silent", "endless"])
def test_a_hostile_receiver_is_bounded_by_the_timeout_and_the_answer_cap(tmp_path: Path, mode: str) -> None:
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Hostile)
    server.daemon_threads = True
    server.mode = mode  # type: ignore[attr-defined]
    server.release = threading.Event()  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        to = webhooks.target(f"http://127.0.0.1:{server.server_address[1]}/x", dev=True)
        assert isinstance(to, webhooks.Target)
        status, line = webhooks.post(to, b"{}", {}, timeout=1.0)
        assert status is None
        assert line == ("no answer within 1 s" if mode == "silent" else f"not an HTTP answer: {'x' * 80!r}")
    finally:
        server.release.set()  # type: ignore[attr-defined]
        server.shutdown()
        server.server_close()


def test_the_documented_notification_bounds_are_the_codes() -> None:
    competition = " ".join(DOC.split())
    security = " ".join((Path(__file__).resolve().parent.parent / "docs" / "SECURITY.md").read_text().split())
    backoff = ", ".join(f"{webhooks.BACKOFF_S * 2**n:g} s" for n in range(webhooks.ATTEMPTS - 2))
    assert f"after {backoff} and {webhooks.BACKOFF_S * 2 ** (webhooks.ATTEMPTS - 2):g} s" in competition
    assert f"({webhooks.ATTEMPTS} attempts in all)" in competition
    assert f"No answer within {webhooks.TIMEOUT_S:g} seconds" in competition
    assert f"the {notify.FEED_ENTRIES} newest" in competition
    assert f"at most {webhooks.TIMEOUT_S:g} seconds in all and reads at most" in security
    assert f"{webhooks.MAX_ANSWER_BYTES >> 10} KiB of the answer" in security


@pytest.mark.timeout(120)
def test_a_submission_refused_by_the_check_is_told_and_a_revoked_account_is_told_nothing(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "lg"
    small_league(folder)
    with PortalStore(folder) as portal:
        refused = portal.add_submission("alice", 100, "127.0.0.1")
        portal.set_submission(refused, "error", "it cannot play: it exits at once; fix: read stdin")
        taken = portal.add_submission("alice", 100, "127.0.0.1")
        portal.set_submission(taken, "validating", "pending its validation game", version="alice@v9")
        portal.set_submission(taken, "error", "alice@v9 failed its validation game")  # the league's to tell
        with LeagueStore.open(folder, read_only=True) as store:
            found, cursor = notify.notices(store, "alice", portal=portal)
            assert [
                (n.key, n.event, n.version, n.title) for n in found if n.key.startswith("submission")
            ] == [
                (
                    f"submission-{refused}",
                    "version.error",
                    None,
                    f"submission {refused} failed its check: it was not added",
                )
            ]
            assert next(n for n in found if n.key.startswith("submission")).detail.endswith("fix: read stdin")
            assert notify.notices(store, "alice", cursor, portal)[0] == []
            assert not [
                n for n in notify.notices(store, "bob", portal=portal)[0] if n.key.startswith("submission")
            ]
    now = [10_000.0]
    with receiver() as got, webhooks.Hooks(folder) as hooks, PortalStore(folder) as portal:
        hooks.set("alice", got.url, now[0])
        notifier = webhooks.Notifier(folder, dev=True, clock=lambda: now[0])
        again = portal.add_submission("alice", 100, "127.0.0.1")
        portal.set_submission(again, "error", "bot.toml is missing")
        assert [(d.event, d.status) for d in notifier.step()] == [("version.error", "delivered")]
        assert json.loads(got.wait(1)[0].body)["detail"] == "bot.toml is missing"
        portal.revoke("alice")
        alice_goes_active(folder, 10_002.0)
        assert notifier.step() == []
        portal.rotate("alice")  # back, with a new token: still nothing of the revoked time
        assert notifier.step() == []
    assert len(got.got) == 1


def test_the_finals_end_is_told_with_each_entrants_place(tmp_path: Path) -> None:
    folder = tmp_path / "lg"
    small_league(folder)
    report = {
        "decided": True,
        "places": [
            {"place": 1, "version": "bob@v1", "established": True},
            {"place": 2, "version": "carol@v1", "established": False},
        ],
    }
    with LeagueStore.open(folder) as store:
        store.set_meta(FINAL_REPORT_META, json.dumps(report))  # a final from before its end was timed
        # ... ended, at the latest, after the last command given (the freeze, at 4000)
        assert [(n.event, n.at) for n in notify.notices(store, "bob")[0]][-1] == ("final.ended", 4000.0)
        store.set_meta(FINAL_ENDED_META, "5000.0")
        told = {name: notify.notices(store, name)[0][-1] for name in ("alice", "bob", "carol")}
    assert {name: (n.event, n.at, n.detail) for name, n in told.items()} == {
        "alice": ("final.ended", 5000.0, "decided: alice was not a finalist"),
        "bob": ("final.ended", 5000.0, "decided: bob@v1 placed 1 of 2 (established)"),
        "carol": ("final.ended", 5000.0, "decided: carol@v1 placed 2 of 2 (not separated from a neighbour)"),
    }
