"""What an account's entrant is told: its notices, as an Atom feed and by webhook.

A notice is derived from what the league and the portal already record: one of the entrant's
versions became ``active``, failed its validation (``error``) or was ``quarantined`` (a row of the
league's ``events``); a submission failed the portal's check before it became a version (its
audit row); the season froze or opened again (a ``freeze`` or ``unfreeze`` command); the season's
final ended (its report). Each has a key stable for the league's life (``event-SEQ``,
``submission-ID``, ``command-SEQ``, ``final``): the feed's entry ids and the webhook deliveries are
made from it.

The feed (:func:`atom_feed`) is Atom 1.0, newest first, at most :data:`FEED_ENTRIES` entries.
"""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import Any

from hearts_tournaments.league.store import ACTIVE, ERROR, QUARANTINED, LeagueStore, utc_text
from hearts_tournaments.portal.accounts import PortalStore

#: Entries a feed holds at most (the newest).
FEED_ENTRIES = 50
ATOM_NS = "http://www.w3.org/2005/Atom"
#: The notice kinds (a webhook payload's ``event``).
VERSION_ACTIVE, VERSION_ERROR, VERSION_QUARANTINED = "version.active", "version.error", "version.quarantined"
SEASON_FROZEN, SEASON_REOPENED, FINAL_ENDED = "season.frozen", "season.reopened", "final.ended"
_BY_STATUS = {ACTIVE: VERSION_ACTIVE, ERROR: VERSION_ERROR, QUARANTINED: VERSION_QUARANTINED}
#: What XML 1.0 cannot hold (a bot's log line in a note may have anything).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


@dataclass(frozen=True, slots=True)
class Notice:
    """One thing an entrant is told.

    Attributes:
        key: Stable for the league's life: ``event-SEQ``, ``command-SEQ`` or ``final``.
        event: Its kind (:data:`VERSION_ACTIVE` ...).
        entrant: The entrant it is told to.
        version: The version it is about (None: the season's).
        at: When it happened (seconds since the epoch).
        title: One line.
        detail: Why, or what it means for the entrant.
    """

    key: str
    event: str
    entrant: str
    version: str | None
    at: float
    title: str
    detail: str

    def payload(self, account: str) -> dict[str, Any]:
        """The webhook's JSON body."""
        return {
            "event": self.event,
            "account": account,
            "entrant": self.entrant,
            "version": self.version,
            "at": utc_text(self.at),
            "detail": self.detail,
        }


@dataclass(frozen=True, slots=True)
class Cursor:
    """How far a reader of the notices has read: the last status event, command and portal audit
    row seen, and whether the final's end was."""

    events: int = 0
    commands: int = 0
    final: bool = False
    audit: int = 0


def cursor_now(store: LeagueStore, portal: PortalStore | None = None) -> Cursor:
    """A cursor past everything the league (and the portal) hold now (a new webhook is told only
    what follows)."""
    events, given = store.last_seq()
    audit = portal.last_audit() if portal is not None else 0
    return Cursor(events, given, store.final_ended() is not None, audit)


