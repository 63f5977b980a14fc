"""Who plays the next block, and in which seats: a pure, seeded function of the league's state.

The table is built greedily. First comes the *lane*: a version that played fewer than
``lane_blocks`` blocks (a new or updated one) is seated before anything else, the one with the
fewest blocks first, then the oldest upload (the candidates come in upload order); every other
lane version that may sit with those seated follows in the same order, so a new version plays
the very next block and has a provisional rating within minutes. The lane only reorders a
version's first blocks: it plays them sooner, and no more of them. Then, or without lane
versions, the first entrant is the one with the fewest blocks (a new version
whose rating has not settled counts ``new_bonus`` blocks fewer, so it gets extra games); ties go
to a seeded draw. Each next seat goes to the entrant with the lowest cost, a sum of:

* its blocks played above the fewest (keeps games per active version even),
* how often it already met the entrants seated so far, against the fewest such meetings
  (prefers pairs that met least, so that the top entrants do meet),
* how far its online rating (the league's rating model's point estimate) is from the table's
  mean, in units of the model's rating scale, scaled by
  a seeded random ``spread`` per block (entrants of similar rating sit together, with a
  random spread so that the table is not always the same band),
* a small seeded jitter that breaks ties.

An entrant may have several active versions (``update --keep``): once one of them is seated,
the others are out of this table, so no table holds two versions of one entrant. Entrants of one
*side* (a declared team, or entrants the organiser linked: :meth:`LeagueStore.sides`) are kept
apart the same way: once one is seated, every version of the others is out of the table. With
fewer sides than seats, every side sits and the extra seats go to those seated with the fewest
blocks, in turn (as tournaments fill a table). The seat order is a seeded shuffle; the
block plays it in every rotation anyway.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

#: Weight of the blocks-played term (per block above the fewest).
W_GAMES = 4.0
#: Weight of the meetings term (per meeting above the fewest, summed over seated entrants).
W_MEET = 1.0
#: Weight of the rating term (per rating-scale unit from the table's mean).
W_RATING = 1.5
#: The online rating scale of OpenSkill's models (their default sigma); a league passes its
#: model's (:attr:`~hearts_tournaments.league.rating_models.RatingModel.scale`).
RATING_SCALE = 25 / 3


@dataclass(frozen=True, slots=True)
class Candidate:
    """An active version as matchmaking sees it.

    Attributes:
        id: The version's id.
        entrant: Its entrant's name.
        blocks: Blocks it played.
        mu: Its online rating: the league's rating model's point estimate.
        sigma: The uncertainty of that rating (the model's), compared with ``settled_sigma``.
        side: Who it is kept apart from: versions of one side never share a table (empty: its
            entrant alone).
    """

    id: str
    entrant: str
    blocks: int
    mu: float
    sigma: float
    side: str = ""

    @property
    def apart(self) -> str:
        """What no other version at its table may share with it: its side, else its entrant."""
        return self.side or self.entrant


def choose_table(
    candidates: Sequence[Candidate],
    table_size: int,
    meetings: Mapping[tuple[str, str], int],
    rng: random.Random,
    new_bonus: float = 3.0,
    settled_sigma: float = 4.0,
    spread: float = 1.0,
    lane_blocks: int = 0,
    rating_scale: float = RATING_SCALE,
) -> tuple[str, ...]:
    """The versions at each seat of the next block.

    Args:
        candidates: The active versions (of at least two entrants), in upload order.
        table_size: Seats.
        meetings: Blocks shared so far by each pair of versions (keys sorted).
        rng: The block's seeded generator.
        new_bonus: Blocks of priority of a version whose sigma is above ``settled_sigma``.
        settled_sigma: See ``new_bonus``.
        spread: Scale of the random factor on the rating term.
        lane_blocks: Versions that played fewer blocks than this are seated first (0: no lane).
        rating_scale: The unit of the rating term (the rating model's scale).

    Raises:
        ValueError: fewer than two sides among the candidates, or a version listed twice.
    """
    if len({c.apart for c in candidates}) < 2:
        raise ValueError("a block needs active versions of at least two entrants who may meet")
    if len({c.id for c in candidates}) != len(candidates):
        raise ValueError("a version is listed twice")

    def need(c: Candidate) -> float:
        return c.blocks - (new_bonus if c.sigma > settled_sigma else 0.0)

    jitter = {c.id: rng.random() for c in candidates}
    rating_weight = W_RATING * rng.uniform(max(0.0, 1 - spread), 1 + spread)
    floor = min(need(c) for c in candidates)
    chosen: list[Candidate] = []
    rest = list(candidates)
    lane = sorted(
        (i for i, c in enumerate(candidates) if c.blocks < lane_blocks),
        key=lambda i: (candidates[i].blocks, i),
    )
    for i in lane:
        c = candidates[i]
        if len(chosen) < table_size and any(r.id == c.id for r in rest):
            chosen.append(c)
            rest = [r for r in rest if r.apart != c.apart]
    if not chosen:
        first = min(candidates, key=lambda c: (need(c), jitter[c.id]))
        chosen = [first]
        rest = [c for c in candidates if c.apart != first.apart]
    while rest and len(chosen) < table_size:
        mean_mu = sum(c.mu for c in chosen) / len(chosen)
        met = {c.id: sum(meetings.get(_pair(c.id, s.id), 0) for s in chosen) for c in rest}
        least = min(met.values())

        def cost(
            c: Candidate, met: dict[str, int] = met, least: int = least, mean_mu: float = mean_mu
        ) -> float:
            return (
                W_GAMES * (need(c) - floor)
                + W_MEET * (met[c.id] - least)
                + rating_weight * abs(c.mu - mean_mu) / rating_scale
                + 0.01 * jitter[c.id]
            )

        best = min(rest, key=cost)
        chosen.append(best)
        rest = [c for c in rest if c.apart != best.apart]
    seats = [c.id for c in chosen]
    extra = sorted(chosen, key=lambda c: (need(c), jitter[c.id]))
    i = 0
    while len(seats) < table_size:
        seats.append(extra[i % len(extra)].id)
        i += 1
    rng.shuffle(seats)
    return tuple(seats)


def _pair(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a < b else (b, a)


def meeting_counts(tables: Sequence[Sequence[str]]) -> dict[tuple[str, str], int]:
    """Blocks shared by each pair of versions, from the stored blocks' seatings."""
    out: dict[tuple[str, str], int] = {}
    for seats in tables:
        present = sorted(set(seats))
        for i, a in enumerate(present):
            for b in present[i + 1 :]:
                out[(a, b)] = out.get((a, b), 0) + 1
    return out
