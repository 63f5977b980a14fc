"""The final of a frozen season: duplicate deals among the finalists, allocated where the top
places are not yet separated, until they are or a budget of deals is spent.

The finalists are the versions active when ``hearts league final`` first runs, once the season
froze (no version can be added since). Each deal of the final is a league block (one deal in
every seat rotation, stored, rated and signed as every block is), played by ``run``'s own loop
(:func:`.play.run_league`) with this module's planner instead of matchmaking; the league's
``run`` refuses to play once a final began, so the final's blocks are the league's last.

After each block, :func:`final_status` fits the final's blocks alone with the standings' own
strength model (:func:`~hearts_tournaments.results.stats.bootstrap_plackett_luce`, a bootstrap
over deals) and applies their separation rule
(:func:`~hearts_tournaments.results.stats.separate_neighbours`) to the ``top`` boundaries
(1|2, ..., K|K+1): each is a two-sided test of a zero strength difference, taken resample by
resample, and Benjamini-Hochberg at 5% across the K tests says which are separated, as a
tournament's tiers are. The final is decided when the ``top`` boundaries are all separated (which
is the same as every boundary's own 95% interval lying above zero: the correction only holds back
some boundaries while others are in doubt). A place is established when the boundaries above and
below it are.

:func:`plan_final_block` seats the next deal: until every finalist has an interval, every
finalist in turn (fewest deals first); then only the **contenders**, the finalists on either side
of a boundary not yet separated, each taking several seats when they are fewer than the table's.
The deals go where the order is in doubt, and none to places already established
(``bench/final.py`` measures the games this saves against a uniform schedule).

With ``--luck-correction`` (chosen when the final begins, kept for all of it) the fit is the
standings' luck-corrected one (docs/TOURNAMENTS.md, *Luck correction*): each stored game's luck
terms from its record (deal terms by play-outs of the reference policy; action terms at every
decision of a finalist whose policy is known, a built-in ``random`` version), coefficients
cross-fitted over the final's other deals (each corrected place keeps its expectation), and the
fit moved by one Newton step to the corrected places. A deal of the final is played in every
seat rotation, so each finalist's deal terms sum to the same over a deal and cancel in the fit:
only action terms can move it, and a final among finalists of unknown policy fits as it would
uncorrected (``bench/final.py --real --luck`` measures both cases).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hearts_core.deal import derive_seed
from hearts_core.record import GameRecord, RecordFileError
from hearts_tournaments.arena.outcome import GameOutcome
from hearts_tournaments.league.config import LeagueError
from hearts_tournaments.league.play import FINAL_META, StopAfter, run_league
from hearts_tournaments.league.store import (
    ACTIVE,
    FINAL_ENDED_META,
    FINAL_REPORT_META,
    LeagueStore,
    Snapshot,
    utc_text,
)
from hearts_tournaments.results.stats import Interval, bootstrap_plackett_luce, separate_neighbours
from hearts_tournaments.results.stats.luck import (
    KNOWN_POLICIES,
    GameLuck,
    LuckError,
    LuckGame,
    LuckSettings,
    correct,
    game_luck,
    midranks,
)

#: The report written beside ``published.json`` (which holds it too, signed).
FINAL_REPORT = "final.json"


@dataclass(frozen=True, slots=True)
class Boundary:
    """Two neighbours of the final's ranking: place ``place`` (``above``) and ``place + 1``."""

    place: int
    above: str
    below: str
    difference: float
    interval: Interval | None
    separated: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "place": self.place,
            "above": self.above,
            "below": self.below,
            "difference": round(self.difference, 6),
            "interval": None
            if self.interval is None
            else [round(self.interval.low, 6), round(self.interval.high, 6)],
            "separated": self.separated,
        }


