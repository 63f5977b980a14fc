"""What an entrant's pages show of the league: the portal's ``/me`` and the public bot page.

Everything here is read from the league's database as it is stored, and cheap enough for a
page: the rank (an entrant's best active version in the official table, among the active
entrants), the description of its ``bot.toml`` (read from the version's snapshot), the online
rating after each block (``rating_history``, one row per version per block) drawn as an inline
SVG with its band, the progress to a settled rating, and from the stored game records the time
its decisions took and its faults with their reasons. The records read are bounded
(:data:`MAX_TIMED_GAMES`, :data:`MAX_FAULT_GAMES`) and the figures cached per version until
another block is stored.
"""

from __future__ import annotations

import json
import math
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from hearts_tournaments.league.config import LeagueConfig
from hearts_tournaments.league.ratings import TableRow
from hearts_tournaments.league.store import ACTIVE, LeagueStore, Version

#: A version's newest rated games whose records give its decision times.
MAX_TIMED_GAMES = 200
#: A version's newest games with a fault listed with their reasons.
MAX_FAULT_GAMES = 30
#: Points the strength chart draws at most (a long history is thinned evenly, its last kept).
MAX_CHART_POINTS = 240
#: The chart's band: the online mean plus and minus this many standard deviations.
BAND_SIGMAS = 2.0
#: Bytes of a snapshot's ``bot.toml`` read at most (the portal refuses a longer one).
MAX_MANIFEST_READ = 4096
#: A description is shown up to this many characters (the portal refuses a longer one).
MAX_DESCRIPTION = 500
#: Figures of versions kept in memory at most.
_CACHE_SIZE = 256


