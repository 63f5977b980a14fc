"""What every part of the schedule shares: the searches' budgets, the seat labels, the seatings
and where a deal's games put each position."""

from __future__ import annotations

import enum
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from hearts_tournaments.tournament.layouts import NOTES, SQUARES

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


#: A callback for progress lines (``progress("pairs: ...")``); the schedule itself never prints.
Progress = Callable[[str], None]


#: Candidate tables scored per local-search step (all at once, with numpy).
CANDIDATE_TABLES = 16


#: Pair search: most steps, and most steps without a better cost (per table, within bounds).
PAIR_STEPS, PAIR_PATIENCE = 60_000, (6_000, 100, 8_000)


#: Further within-one searches (from a greedy fill, then other base blocks, in turn) with at
#: most SUGGEST_SEARCH_BOTS bots (not in suggest_deals).
PAIR_RESTARTS = 4


#: The last within-one search for few bots (not in suggest_deals): a tabu search scoring every
#: swap; most steps, most steps times tables^2 times bots^2, least steps worth running, and
#: how long a bot may not return to a table it left.
TABU_STEPS, TABU_WORK, TABU_LEAST, TABU_TENURE = 8_000, 2_500_000_000, 500, 8


#: The within-one search's most steps with more than SUGGEST_SEARCH_BOTS bots.
PAIR_STEPS_MANY_BOTS = 15_000


#: The widened (spread 2) search, run when within one is impossible or not found.
WIDE_STEPS, WIDE_PATIENCE = 120_000, (2_000, 100, 20_000)


#: A search step costs about as much as there are tables and bots: each search takes at most
#: this many steps times (tables + bots), so that the largest schedule the config allows
#: (config.MAX_BOTS bots, 10,000 deals, 11 seats) is designed in about a minute of CPU
#: (``python bench/schedule.py --largest``; docs/design/SCHEDULES.md has the figures).
SEARCH_WORK = 160_000_000


#: Annealing temperatures at the start and the end of a search (costs move by whole units):
#: the within-one search starts hotter than the widened one, whose band has room to spare.
HOT, WIDE_HOT, COLD = 0.6, 0.3, 0.05


#: Steps of the cyclic base-block search, per base block and at most; its temperatures at the
#: start and the end, and how many steps a residue removed from a block stays out of it.
BASE_BLOCK_MOVES, BASE_BLOCK_MOST, BASE_BLOCK_TABU = 2_000, 12_000, 3


BASE_BLOCK_HOT, BASE_BLOCK_COLD = 4.0, 0.5


#: Attempts of the base-block search when residues times block sizes are at most BASE_BLOCK_SMALL.
BASE_BLOCK_RESTARTS, BASE_BLOCK_SMALL = 8, 1_000


#: The tabu search for base blocks (design 3) that follows when the annealing above finds none:
#: most steps, and most steps times the residues times the blocks' residues (a step scores
#: every replacement of every residue of every block), so that 1,000 residues in ten blocks of
#: eleven get about 800 steps. How many steps a residue removed from a block stays out.
BASE_TABU_STEPS, BASE_TABU_WORK, BASE_TABU_TENURE = 5_000, 90_000_000, 11


#: Moves of the search that evens seat positions of bots filling several seats: at least,
#: and per seat of every table.
SPREAD_MOVES, SPREAD_PER_SEAT = 20_000, 4


#: Neighbour search: swaps tried per seat of every table, at least and at most.
ARRANGE_MOVES, ARRANGE_LEAST, ARRANGE_MOST = 12, 20_000, 300_000


#: The schedule's design: what :func:`make_schedule` does for the same inputs. A stored
#: schedule records it (none recorded means 1), and ``verify`` and ``resume`` rebuild a
#: tournament's schedule with its own. 1: the neighbour search ends with the annealing of
#: :data:`ARRANGE_MOVES`; 2: with duplicate deals, the band search below follows it; 3: when
#: the annealing of base blocks finds none, the tabu search of :data:`BASE_TABU_STEPS` follows
#: (200 bots at 11 seats over 1,600 deals: pairs 4..5 where design 2 left them 2..6).
SCHEDULE_DESIGN = 3