@dataclass(frozen=True, slots=True)
class FinalStatus:
    """Where the final stands after its deals so far.

    Attributes:
        top: The places it decides (K).
        order: The finalists that played, strongest first.
        strength: Their strengths (centred log-strengths of the final's fit).
        interval: Their 95% intervals (None: fewer than two deals).
        boundaries: Place ``i`` against place ``i + 1`` for ``i`` in ``1..K`` (fewer with fewer
            finalists).
        deals: Deals played.
    """

    top: int
    order: tuple[str, ...]
    strength: Mapping[str, float]
    interval: Mapping[str, Interval | None]
    boundaries: tuple[Boundary, ...]
    deals: int

    @property
    def fitted(self) -> bool:
        """Every finalist that played has an interval (so the boundaries can be read)."""
        return bool(self.order) and all(self.interval.get(v) is not None for v in self.order)

    @property
    def decided(self) -> bool:
        """Every boundary of the top places is separated."""
        return self.fitted and all(b.separated for b in self.boundaries)

    def established(self) -> list[int]:
        """The places (1-based, at most K) whose holder is established."""
        if not self.fitted:
            return []
        out = []
        for place in range(1, min(self.top, len(self.order)) + 1):
            above = place == 1 or self.boundaries[place - 2].separated
            below = place - 1 >= len(self.boundaries) or self.boundaries[place - 1].separated
            if above and below:
                out.append(place)
        return out

    def contenders(self) -> list[str]:
        """The finalists on either side of a boundary not yet separated, in ranking order."""
        doubtful = {v for b in self.boundaries if not b.separated for v in (b.above, b.below)}
        return [v for v in self.order if v in doubtful]

    def to_json(self) -> dict[str, Any]:
        established = self.established()
        return {
            "top": self.top,
            "deals": self.deals,
            "decided": self.decided,
            "established": established,
            "places": [
                {
                    "place": i + 1,
                    "version": v,
                    "strength": round(self.strength[v], 6),
                    "interval": None
                    if (ci := self.interval.get(v)) is None
                    else [round(ci.low, 6), round(ci.high, 6)],
                    "established": i + 1 in established,
                }
                for i, v in enumerate(self.order)
            ],
            "boundaries": [b.to_json() for b in self.boundaries],
        }


def final_status(
    blocks: Mapping[int, Sequence[GameOutcome]],
    finalists: Sequence[str],
    top: int,
    samples: int,
    seed: str,
    luck: Mapping[str, GameLuck] | None = None,
) -> FinalStatus:
    """The final's standing after ``blocks`` (its deals only), the finalists' seats only;
    luck-corrected with ``luck``, every game's luck terms by key."""
    wanted = set(finalists)
    clusters = []
    kept: list[tuple[int, list[GameOutcome]]] = []
    for number in sorted(blocks):
        rated = [o for o in blocks[number] if len({v for v in o.seats if v in wanted}) >= 2]
        if rated:
            clusters.append(
                [[(v, p) for v, p in zip(o.seats, o.places, strict=True) if v in wanted] for o in rated]
            )
            kept.append((number, rated))
    corrections = None
    if luck is not None:
        fixed = iter(
            correct([LuckGame(n, o.seats, o.places, luck[o.key]) for n, rated in kept for o in rated])
        )
        corrections = [
            [
                tuple(
                    (v, m, c.midrank)
                    for v, m, c in zip(o.seats, midranks(o.places), next(fixed), strict=True)
                    if v in wanted
                )
                for o in rated
            ]
            for _, rated in kept
        ]
    fit = bootstrap_plackett_luce(clusters, samples=samples, seed=seed, corrections=corrections)
    order = tuple(sorted(fit.strength, key=lambda v: (-fit.strength[v], v)))
    tests = separate_neighbours(fit, order[: top + 1])
    boundaries = [
        Boundary(i + 1, t.a, t.b, t.difference, t.interval, t.separated) for i, t in enumerate(tests)
    ]
    return FinalStatus(top, order, fit.strength, fit.interval, tuple(boundaries), len(clusters))


def plan_final_block(
    status: FinalStatus | None,
    finalists: Sequence[str],
    played: Mapping[str, int],
    table_size: int,
    rng: random.Random,
    adaptive: bool = True,
) -> tuple[str, ...]:
    """The seating of the final's next deal (``table_size`` seats, some finalists taking several).

    Until every finalist has an interval, or with ``adaptive`` off (a uniform schedule), every
    finalist in turn, fewest deals (``played``) first; then the contenders only.
    """
    every = list(finalists)
    pool = every
    if adaptive and status is not None and status.fitted and set(status.order) == set(finalists):
        pool = status.contenders() or every
    pool = list(pool)
    rng.shuffle(pool)
    pool.sort(key=lambda v: played.get(v, 0))
    chosen = pool[:table_size]
    seats = [chosen[i % len(chosen)] for i in range(table_size)]
    rng.shuffle(seats)
    return tuple(seats)


