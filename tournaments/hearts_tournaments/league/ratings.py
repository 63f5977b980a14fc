"""League ratings: the online OpenSkill update and the official batch Plackett-Luce table.

* Online (:func:`online_update`): OpenSkill's Plackett-Luce model, updated with each game of
  a block in rotation order, stored in the block's transaction. It depends on the order of
  blocks, and is used only for matchmaking and the live view.
* Official (:func:`official_table`): :func:`~hearts_tournaments.results.stats.bootstrap_plackett_luce`
  over every stored block (a block is one cluster of the bootstrap), restricted to the games'
  seats of active versions. It depends on the set of blocks only, so the same stored games
  always give the same table. Pinned reference versions fix the scale: the fit is shifted so
  that the mean strength of the pinned versions equals the mean of their pinned values.
  The table is sorted by a conservative score (the interval's lower end, or strength minus
  :data:`NO_INTERVAL_PENALTY` without one); a version is provisional until it has played
  ``provisional_blocks`` blocks and its interval is at most ``provisional_width`` wide.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from openskill.models import PlackettLuce

from hearts_tournaments.arena.outcome import GameOutcome
from hearts_tournaments.results.stats import PlacedGame, bootstrap_plackett_luce

#: The conservative score of a version with no interval yet: its strength minus this.
NO_INTERVAL_PENALTY = 3.0


def online_update(
    outcomes: Sequence[GameOutcome], start: Mapping[str, tuple[float, float]]
) -> dict[str, tuple[float, float]]:
    """The online ratings of a block's versions after its games.

    Args:
        outcomes: The block's games in rotation order.
        start: Ratings before the block (a version missing starts at OpenSkill's default).
    """
    model = PlackettLuce()
    default = model.rating()
    ratings = {v: start.get(v, (float(default.mu), float(default.sigma))) for o in outcomes for v in o.seats}
    for outcome in outcomes:
        teams = [[model.rating(mu=ratings[v][0], sigma=ratings[v][1])] for v in outcome.seats]
        updated = model.rate(teams, ranks=list(outcome.places))
        seats_of: dict[str, list[int]] = {}
        for seat, v in enumerate(outcome.seats):
            seats_of.setdefault(v, []).append(seat)
        for v, seats in seats_of.items():
            ratings[v] = (
                sum(float(updated[s][0].mu) for s in seats) / len(seats),
                sum(float(updated[s][0].sigma) for s in seats) / len(seats),
            )
    return ratings


@dataclass(frozen=True, slots=True)
class TableRow:
    """One version in the official table.

    Attributes:
        rank: 1 for the best conservative score.
        version: The version's id.
        status: Its status.
        strength: Plackett-Luce log-strength (pinned scale), or None if it played no block.
        low: Lower end of its interval, or None.
        high: Upper end, or None.
        score: The conservative score the table is sorted by.
        blocks: Blocks played.
        games: Rated games played.
        provisional: Whether the rating is still provisional.
        pinned: Its pinned strength for a reference version, else None.
        mu: Online rating mean.
        sigma: Online rating uncertainty.
    """

    rank: int
    version: str
    status: str
    strength: float | None
    low: float | None
    high: float | None
    score: float | None
    blocks: int
    games: int
    provisional: bool
    pinned: float | None
    mu: float | None
    sigma: float | None

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
            "mu": r(self.mu),
            "sigma": r(self.sigma),
        }


def official_table(
    blocks: Mapping[int, Sequence[GameOutcome]],
    versions: Sequence[tuple[str, str, float | None]],
    online: Mapping[str, tuple[float, float]],
    samples: int,
    seed: str,
    provisional_blocks: int,
    provisional_width: float,
    include: frozenset[str] | None = None,
) -> list[TableRow]:
    """The official table of the versions in ``include`` (default: every version listed).

    Args:
        blocks: Stored blocks' games, by block number.
        versions: (id, status, pinned) of the versions to list, in a fixed order.
        online: Online (mu, sigma) per version.
        samples: Bootstrap resamples.
        seed: Seeds the bootstrap.
        provisional_blocks: Blocks before a version can stop being provisional.
        provisional_width: Interval width at which it stops.
        include: The versions whose seats are fitted (others' seats are dropped from games).
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
        low = high = score = None
        if strength is not None:
            strength += shift
            if interval is not None:
                low, high = interval.low + shift, interval.high + shift
                score = low
            else:
                score = strength - NO_INTERVAL_PENALTY
        played = block_count.get(vid, 0)
        provisional = (
            played < provisional_blocks or low is None or high is None or (high - low > provisional_width)
        )
        mu_sigma = online.get(vid)
        rows.append(
            TableRow(
                0,
                vid,
                status,
                strength,
                low,
                high,
                score,
                played,
                game_count.get(vid, 0),
                provisional,
                pin,
                mu_sigma[0] if mu_sigma else None,
                mu_sigma[1] if mu_sigma else None,
            )
        )
    rows.sort(key=lambda r: (r.score is None, -(r.score or 0.0), r.version))
    return [replace(r, rank=i + 1) for i, r in enumerate(rows)]