#: Band search (design 2): most swaps per table when each table is placed in turn; tables
#: scored (each time every swap of one table), per table and at most, placing and sweeping.
BAND_PLACE_SWAPS, BAND_SWAPS, BAND_MOST = 8, 16, 40_000


#: Band search: the cost of a count outside the band (the mean rounded down and up) per
#: squared game, against 1 for a squared count (which evens the counts inside it).
BAND_OUT = 10


#: Tables a paired swap intersects or probes when looking for its partner table.
PARTNER_SCAN = 64


#: Starting temperature of the neighbour search (it cools to COLD).
ARRANGE_HOT = 1.0


#: Weights of the neighbour search: squared counts of distinct bots one and two seats apart,
#: and, per game, a bot's copy right next to it, which costs more than any evening out gains.
LEFT_WEIGHT, SECOND_WEIGHT, SELF_WEIGHT = 3, 1, 10**9


#: The exhaustive search for few deals: most sets of deals a bot may sit at, bots, and nodes.
SMALL_TYPES, SMALL_BOTS, SMALL_NODES = 300, 300, 50_000


#: Bots up to which :func:`suggest_deals` tries the local search (beyond, constructions only).
SUGGEST_SEARCH_BOTS = 30


#: Deal counts :func:`suggest_deals` searches at most before giving up.
SUGGEST_TRIES = 4


#: Seat labels of the ``permute`` seating per table size: game ``r`` puts at seat ``s`` the
#: position whose label is ``LABELS[n][s] - r`` (mod n). Chosen (by exhaustive search up to 9
#: seats, sampling above) so that the label differences one and two seats apart cover every
#: non-zero difference as evenly as possible. At 6, 8 and 10 seats every bot then has every other
#: bot of its table as its left neighbour once or twice over a deal's games (the mean is
#: n / (n - 1), so that is within one of it); two seats left misses n or 2n ordered pairs. At 7, 9
#: and 11 no labels can (the n differences would sum to 0 mod n, as the non-zero residues
#: already do, so the extra one would be 0): one difference, n ordered pairs of the table, is
#: never left neighbours in the deal, and every other pair once or twice. No Latin square at all
#: does better at 3, 5 or 7 seats under that bound: a SAT solver proves that some pair is never
#: left neighbours at all three, and that at 7 with every pair at most twice one and two seats
#: left at least 7 pairs are missing (tests/test_seating_layouts.py; 4 missing needs a pair
#: thrice two seats left). At 9 it found a square that does (with a symmetry of order 3: the
#: ``balanced`` seating's, :data:`hearts_tournaments.tournament.layouts.SQUARES`); at 11 it found no answer
#: either way. Across deals the
#: neighbour search (:func:`_arrange`) spreads those pairs over different bots.
LABELS: dict[int, tuple[int, ...]] = {
    6: (0, 1, 4, 3, 5, 2),
    7: (0, 1, 2, 4, 6, 5, 3),
    8: (0, 1, 3, 7, 4, 2, 6, 5),
    9: (0, 1, 2, 5, 7, 6, 4, 8, 3),
    10: (0, 1, 4, 6, 2, 9, 3, 8, 7, 5),
    11: (0, 8, 1, 7, 10, 9, 5, 3, 2, 4, 6),
}


class SeatingMode(enum.StrEnum):
    """How the games of one deal seat its bots (with duplicate deals): the name of a
    :class:`SeatingDesign` (:data:`SEATING_DESIGNS`), as configs and stored schedules give it."""

    ROTATE = "rotate"
    PERMUTE = "permute"
    BALANCED = "balanced"


#: The seating of a config that does not name one (``rotate``, then ``permute`` before: a
#: tournament stored then keeps its own, see :func:`hearts_tournaments.tournament.folder.open_tournament`).
DEFAULT_SEATING = SeatingMode.BALANCED


#: What a SAT solver proved about every Latin square of positions, per table size (see
#: tests/test_seating_layouts.py, which fails if a better square exists).
LAYOUT_PROOFS: dict[int, str] = {
    6: "no Latin square of positions has both one and two seats left within one (a SAT proof)",
    8: "no Latin square of positions has both one and two seats left within one (a SAT proof)",
    7: (
        "no Latin square of positions has every table-mate as left neighbour, nor fewer than 7 "
        "ordered pairs never with no pair thrice one or two seats apart (a SAT proof)"
    ),
    9: (
        "no labelling has every table-mate as left neighbour (its differences would sum to 0 "
        "mod 9); the square of seating balanced does"
    ),
    11: (
        "no labelling has every table-mate as left neighbour (its differences would sum to 0 "
        "mod 11); other Latin squares neither found nor ruled out"
    ),
}