def notices(
    store: LeagueStore, entrant: str, after: Cursor = Cursor(), portal: PortalStore | None = None
) -> tuple[list[Notice], Cursor]:
    """``entrant``'s notices after ``after``, oldest first, and the cursor past them (with
    ``portal``, its submissions refused by the portal's check too)."""
    out: list[Notice] = []
    events, given, audit = after.events, after.commands, after.audit
    for seq, at, vid, status, why in store.status_events(after.events):
        events = seq
        kind = _BY_STATUS.get(status)
        if kind is None or vid.partition("@")[0] != entrant:
            continue
        title = {
            VERSION_ACTIVE: f"{vid} is active: it plays",
            VERSION_ERROR: f"{vid} failed its check: it does not play",
            VERSION_QUARANTINED: f"{vid} was quarantined: it no longer plays",
        }[kind]
        out.append(Notice(f"event-{seq}", kind, entrant, vid, at, title, why))
    for seq, at, command in store.season_commands(after.commands):
        given = seq
        if command.get("op") == "freeze":
            when = float(command.get("at", at))
            verb = "froze" if when <= at else "freezes"
            title = f"the season {verb} at {utc_text(when)}"
            detail = "no new version is accepted from then on; the versions active then play the final"
            out.append(Notice(f"command-{seq}", SEASON_FROZEN, entrant, None, at, title, detail))
        else:
            title = "the season is open again"
            detail = "new versions are accepted"
            out.append(Notice(f"command-{seq}", SEASON_REOPENED, entrant, None, at, title, detail))
    if portal is not None:
        for seq, at, sid, message in portal.check_failures(entrant, after.audit):
            audit = seq
            title = f"submission {sid} failed its check: it was not added"
            out.append(Notice(f"submission-{sid}", VERSION_ERROR, entrant, None, at, title, message))
    final = after.final
    ended = store.final_ended()
    if ended is not None and not after.final:
        final = True
        at, report = ended
        detail = _final_detail(report, entrant)
        out.append(Notice("final", FINAL_ENDED, entrant, None, at, "the final ended", detail))
    out.sort(key=lambda n: (n.at, n.key))
    return out, Cursor(events, given, final, audit)


def _final_detail(report: dict[str, Any], entrant: str) -> str:
    places = [p for p in report.get("places", []) if isinstance(p, dict)]
    decided = "decided" if report.get("decided") else "stopped at its budget, not decided"
    mine = [p for p in places if str(p.get("version", "")).partition("@")[0] == entrant]
    if not mine:
        return f"{decided}: {entrant} was not a finalist"
    place = mine[0]
    settled = "established" if place.get("established") else "not separated from a neighbour"
    return f"{decided}: {place.get('version')} placed {place.get('place')} of {len(places)} ({settled})"


def _text(value: str) -> str:
    return _NOT_XML.sub("\ufffd", value)


def atom_feed(
    items: list[Notice], *, feed_id: str, title: str, self_url: str, page_url: str, updated: float
) -> bytes:
    """An Atom 1.0 feed of ``items`` (newest first, at most :data:`FEED_ENTRIES`).

    ``updated`` is the feed's time when it has no entry (else its newest entry's).
    """
    newest = sorted(items, key=lambda n: (n.at, n.key), reverse=True)[:FEED_ENTRIES]
    ET.register_namespace("", ATOM_NS)

    def sub(parent: ET.Element, tag: str, text: str | None = None, **attrs: str) -> ET.Element:
        element = ET.SubElement(parent, f"{{{ATOM_NS}}}{tag}", attrs)
        if text is not None:
            element.text = _text(text)
        return element

    feed = ET.Element(f"{{{ATOM_NS}}}feed")
    sub(feed, "id", feed_id)
    sub(feed, "title", title)
    sub(feed, "updated", utc_text(newest[0].at if newest else updated))
    author = sub(feed, "author")
    sub(author, "name", "Cancellation Hearts league")
    sub(feed, "link", rel="self", href=self_url, type="application/atom+xml")
    sub(feed, "link", rel="alternate", href=page_url, type="text/html")
    for notice in newest:
        entry = sub(feed, "entry")
        sub(entry, "id", f"{feed_id}:{notice.key}")
        sub(entry, "title", notice.title)
        sub(entry, "updated", utc_text(notice.at))
        sub(entry, "category", term=notice.event)
        sub(entry, "link", rel="alternate", href=page_url, type="text/html")
        content = f"{notice.title}: {notice.detail}" if notice.detail else notice.title
        sub(entry, "content", content, type="text")
    buffer = io.BytesIO()
    ET.ElementTree(feed).write(buffer, encoding="utf-8", xml_declaration=True)
    return buffer.getvalue()