def ordinal(n: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``4th``, ``11th``, ``12th``, ``13th``, ``21st``, ``22nd``..."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


@dataclass(frozen=True, slots=True)
class Standing:
    """An entrant's place among the active entrants of the official table.

    Attributes:
        rank: 1 for the entrant whose best active version has the best strength.
        of: Active entrants in the table.
        version: The entrant's version that holds the place (its best active one).
        scored: Whether that version has a score yet (it played a block): one without is
            listed after every scored one, in name order, and is not ranked yet.
    """

    rank: int
    of: int
    version: str
    scored: bool = True

    @property
    def text(self) -> str:
        """``2nd of 14``."""
        return f"{ordinal(self.rank)} of {self.of}"


def entrant_standing(
    table: Sequence[TableRow], entrant_of: Mapping[str, str], entrant: str
) -> Standing | None:
    """The place of ``entrant`` (None: no active version of it is in the table).

    Args:
        table: The official table, in rank order.
        entrant_of: Each version's entrant.
        entrant: Whose place.
    """
    best: dict[str, TableRow] = {}
    for row in sorted(table, key=lambda r: r.rank):
        if row.status != ACTIVE:
            continue
        best.setdefault(entrant_of.get(row.version, row.version.partition("@")[0]), row)
    if entrant not in best:
        return None
    order = list(best)
    row = best[entrant]
    return Standing(order.index(entrant) + 1, len(order), row.version, row.score is not None)


def description(version: Version) -> str:
    """The ``description`` of the ``bot.toml`` the version was submitted with ("" without one)."""
    snapshot = version.spec.snapshot
    if snapshot is None:
        return ""
    try:
        with (snapshot / "0" / "bot.toml").open("rb") as handle:
            text = handle.read(MAX_MANIFEST_READ + 1)
    except OSError:
        return ""
    if len(text) > MAX_MANIFEST_READ:
        return ""
    try:
        found = tomllib.loads(text.decode("utf-8")).get("description")
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return ""
    return found[:MAX_DESCRIPTION] if isinstance(found, str) else ""


@dataclass(frozen=True, slots=True)
class Settling:
    """How far a version's rating is from settled (no longer provisional).

    Attributes:
        settled: Whether it is settled.
        blocks: Blocks it played.
        blocks_needed: Blocks it must play at least.
        width: Its interval's width, or None without one.
        width_needed: The width at most it must have.
    """

    settled: bool
    blocks: int
    blocks_needed: int
    width: float | None
    width_needed: float

    @property
    def share(self) -> float:
        """Progress from 0 to 1: the lesser of the blocks' share and the width's."""
        if self.settled:
            return 1.0
        by_blocks = min(1.0, self.blocks / self.blocks_needed) if self.blocks_needed else 1.0
        by_width = (
            0.0 if self.width is None else min(1.0, self.width_needed / self.width) if self.width else 1.0
        )
        return min(by_blocks, by_width)


def settling(row: TableRow, config: LeagueConfig) -> Settling:
    """The progress of ``row``'s version to a settled rating."""
    width = row.high - row.low if row.high is not None and row.low is not None else None
    return Settling(
        not row.provisional, row.blocks, config.provisional_blocks, width, config.provisional_width
    )


@dataclass(frozen=True, slots=True)
class Chart:
    """The online rating after each block, as an SVG's coordinates (``viewBox`` of
    :attr:`width` × :attr:`height`).

    Attributes:
        points: (x, y) of the rating after each drawn block, left to right.
        band: The band's polygon: its upper edge left to right, then its lower edge back.
        blocks: The first and last block drawn.
        low: The value at the bottom of the plot.
        high: The value at the top.
        last: The last (block, mu, sigma).
    """

    points: tuple[tuple[float, float], ...]
    band: tuple[tuple[float, float], ...]
    blocks: tuple[int, int]
    low: float
    high: float
    last: tuple[int, float, float]
    width: int = 0
    height: int = 0
    sigmas: float = BAND_SIGMAS

    @property
    def line(self) -> str:
        """The points as an SVG ``points`` attribute."""
        return " ".join(f"{x},{y}" for x, y in self.points)

    @property
    def band_line(self) -> str:
        """The band as an SVG ``points`` attribute."""
        return " ".join(f"{x},{y}" for x, y in self.band)


#: The chart's size in SVG units (it scales to its box's width).
CHART_WIDTH, CHART_HEIGHT = 320, 140
#: The plot's margins inside the chart: left (for the axis labels), right, top, bottom.
_LEFT, _RIGHT, _TOP, _BOTTOM = 34, 6, 8, 18


def rating_chart(history: Sequence[tuple[int, float, float]]) -> Chart | None:
    """The chart of ``history`` ((block, mu, sigma) per block, in order), or None when empty."""
    if not history:
        return None
    drawn = list(history)
    if len(drawn) > MAX_CHART_POINTS:
        step = (len(drawn) - 1) / (MAX_CHART_POINTS - 1)
        drawn = [drawn[round(i * step)] for i in range(MAX_CHART_POINTS)]
    width, height = CHART_WIDTH, CHART_HEIGHT
    ups = [mu + BAND_SIGMAS * sigma for _b, mu, sigma in drawn]
    downs = [mu - BAND_SIGMAS * sigma for _b, mu, sigma in drawn]
    low, high = min(downs), max(ups)
    span = (high - low) or 1.0
    first, last = drawn[0][0], drawn[-1][0]

    def x(block: int) -> float:
        if first == last:
            return round((_LEFT + width - _RIGHT) / 2, 1)
        return round(_LEFT + (width - _LEFT - _RIGHT) * (block - first) / (last - first), 1)

    def y(value: float) -> float:
        return round(_TOP + (height - _TOP - _BOTTOM) * (high - value) / span, 1)

    points = tuple((x(b), y(mu)) for b, mu, _s in drawn)
    xs = [px for px, _ in points]
    if len(xs) == 1:  # one block: a band as wide as a mark, around it
        xs = [xs[0] - 4, xs[0] + 4]
        ups, downs = ups * 2, downs * 2
    upper = [(px, y(v)) for px, v in zip(xs, ups, strict=True)]
    lower = [(px, y(v)) for px, v in zip(xs, downs, strict=True)]
    return Chart(points, tuple(upper + lower[::-1]), (first, last), low, high, drawn[-1], width, height)


@dataclass(frozen=True, slots=True)
class Timing:
    """A version's decision times in its newest rated games, by the referee's clock.

    Attributes:
        version: The version.
        games: Games whose records were read.
        decisions: Decisions it made itself (the referee's own decisions for it are left out).
        mean_ms: Their mean time.
        p95_ms: Their 95th percentile (nearest rank).
        bank_mean: The mean share of a game's time bank its seat used (every decision of the
            seat counted), or None when the records name no time bank.
        bank_max: The largest share used in one game.
    """

    version: str
    games: int
    decisions: int
    mean_ms: float
    p95_ms: float
    bank_mean: float | None
    bank_max: float | None


def nearest_rank(values: Sequence[float], share: float) -> float:
    """The nearest-rank percentile (``share`` of 1) of ``values`` (not empty)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


#: Figures read from records, by (database, kind, version, blocks stored): a stored block's games
#: never change, so they hold until the next block.
_CACHE: dict[tuple[str, str, str, int], Any] = {}


def _cache_key(store: LeagueStore, kind: str, vid: str) -> tuple[str, str, str, int]:
    return (str(store.path_in(store.folder).absolute()), kind, vid, store.block_count())


def forget() -> None:
    """Empties the cache of figures read from records (a bench times a first read)."""
    _CACHE.clear()


def _remember(key: tuple[str, str, str, int], value: Any) -> None:
    if len(_CACHE) >= _CACHE_SIZE:
        _CACHE.clear()
    _CACHE[key] = value


def timing(store: LeagueStore, vid: str) -> Timing | None:
    """``vid``'s decision times over its newest :data:`MAX_TIMED_GAMES` rated games (None: no
    record of them holds a decision of its own). Cached until another block is stored."""
    key = _cache_key(store, "timing", vid)
    if key in _CACHE:
        return cast(Timing | None, _CACHE[key])
    times: list[float] = []
    shares: list[float] = []
    games = 0
    for _key, _block, seats, record in store.seat_games(vid, MAX_TIMED_GAMES):
        data = _json(record)
        decisions = data.get("decisions")
        if not isinstance(decisions, list):
            continue
        games += 1
        bank = data.get("time_bank_ms")
        for seat in seats:
            charged = 0.0
            for entry in decisions:
                if not isinstance(entry, dict) or entry.get("seat") != seat:
                    continue
                ms = entry.get("ms", 0.0)
                if not isinstance(ms, int | float) or isinstance(ms, bool) or not math.isfinite(ms):
                    continue
                charged += ms
                if entry.get("by_referee") is None:
                    times.append(float(ms))
            if isinstance(bank, int) and not isinstance(bank, bool) and bank > 0:
                shares.append(charged / bank)
    found = (
        Timing(
            vid,
            games,
            len(times),
            sum(times) / len(times),
            nearest_rank(times, 0.95),
            sum(shares) / len(shares) if shares else None,
            max(shares) if shares else None,
        )
        if times
        else None
    )
    _remember(key, found)
    return found


@dataclass(frozen=True, slots=True)
class FaultGame:
    """A game in which a version's seat had a fault or failed.

    Attributes:
        key: The game.
        block: Its block.
        seats: The version's seats with a fault or a failure.
        reasons: ``kind: detail`` of each fault the record holds for those seats.
    """

    key: str
    block: int
    seats: tuple[int, ...]
    reasons: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Faults:
    """A version's faults: in all, and its newest games with one.

    Attributes:
        version: The version.
        games: Its rated games.
        faults: Its faults in them.
        listed: Its newest :data:`MAX_FAULT_GAMES` games with a fault or a failed seat.
    """

    version: str
    games: int
    faults: int
    listed: tuple[FaultGame, ...]

    @property
    def per_game(self) -> float:
        """Faults per rated game."""
        return self.faults / self.games if self.games else 0.0


def faults(store: LeagueStore, vid: str) -> Faults:
    """``vid``'s faults, with the reasons its game records give (cached until another block)."""
    cached = _cache_key(store, "faults", vid)
    if cached in _CACHE:
        return cast(Faults, _CACHE[cached])
    games, count, rows = store.fault_games(vid, MAX_FAULT_GAMES)
    listed = []
    for key, block, seats, record in rows:
        entries = _json(record).get("faults")
        reasons = tuple(
            f"{entry.get('kind', '?')}: {entry.get('detail', '')}"
            for entry in (entries if isinstance(entries, list) else [])
            if isinstance(entry, dict) and entry.get("seat") in seats
        )
        listed.append(
            FaultGame(key, block, tuple(seats), reasons or ("its seat failed: see the game's record",))
        )
    found = Faults(vid, games, count, tuple(listed))
    _remember(cached, found)
    return found


def _json(text: str) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def version_profile(
    store: LeagueStore, version: Version, rows: Sequence[TableRow], own: bool
) -> dict[str, Any]:
    """What a page shows of one version: its chart and progress to settled, and for its own
    entrant (``own``) its decision times and faults with their reasons."""
    row = next((r for r in rows if r.version == version.id), None)
    return {
        "version": version.id,
        "chart": rating_chart(store.history(version.id)),
        "settling": settling(row, store.config) if row is not None and row.status == ACTIVE else None,
        "timing": timing(store, version.id) if own else None,
        "faults": faults(store, version.id) if own else None,
    }
