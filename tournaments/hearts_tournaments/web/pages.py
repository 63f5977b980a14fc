"""The pages, rendered to HTML from a :class:`~.source.Source`: no web framework in here.

The live server (:mod:`.app`) and the static export (:mod:`.export`) both call :class:`Site`,
so they publish the same pages. Every method returns a :class:`Page`; a refusal of the source
(missing game, withheld record, corrupt record) becomes an error page with its status code.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup

from hearts_tournaments.tournament.report import interval_text, method_notes
from hearts_tournaments.tournament.results import (
    DIFFERED,
    NO_CLEAR_DIFFERENCE,
    PAIRED_MIN_DEALS,
    PAIRED_QUESTION,
    TIER_QUESTION,
    BotStanding,
    Interval,
    Standings,
)
from hearts_tournaments.web.links import Links
from hearts_tournaments.web.meetings import share_intervals
from hearts_tournaments.web.source import (
    GameRow,
    GameStatus,
    NoSuchBot,
    NoSuchGame,
    Source,
    SourceError,
    TournamentSource,
)
from hearts_tournaments.web.timeline import TimelineError, full_timeline, seat_timeline

#: Leaderboard columns that sort, and the value each sorts by (None last).
SORT_KEYS: dict[str, Callable[[BotStanding], Any]] = {
    "rank": lambda s: s.rank,
    "bot": lambda s: s.bot,
    "games": lambda s: s.games,
    "mean_place": lambda s: s.mean_place,
    "wins": lambda s: s.wins,
    "points_per_hand": lambda s: s.points_per_hand,
    "mean_score": lambda s: s.mean_score,
    "strength": lambda s: s.strength,
    "tier": lambda s: s.tier,
    "faults": lambda s: s.faults,
    "bot_errors": lambda s: s.bot_errors,
    "failed_games": lambda s: s.failed_games,
}
#: Rows of the live game list per page.
GAMES_PER_PAGE = 100
SUITS = {"C": ("♣", "clubs"), "D": ("♦", "diamonds"), "H": ("♥", "hearts"), "S": ("♠", "spades")}
RANKS = {"T": "10", "J": "J", "Q": "Q", "K": "K", "A": "A"}


@dataclass(frozen=True, slots=True)
class Page:
    """A rendered page and its HTTP status."""

    status: int
    html: str


@dataclass(frozen=True, slots=True)
class Bar:
    """A confidence interval drawn as a bar: positions in percent of the column's scale."""

    low: float
    high: float
    mark: float
    text: str


def card_html(code: str) -> Markup:
    """A card as text plus colour: ``Q♥`` with its suit's class and a spoken label."""
    rank, suit = code[:-1], code[-1]
    symbol, name = SUITS.get(suit, ("?", suit))
    shown = RANKS.get(rank, rank)
    return Markup('<span class="card s-{}" title="{}">{}{}</span>').format(
        suit, f"{shown} of {name}", shown, symbol
    )