@dataclass(frozen=True, slots=True)
class FinalSettings:
    """The final's settings, fixed when it begins (the league's meta ``final``)."""

    top: int
    finalists: tuple[str, ...]
    first_block: int
    frozen_at: float
    #: The luck correction's play-outs, or None for a final without it.
    luck: LuckSettings | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "top": self.top,
            "finalists": list(self.finalists),
            "first_block": self.first_block,
            "frozen_at": self.frozen_at,
            "luck_correction": None if self.luck is None else self.luck.to_json(),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> FinalSettings:
        luck = data.get("luck_correction")  # absent from a final begun before it existed
        return cls(
            int(data["top"]),
            tuple(data["finalists"]),
            int(data["first_block"]),
            float(data["frozen_at"]),
            None
            if luck is None
            else LuckSettings(str(luck["policy"]), int(luck["rollouts"]), str(luck["seed"])),
        )


def final_settings(store: LeagueStore) -> FinalSettings | None:
    """The final's settings once it began, else None."""
    raw = store.meta_or(FINAL_META, "")
    return FinalSettings.from_json(json.loads(raw)) if raw else None


def begin_final(store: LeagueStore, top: int, luck: bool = False) -> FinalSettings:
    """The final's settings: those stored (a final cut short goes on), or new ones from the
    versions active now, stored; ``luck``: luck-corrected.

    Raises:
        LeagueError: the season is not frozen (or not yet), fewer than two finalists, a ``top``
            out of range, or a final begun with another ``top`` or the other way of correcting.
    """
    if top < 1:
        raise LeagueError("--top must be at least 1")
    found = final_settings(store)
    if found is not None:
        if found.top != top:
            raise LeagueError(
                f"this league's final decides the top {found.top}: run it with --top {found.top}"
            )
        if (found.luck is not None) != luck:
            began = "with" if found.luck is not None else "without"
            raise LeagueError(
                f"this league's final began {began} --luck-correction: run it {began} it (one final, "
                "one way of correcting)"
            )
        return found
    frozen_at = store.frozen_at()
    if frozen_at is None:
        raise LeagueError(
            "the season is not frozen: `hearts league freeze` it first (its finalists are fixed then)"
        )
    if store.clock() < frozen_at:
        raise LeagueError(f"the season freezes at {utc_text(frozen_at)}: the final is played after that")
    finalists = tuple(v.id for v in store.versions() if v.status == ACTIVE)
    if len(finalists) < 2:
        raise LeagueError(f"{len(finalists)} active version(s): a final needs two finalists or more")
    if top >= len(finalists):
        raise LeagueError(f"--top {top} with {len(finalists)} finalists: it must be fewer than the finalists")
    settings = FinalSettings(top, finalists, store.next_block(), frozen_at, LuckSettings() if luck else None)
    store.set_meta(FINAL_META, json.dumps(settings.to_json()))
    return settings


def status_of(
    store: LeagueStore, settings: FinalSettings, terms: dict[str, GameLuck] | None = None
) -> FinalStatus:
    """The final's standing from its stored blocks (``terms``: the luck terms computed so far,
    by game key, added to as games are read).

    Raises:
        LeagueError: a luck-corrected final whose stored record of a game cannot be replayed.
    """
    blocks = {n: games for n, games in store.block_games().items() if n >= settings.first_block}
    config = store.config
    luck = None
    if settings.luck is not None:
        luck = terms if terms is not None else {}
        known = {
            v.id: str(v.spec.builtin)
            for v in store.versions()
            if v.spec.builtin in KNOWN_POLICIES and not v.spec.options
        }
        for games in blocks.values():
            for game in games:
                if game.key not in luck:
                    seats = {s: known[v] for s, v in enumerate(game.seats) if v in known}
                    luck[game.key] = _luck_of(store, game.key, settings.luck, seats)
    return final_status(
        blocks,
        settings.finalists,
        settings.top,
        config.bootstrap,
        derive_seed(config.seed, "final", "bootstrap"),
        luck,
    )


def _luck_of(store: LeagueStore, key: str, settings: LuckSettings, known: Mapping[int, str]) -> GameLuck:
    text = store.record(key)
    try:
        if text is None:
            raise LuckError("no record is stored")
        return game_luck(GameRecord.read(text, name=f"the record of game {key}"), settings, known)
    except (LuckError, RecordFileError) as exc:
        raise LeagueError(f"the final's luck correction cannot read game {key}: {exc}") from None