def rotations(n: int) -> list[tuple[int, ...]]:
    """The ``n`` rotations of a table of ``n``: game ``r`` puts position ``s - r`` at seat ``s``."""
    return [tuple((s - r) % n for s in range(n)) for r in range(n)]


class SeatingDesign:
    """How a deal's games seat its bots with duplicate deals: one per :class:`SeatingMode`,
    registered in :data:`SEATING_DESIGNS` (:func:`seating_design` finds it).

    A design is a Latin square of positions per table size (:meth:`positions`: every position
    holds every seat once over the deal's games); the schedule's neighbour search, the balance
    report and the games themselves all take it from here. Its name is stored with every
    schedule, so a design, once released, never changes what it returns for a table size.
    """

    #: The mode it is registered under (its name in configs and stored schedules).
    mode: SeatingMode

    def positions(self, n: int) -> list[tuple[int, ...]]:
        """For each game of a deal at ``n`` seats, the position of the deal's seating at each seat."""
        raise NotImplementedError

    def rotates(self, n: int) -> bool:
        """Whether its games at ``n`` seats are the rotations of one order (a bot then keeps its
        neighbours in every game of a deal, and the band search has nothing to even)."""
        return self.positions(n) == rotations(n)

    def proof(self, n: int) -> str | None:
        """What is known about doing better than its layouts at ``n`` seats, for the balance
        report's per-deal line (None: nothing to say)."""
        return None


class RotateDesign(SeatingDesign):
    """``rotate``: game ``r`` moves the bot of position ``p`` to seat ``p + r``."""

    mode = SeatingMode.ROTATE

    def positions(self, n: int) -> list[tuple[int, ...]]:
        return rotations(n)


class PermuteDesign(SeatingDesign):
    """``permute``: the labelled Latin squares of :data:`LABELS` (rotations where there are none)."""

    mode = SeatingMode.PERMUTE

    def positions(self, n: int) -> list[tuple[int, ...]]:
        if n not in LABELS:
            return rotations(n)
        label = LABELS[n]
        position_of = {value: p for p, value in enumerate(label)}
        return [tuple(position_of[(label[s] - r) % n] for s in range(n)) for r in range(n)]

    def proof(self, n: int) -> str | None:
        return LAYOUT_PROOFS.get(n)


class BalancedDesign(PermuteDesign):
    """``balanced``: the squares of :data:`~hearts_tournaments.tournament.layouts.SQUARES` where
    one beats the labels, ``permute``'s layouts elsewhere."""

    mode = SeatingMode.BALANCED

    def positions(self, n: int) -> list[tuple[int, ...]]:
        if n in SQUARES:
            return [tuple(layout) for layout in SQUARES[n]]
        return super().positions(n)

    def proof(self, n: int) -> str | None:
        if n in NOTES:
            return NOTES[n]
        return None if n in SQUARES else super().proof(n)


#: Every seating design, by the mode it is registered under.
SEATING_DESIGNS: dict[SeatingMode, SeatingDesign] = {
    design.mode: design for design in (RotateDesign(), PermuteDesign(), BalancedDesign())
}


def seating_design(mode: SeatingMode) -> SeatingDesign:
    """The design registered under ``mode``."""
    return SEATING_DESIGNS[mode]


def game_key(deal: int, rotation: int | None) -> str:
    """The stable name of a game: ``d003-r02``, or ``d003`` when deals are not rotated."""
    return f"d{deal:03d}" if rotation is None else f"d{deal:03d}-r{rotation:02d}"


def game_positions(table_size: int, duplicate: bool, seating: SeatingMode) -> list[tuple[int, ...]]:
    """For each game of a deal, the position of the deal's seating that sits at each seat.

    A Latin square with duplicate (every position holds every seat once over the deal's games:
    the :class:`SeatingDesign` of ``seating``), the identity without.
    """
    if not duplicate:
        return [tuple(range(table_size))]
    return seating_design(seating).positions(table_size)
