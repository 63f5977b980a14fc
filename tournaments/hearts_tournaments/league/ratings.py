"""League ratings: the online OpenSkill update and the official batch Plackett-Luce table.

* Online: the league's rating model (:mod:`.rating_models`, OpenSkill's Plackett-Luce unless
  its settings name another; :func:`online_update` is that default on (mu, sigma) pairs),
  updated with each game of a block in rotation order, stored in the block's transaction. It
  depends on the order of blocks, and is used only for matchmaking and the live view.
* Official (:func:`official_table`): :func:`~hearts_tournaments.results.stats.bootstrap_plackett_luce`
  over every stored block (a block is one cluster of the bootstrap), restricted to the games'
  seats of active versions. It depends on the set of blocks only, so the same stored games
  always give the same table. Pinned reference versions fix the scale: the fit is shifted so
  that the mean strength of the pinned versions equals the mean of their pinned values.
  The table is sorted by the fitted strength (the fit's prior draws a version with few games
  towards the field's mean); a version is provisional, and marked so, until it has played
  ``provisional_blocks`` blocks and its interval is at most ``provisional_width`` wide. (Ranked
  by the interval's lower end instead, the published order of a 50-entrant league reached a
  rank correlation of 0.9 with the truth 10 to 30 blocks after the strength did:
  ``bench/league.py``.)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from hearts_tournaments.arena.outcome import GameOutcome
from hearts_tournaments.league.rating_models import DEFAULT_RATING, RATING_MODELS
from hearts_tournaments.results.stats import PlacedGame, bootstrap_plackett_luce


def online_update(
    outcomes: Sequence[GameOutcome], start: Mapping[str, tuple[float, float]]
) -> dict[str, tuple[float, float]]:
    """The default model's (``openskill-pl``) online ratings of a block's versions after its games.

    Args:
        outcomes: The block's games in rotation order.
        start: (mu, sigma) before the block (a version missing starts at OpenSkill's default).
    """
    states = RATING_MODELS[DEFAULT_RATING].update(
        outcomes, {v: {"mu": mu, "sigma": sigma} for v, (mu, sigma) in start.items()}
    )
    return {v: (state["mu"], state["sigma"]) for v, state in states.items()}


@dataclass(frozen=True, slots=True)
class TableRow:
    """One version in the official table.

    Attributes:
        rank: 1 for the best strength (versions without one last).
        version: The version's id.
        status: Its status.
        strength: Plackett-Luce log-strength (pinned scale), or None if it played no block.
        low: Lower end of its interval, or None.
        high: Upper end, or None.
        blocks: Blocks played.
        games: Rated games played.
        provisional: Whether the rating is still provisional.
        pinned: Its pinned strength for a reference version, else None.
        online: Its online rating: the league's rating model's parameters (``mu`` and ``sigma``
            for OpenSkill's), each None when it has none (or the table leaves them out).
    """

    rank: int
    version: str
    status: str
    strength: float | None
    low: float | None
    high: float | None
    blocks: int
    games: int
    provisional: bool
    pinned: float | None
    online: Mapping[str, float | None]

    @property
    def score(self) -> float | None:
        """What the table is sorted by, as its JSON names it: the strength (None without one)."""
        return self.strength

    @property
    def state(self) -> dict[str, float] | None:
        """Its online rating state, or None without one."""
        if not self.online or any(v is None for v in self.online.values()):
            return None
        return {k: float(v) for k, v in self.online.items() if v is not None}

    def to_json(self) -> dict[str, Any]:
        """The row with numbers rounded to 6 digits (bit-identical for the same games)."""

        def r(x: float | None) -> float | None:
            return None if x is None else round(x, 6)

        return {
            "rank": self.rank,
            "version": self.version,
            "status": self.status,
            "strength": r(self.strength),
            "low": r(self.low),
            "high": r(self.high),
            "score": r(self.score),
            "blocks": self.blocks,
            "games": self.games,
            "provisional": self.provisional,
            "pinned": self.pinned,
            **{name: r(value) for name, value in self.online.items()},
        }


def official_table(
    blocks: Mapping[int, Sequence[GameOutcome]],
    versions: Sequence[tuple[str, str, float | None]],
    online: Mapping[str, Mapping[str, float]],
    samples: int,
    seed: str,
    provisional_blocks: int,
    provisional_width: float,
    include: frozenset[str] | None = None,
    parameters: Sequence[str] = tuple(RATING_MODELS[DEFAULT_RATING].defaults),
) -> list[TableRow]:
    """The official table of the versions in ``include`` (default: every version listed).

    Args:
        blocks: Stored blocks' games, by block number.
        versions: (id, status, pinned) of the versions to list, in a fixed order.
        online: The online rating state per version (the league model's parameters).
        samples: Bootstrap resamples.
        seed: Seeds the bootstrap.
        provisional_blocks: Blocks before a version can stop being provisional.
        provisional_width: Interval width at which it stops.
        include: The versions whose seats are fitted (others' seats are dropped from games).
        parameters: The rating model's parameters, listed per row (None without a state).
    """
    wanted = include if include is not None else frozenset(v for v, _, _ in versions)
    clusters: list[list[PlacedGame]] = []
    block_count: dict[str, int] = {}
    game_count: dict[str, int] = {}
    for number in sorted(blocks):
        games: list[PlacedGame] = []
        present: set[str] = set()
        for outcome in blocks[number]:
            seated = [(v, p) for v, p in zip(outcome.seats, outcome.places, strict=True) if v in wanted]
            if len({v for v, _ in seated}) >= 2:
                games.append(seated)
            for v in set(outcome.seats):
                game_count[v] = game_count.get(v, 0) + 1
                present.add(v)
        for v in present:
            block_count[v] = block_count.get(v, 0) + 1
        if games:
            clusters.append(games)
    fit = bootstrap_plackett_luce(clusters, samples=samples, seed=seed)
    pins = [(fit.strength[v], pin) for v, _, pin in versions if pin is not None and v in fit.strength]
    shift = sum(p - s for s, p in pins) / len(pins) if pins else 0.0
    rows = []
    for vid, status, pin in versions:
        strength = fit.strength.get(vid)
        interval = fit.interval.get(vid)
        low = high = None
        if strength is not None:
            strength += shift
            if interval is not None:
                low, high = interval.low + shift, interval.high + shift
        played = block_count.get(vid, 0)
        provisional = (
            played < provisional_blocks or low is None or high is None or (high - low > provisional_width)
        )
        state = online.get(vid)
        rows.append(
            TableRow(
                0,
                vid,
                status,
                strength,
                low,
                high,
                played,
                game_count.get(vid, 0),
                provisional,
                pin,
                {p: float(state[p]) if state is not None else None for p in parameters},
            )
        )
    rows.sort(key=lambda r: (r.strength is None, -(r.strength or 0.0), r.version))
    return [replace(r, rank=i + 1) for i, r in enumerate(rows)]