def final_report(
    store: LeagueStore, settings: FinalSettings, status: FinalStatus, budget: int
) -> dict[str, Any]:
    """What the final established, as ``final.json`` and ``published.json`` (signed) hold it."""
    return {
        "league_id": store.meta("league_id"),
        "frozen_at": utc_text(settings.frozen_at),
        "finalists": list(settings.finalists),
        "first_block": settings.first_block,
        "budget": budget,
        "games": sum(len(g) for n, g in store.block_games().items() if n >= settings.first_block),
        "luck_correction": None if settings.luck is None else settings.luck.to_json(),
        **status.to_json(),
    }


def report_line(status: FinalStatus, budget: int) -> str:
    """The final's verdict in a line."""
    established = status.established()
    places = ", ".join(f"{p}. {status.order[p - 1]}" for p in established) or "none"
    if status.decided:
        return f"final decided after {status.deals} deals: the top {status.top} are established ({places})"
    doubtful = ", ".join(
        f"{b.place}|{b.place + 1} ({b.above} vs {b.below})" for b in status.boundaries if not b.separated
    )
    return (
        f"final stopped at its budget of {budget} deals, not decided: places established: {places}; "
        f"not separated: {doubtful}"
    )


def run_final(
    store: LeagueStore,
    top: int,
    budget: int,
    concurrency: int = 1,
    emit: Callable[[str], None] = lambda line: None,
    executor: str | None = None,
    ray_address: str | None = None,
    luck: bool = False,
) -> tuple[FinalStatus, dict[str, Any]]:
    """Plays the final until its top ``top`` places are separated or it played ``budget`` deals
    in all (a final cut short goes on where it stopped); stores, signs and writes its report.
    ``luck``: luck-corrected (fixed when the final begins).

    Returns:
        Its standing and its report (as ``final.json`` holds it).

    Raises:
        LeagueError: see :func:`begin_final` and :func:`.play.run_league`.
    """
    if budget < 1:
        raise LeagueError("--budget must be at least 1 deal")
    settings = begin_final(store, top, luck)
    config = store.config
    cached: dict[int, FinalStatus] = {}
    terms: dict[str, GameLuck] = {}  # each game's luck terms, computed once

    def status() -> FinalStatus:
        count = store.block_count()
        if count not in cached:
            cached.clear()
            cached[count] = status_of(store, settings, terms)
        return cached[count]

    def played() -> int:
        return sum(1 for number, *_ in store.block_rows() if number >= settings.first_block)

    def plan(league: LeagueStore, snapshot: Snapshot) -> tuple[str, ...] | None:
        now = status()
        active = {v.id for v in snapshot.versions if v.status == ACTIVE}
        finalists = [v for v in settings.finalists if v in active]  # a finalist retired meanwhile is out
        if len(finalists) < 2:
            return None
        counts: dict[str, int] = {}
        for number, _seed, seats, _seen in league.block_rows():
            if number >= settings.first_block:
                for v in set(seats):
                    counts[v] = counts.get(v, 0) + 1
        rng = random.Random(derive_seed(config.seed, "final", "seats", league.next_block()))
        return plan_final_block(now, finalists, counts, config.table_size, rng)

    def finished() -> bool:
        done = status()
        if done.fitted:
            separated = sum(1 for b in done.boundaries if b.separated)
            emit(f"final: {done.deals} deals; {separated} of {len(done.boundaries)} boundaries separated")
        return done.decided or played() >= budget

    left = budget - played()
    if left > 0 and not status().decided:
        run_league(
            store,
            StopAfter(blocks=left),
            concurrency,
            emit,
            executor,
            ray_address,
            planner=plan,
            finished=finished,
        )
    done = status()
    report = final_report(store, settings, done, budget)
    store.set_meta(FINAL_REPORT_META, json.dumps(report, sort_keys=True))
    store.set_meta(FINAL_ENDED_META, repr(store.clock()))
    store.publish(store.folder)  # published.json, signed, now holds the report
    (store.folder / FINAL_REPORT).write_text(json.dumps(report, indent=2) + "\n")
    return done, report
