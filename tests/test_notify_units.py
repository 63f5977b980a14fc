"""Notifications without the portal: notices derived from a league's rows (one from before events
had a time still opens and tells them), and the Atom feed of any text parses as XML."""

from __future__ import annotations

import sqlite3
import xml.etree.ElementTree as ET
from pathlib import Path

from hearts_tournaments.league import commands
from hearts_tournaments.league.config import LeagueConfig
from hearts_tournaments.league.store import LeagueStore
from hearts_tournaments.portal import notify

ATOM = "{http://www.w3.org/2005/Atom}"


def small_league(folder: Path) -> None:
    """A league whose alice@v1 became active (retired while pending, then unretired) and whose
    season froze, all by commands at known times (no game played)."""
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
    weird = "log: \x00\x07 <script>&amp; \ud800 \"quoted\" ]]>"
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