def _fmt(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _bars(
    lines: Sequence[BotStanding],
    value: Callable[[BotStanding], float | None],
    ci: Callable[[BotStanding], Interval | None],
) -> dict[str, Bar]:
    items = []
    for line in lines:
        c = ci(line)
        items.append((line.bot, value(line), None if c is None else (c.low, c.high)))
    return interval_bars(items, "too few deals")


def interval_bars(
    items: Sequence[tuple[str, float | None, tuple[float, float] | None]], missing: str
) -> dict[str, Bar]:
    """Each named estimate with its interval as a bar on one scale shared by all of them (an
    estimate without an interval gets a mark, no bar, and ``missing`` in its text)."""
    points = []
    for _name, v, c in items:
        if v is not None:
            points.append(v)
        if c is not None:
            points += list(c)
    if not points:
        return {}
    lo, hi = min(points), max(points)
    span = (hi - lo) or 1.0

    def pos(x: float) -> float:
        return round(2 + 96 * (x - lo) / span, 2)

    out = {}
    for name, v, c in items:
        if v is None:
            continue
        if c is None:
            # No interval can be estimated: no bar that looks like one.
            out[name] = Bar(pos(v), pos(v), pos(v), f"{v:.2f} ({missing})")
            continue
        out[name] = Bar(pos(c[0]), pos(c[1]), pos(v), f"{v:.2f} {interval_text(c[0], c[1])}")
    return out


class Site:
    """Renders every page of one source.

    Args:
        source: Where the data comes from.
        live: Pages update over server-sent events and sort on the server (the live server);
            else they are static files that sort and filter in the browser.
        portal: Served by the entrant portal (``hearts web --submissions``): the header links
            to its sign-in, registration and help pages.
    """

    def __init__(self, source: Source | None, *, live: bool, portal: bool = False) -> None:
        self._source = source
        self.live = live
        self.env = Environment(
            loader=PackageLoader("hearts_tournaments.web", "templates"),
            autoescape=select_autoescape(["html"]),
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self._intervals: dict[tuple[int, str], dict[str, Interval]] = {}
        self.env.filters["card"] = card_html
        self.env.filters["fmt"] = _fmt
        self.env.filters["interval"] = interval_text
        self.env.globals["suits"] = SUITS
        # Served by the entrant portal: every page's header links to sign in, register and help.
        self.env.globals["portal"] = portal

    def prepare(self) -> None:
        """Compiles the live pages' templates ahead of their first request."""
        for name in ("leaderboard.html", "standings_table.html", "games.html", "games_table.html"):
            self.env.get_template(name)

    @property
    def source(self) -> Source:
        """The source (a site built without one renders error pages only)."""
        if self._source is None:
            raise SourceError("nothing to show")
        return self._source

    def _render(self, template: str, links: Links, **context: Any) -> Page:
        html = self.env.get_template(template).render(
            links=links, live=self.live, title=self.source.title, **context
        )
        return Page(200, html)

    def error(self, links: Links, status: int, message: str, waiting: bool = False) -> Page:
        """The page of a refusal: its status and one clear sentence. ``waiting``: the folder holds
        no tournament yet, and the page reloads itself once it does."""
        heading = {403: "Withheld", 404: "Not found", 500: "Cannot show this"}.get(status, "Error")
        return Page(
            status,
            self.env.get_template("error.html").render(
                links=links,
                live=False,
                title=_safe_title(self._source),
                heading=heading,
                message=message,
                waiting=waiting,
            ),
        )

    def _guard(self, links: Links, build: Callable[[], Page]) -> Page:
        try:
            return build()
        except SourceError as exc:
            return self.error(links, exc.status, str(exc))
        except TimelineError as exc:
            return self.error(links, 500, f"the game record cannot be replayed: {exc}")

    # ------------------------------------------------------------------ leaderboard
    def leaderboard(self, links: Links, query: dict[str, str], fragment: bool = False) -> Page:
        """The standings, sortable and filtered by ``query`` (sort, order, q, quarantined)."""
        return self._guard(links, lambda: self._leaderboard(links, query, fragment))

    def _leaderboard(self, links: Links, query: dict[str, str], fragment: bool) -> Page:
        league = getattr(self.source, "league", None)
        if league is not None:
            # A league has pages of its own: its official table, not a tournament's standings.
            shown = league()
            bars = interval_bars(
                [
                    (
                        r.version,
                        r.strength,
                        (r.low, r.high) if r.low is not None and r.high is not None else None,
                    )
                    for r in shown["table"]
                ],
                "no interval yet",
            )
            return self._render(
                "league_body.html" if fragment else "league.html", links, strength_bars=bars, **shown
            )
        standings = self.source.standings()
        sort = query.get("sort", "rank")
        if sort not in SORT_KEYS:
            sort = "rank"
        order = "desc" if query.get("order") == "desc" else "asc"
        needle = query.get("q", "").strip().lower()
        held = query.get("quarantined", "")
        lines = [
            s
            for s in standings.standings
            if needle in s.bot.lower()
            and not (held == "hide" and s.quarantined)
            and not (held == "only" and not s.quarantined)
        ]
        if self.live:
            key = SORT_KEYS[sort]
            present = [s for s in lines if key(s) is not None]
            lines = sorted(present, key=key, reverse=order == "desc") + [s for s in lines if key(s) is None]
        context = {
            "standings": standings,
            "method_notes": method_notes(standings),
            "lines": lines,
            "sort": sort,
            "order": order,
            "query": {"q": query.get("q", ""), "quarantined": held},
            "strength_bars": _bars(lines, lambda s: s.strength, lambda s: s.strength_ci),
            "place_bars": _bars(lines, lambda s: s.mean_place, lambda s: s.mean_place_ci),
            "points_bars": _bars(lines, lambda s: s.points_per_hand, lambda s: s.points_per_hand_ci),
            # A rule between tiers only where the rows are in rank order, none left out.
            "in_rank_order": sort == "rank" and order == "asc" and len(lines) == len(standings.standings),
            "stored": self.source.version() if isinstance(self.source, TournamentSource) else None,
            "paired_min_deals": PAIRED_MIN_DEALS,
            "tier_question": TIER_QUESTION,
            "paired_question": PAIRED_QUESTION,
            "differed": DIFFERED,
            "no_clear_difference": NO_CLEAR_DIFFERENCE,
            "fragment_query": _encode(
                {k: v for k, v in query.items() if k in ("sort", "order", "q", "quarantined")}
            ),
        }
        return self._render("standings_table.html" if fragment else "leaderboard.html", links, **context)

    # ------------------------------------------------------------------ head-to-head
    def h2h(self, links: Links) -> Page:
        """The head-to-head matrix as a heat map, bots in rank order."""
        return self._guard(links, lambda: self._h2h(links))

    def _h2h(self, links: Links) -> Page:
        standings = self.source.standings()
        bots = [s.bot for s in standings.standings]
        return self._render("h2h.html", links, standings=standings, bots=bots, heat=_heat)

    # ------------------------------------------------------------------ games
    def games(self, links: Links, query: dict[str, str], fragment: bool = False) -> Page:
        """The game list, filtered by ``query`` (bot, deal, status)."""
        return self._guard(links, lambda: self._games(links, query, fragment))

    def _games(self, links: Links, query: dict[str, str], fragment: bool) -> Page:
        rows = list(self.source.games())
        bot, deal, status = query.get("bot", ""), query.get("deal", ""), query.get("status", "")
        if self.live:
            if bot:
                rows = [r for r in rows if bot in r.seats]
            if deal.isdigit():
                rows = [r for r in rows if r.deal == int(deal)]
            if status:
                rows = [r for r in rows if r.status.value == status]
        deals = sorted({r.deal for r in self.source.games()})
        matching = len(rows)
        page = 1
        pages = 1
        if self.live:  # the export keeps every row, for filtering in the browser
            pages = max(1, -(-matching // GAMES_PER_PAGE))
            raw = query.get("page", "1")
            page = min(max(int(raw), 1), pages) if raw.isdigit() else 1
            rows = rows[(page - 1) * GAMES_PER_PAGE : page * GAMES_PER_PAGE]
        kept = {k: v for k, v in query.items() if k in ("bot", "deal", "status", "page")}
        context = {
            "rows": rows,
            "bots": self.source.bots(),
            "deals": deals,
            "statuses": [s.value for s in GameStatus],
            "query": {"bot": bot, "deal": deal, "status": status},
            "played": sum(1 for r in self.source.games() if r.outcome is not None),
            "total": len(self.source.games()),
            "matching": matching,
            "page": page,
            "pages": pages,
            "first": (page - 1) * GAMES_PER_PAGE + 1 if rows else 0,
            "fragment_query": _encode(kept),
        }
        return self._render("games_table.html" if fragment else "games.html", links, **context)

    # ------------------------------------------------------------------ a bot
    def bot(self, links: Links, name: str) -> Page:
        """One bot: its games, seat positions, head-to-head and faults with their logs."""
        return self._guard(links, lambda: self._bot(links, name))

    def _bot(self, links: Links, name: str) -> Page:
        if name not in self.source.bots():
            raise NoSuchBot(f"no bot {name!r} takes part in this tournament")
        standings = self.source.standings()
        line = standings.by_bot(name)
        rows = [r for r in self.source.games() if name in r.seats]
        positions: dict[int, list[float]] = defaultdict(lambda: [0, 0.0, 0.0, 0])
        faults = []
        for row in rows:
            outcome = row.outcome
            if outcome is None:
                continue
            mine = [s for s, b in enumerate(outcome.seats) if b == name]
            if any(outcome.faults[s] or outcome.bot_errors_at(s) for s in mine) or outcome.failed(name):
                faults.append(self._faults_of(row, name, mine))
            if row.result is None:
                continue
            for seat, bot in enumerate(outcome.seats):
                if bot != name:
                    continue
                acc = positions[seat]
                acc[0] += 1
                acc[1] += outcome.places[seat]
                acc[2] += outcome.totals[seat]
                acc[3] += outcome.hands
        by_position = [
            {
                "seat": seat,
                "seats": int(a[0]),
                "mean_place": a[1] / a[0],
                "points_per_hand": a[2] / a[3] if a[3] else None,
            }
            for seat, a in sorted(positions.items())
        ]
        intervals = self._share_intervals(name, standings.seed)
        meetings = [
            {
                "bot": other,
                "row": standings.head_to_head[name][other],
                "col": standings.head_to_head[other][name],
                "ci": intervals.get(other),
            }
            for other in [s.bot for s in standings.standings]
            if other != name
        ]
        league = getattr(self.source, "profile", None)
        return self._render(
            "bot.html",
            links,
            league=league(name) if league is not None else None,
            standings=standings,
            line=line,
            name=name,
            rows=rows,
            by_position=by_position,
            meetings=meetings,
            faults=faults,
            heat=_heat,
        )

    def _share_intervals(self, name: str, seed: str) -> dict[str, Interval]:
        key = (self.source.version(), name)
        if key not in self._intervals:
            played = [(r.deal, r.outcome) for r in self.source.games() if r.outcome is not None]
            self._intervals = {k: v for k, v in self._intervals.items() if k[0] == key[0]}
            self._intervals[key] = share_intervals(name, played, seed)
        return self._intervals[key]

    def _faults_of(self, row: GameRow, name: str, mine: list[int]) -> dict[str, Any]:
        outcome = row.outcome
        assert outcome is not None
        entry: dict[str, Any] = {
            "row": row,
            "seats": mine,
            "faults": [outcome.faults[s] for s in mine],
            "bot_errors": [outcome.bot_errors_at(s) for s in mine],
            "details": [],
            "logs": [],
            "failed": outcome.failed(name),
        }
        if not row.released:
            return entry
        try:
            record = self.source.record(row.key)
        except SourceError:
            return entry
        entry["details"] = [f.to_json() for f in record.faults or () if f.seat in mine]
        for seat in mine:
            excerpt = self.source.log(name, row.key, seat)
            if excerpt is not None:
                entry["logs"].append((seat, excerpt))
        return entry

    # ------------------------------------------------------------------ a game
    def game(self, links: Links, key: str, seat: int | None = None) -> Page:
        """The replay viewer of one game, or of what seat ``seat`` saw of it."""
        return self._guard(links, lambda: self._game(links, key, seat))

    def _game(self, links: Links, key: str, seat: int | None) -> Page:
        row = self.source.game(key)
        record = self.source.record(key)
        if seat is not None and not 0 <= seat < len(row.seats):
            raise NoSuchGame(f"game {key} has no seat {seat} (seats 0..{len(row.seats) - 1})")
        timeline = full_timeline(record) if seat is None else seat_timeline(record, seat)
        data = json.dumps(timeline.to_json(), separators=(",", ":")).replace("</", "<\\/")
        return self._render(
            "game.html",
            links,
            row=row,
            timeline=timeline,
            data=Markup(data),
            seat=seat,
        )

    def record_text(self, key: str) -> tuple[int, str]:
        """The stored record of a released game, or an error status and message."""
        try:
            return 200, self.source.record_text(key)
        except SourceError as exc:
            return exc.status, str(exc)

    # ------------------------------------------------------------------ a deal
    def deal(self, links: Links, deal: int) -> Page:
        """Every rotation of one deal side by side."""
        return self._guard(links, lambda: self._deal(links, deal))

    def _deal(self, links: Links, deal: int) -> Page:
        rows = [r for r in self.source.games() if r.deal == deal]
        if not rows:
            raise NoSuchGame(f"no deal {deal} in this tournament")
        released = all(r.released for r in rows)
        first_hand: list[list[str]] | None = None
        if released:
            try:
                hands = self.source.record(rows[0].key).hands
                if hands:
                    first_hand = [sorted(h, key=_card_order) for h in hands[0].deal]
            except SourceError:
                first_hand = None  # a corrupt record: its own page says so; the rotations still show
        players = len(rows[0].seats)
        return self._render(
            "deal.html",
            links,
            deal=deal,
            rows=rows,
            released=released,
            players=players,
            first_hand=first_hand,
        )


def _card_order(code: str) -> tuple[int, int]:
    return ("CDHS".find(code[-1:]), "23456789TJQKA".find(code[:-1]))


def _heat(share: float | None) -> str:
    """A cell colour for a head-to-head share: blue when ahead, red when behind."""
    if share is None:
        return ""
    if share >= 0.5:
        strength = (share - 0.5) * 2
        return f"background: hsl(210 70% {96 - 40 * strength:.0f}%)"
    strength = (0.5 - share) * 2
    return f"background: hsl(0 70% {96 - 40 * strength:.0f}%)"


def _encode(query: dict[str, str]) -> str:
    from urllib.parse import urlencode

    return urlencode({k: v for k, v in query.items() if v})


def _safe_title(source: Source | None) -> str:
    try:
        return source.title if source is not None else "hearts web"
    except SourceError:
        return "hearts web"


__all__ = ["Page", "Site", "Standings", "card_html"]
