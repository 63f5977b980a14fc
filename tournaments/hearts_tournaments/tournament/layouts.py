"""Layouts of a deal's games found by a SAT solver, for the ``balanced`` seating.

``SQUARES[n][r][s]`` is the position of the deal's seating that sits at seat ``s`` in game
``r``: a Latin square (every position at every seat once over the deal's ``n`` games). Where
a table size is missing here, ``balanced`` uses the ``permute`` labels
(:data:`hearts_tournaments.tournament.schedule.LABELS`), which are already as good as is known.

* **9 seats**: every position has every other as its left neighbour once or twice over the
  deal's games (the labels of ``permute`` leave 9 ordered pairs never; no labelling can do
  better, as its 9 differences would sum to 0 mod 9). Found by CaDiCaL (python-sat) among the
  squares with a symmetry of order 3: game ``r + 3`` seats position ``p + 3`` (mod 9) where
  game ``r`` seats ``p``. Two seats left it is 0..4 games (24 ordered pairs never): a square
  with both within one was neither found nor ruled out (among the squares with that symmetry
  there is none: proven on 2 December in 16 minutes of CPU). tests/test_seating_layouts.py
  recounts it, and tests/test_seating_neighbours.py recounts the printed schedules.
* **11 seats**: nothing found, nothing ruled out. A symmetry of the kind used at 9 (positions
  moved by a permutation ``g``, seats left where they are, games permuted) cannot keep the
  square Latin unless ``g`` is an 11-cycle (a game orbit of size ``m`` puts ``p, g(p), ...,
  g^(m-1)(p)`` at one seat, so every cycle of ``g`` has length ``m``, and ``m`` divides 11), which
  is the shift construction that no labelling can satisfy. So neither a fixed point with Z_10 on
  the rest nor an order-5 symmetry applies. Turning the seats as well (``s -> s + t``) does
  not help: its 11th power moves the seats no more, so it has order 11; if it fixes the games,
  every game has the same left neighbours, and if not, it is the shift construction again. So a
  square at 11 has no symmetry but perhaps one mirror. The one other symmetry tried keeps the condition
  (left neighbours ``a, b`` in game ``r`` become ``-b, -a`` in game ``-r``): mirror the seats
  (``s -> -s``) and negate the positions (``p -> -p`` mod 11). CaDiCaL with it ran about 13
  minutes of CPU without an answer; with game 0 the identity as well, about 5 minutes, none
  either. Simulated annealing over rows of positions (column clashes and pairs outside 1..2 as
  the cost, swaps within a game as the move) got down to 7 violations at 11 seats, and it finds
  no square at 9 either, where one exists. Tried on 2 December (scripts not kept; CaDiCaL):
  - a game ``r + 1`` that seats ``2p`` (mod 11) at seat ``c * s`` where game ``r`` seats ``p``
    at ``s``, for ten of the games (the eleventh free), with ``c`` each primitive root 2, 6,
    7 and 8: no square (proven, 14 s each); the same with order 5 (positions times 4, seats
    times 3, 4, 5 or 9, two orbits of five games): no square (proven, about 2 minutes each);
  - ten games whose left neighbours are every ordered pair exactly once (a square then
    follows, as the eleventh game completes the Latin rectangle): with the games fixed to the
    difference cycles ``0, d, 2d, ...`` or to Walecki's Hamiltonian cycles in both directions
    and only where each game starts left open, no square (proven, also at 7 and 9); with the
    games free, no answer in 50 minutes of CPU;
  - at most 5 ordered pairs never left neighbours (against the labels' 11), each at most
    twice: no answer in 30 minutes of CPU.
  Tried later on 2 December (CaDiCaL, script not kept): an R-sequencing of Z_11 is a cycle of
  ten distinct residues whose ten steps are the ten non-zero residues, so its eleven
  translates give every ordered pair once; each game took one translate with its missing
  residue inserted at a place of the game's own and started at a seat of its own. No square
  comes out of any of the 45 R-sequencings up to relabelling and mirroring (proven, 44
  minutes of wall time at low priority beside benchmarks). A relaxed run (pairs 0 to 3 times)
  does find squares, so the encoding is not empty by mistake.
  Tried in a third session on 2 December (scripts not kept): simulated annealing that keeps
  the square Latin at every step (row-, column- and symbol-cycle switches as the moves, ordered
  pairs outside 1..2 as the cost), 100 million moves per start from random Latin squares, about
  35 minutes of CPU: at best 5 ordered pairs outside 1..2 at 11 seats; at 9 seats it gets to 2
  or 3 and finds no square. Refilling 3 to 5 freed games, seats or positions with CaDiCaL
  (large-neighbourhood search) improved a 9-seat square of 3 no further in a minute.
  Tried in a fourth session (2 December, script not kept): a tabu search over games as
  permutations (column clashes and ordered pairs outside 1..2 as the cost, every swap within a
  game scored at each step, the best taken unless tabu), about 7 million steps in 6 minutes of
  CPU: at best 7 at 11 seats, and 3 at 9 seats, where a square exists.
  A row-complete Latin square of order 11 (every ordered pair adjacent once in the rows, not
  counting the wrap) would do; we know of none (the constructions we know of are for even and
  composite orders, and there are none at 3, 5 and 7).
* **10 seats**: ``permute``'s labels give every table-mate as left neighbour once or twice; a
  square with two seats left within one as well does not exist among those where game ``r + 2``
  seats position ``p + 2`` where game ``r`` seats ``p`` (proven on 2 December, 3.5 minutes of
  CPU); with ``r + 5`` and ``p + 5`` no answer in 21 minutes of CPU.
"""

from __future__ import annotations

SQUARES: dict[int, tuple[tuple[int, ...], ...]] = {
    9: (
        (0, 8, 7, 3, 1, 5, 6, 2, 4),
        (8, 3, 5, 7, 6, 0, 4, 1, 2),
        (4, 7, 0, 2, 5, 1, 8, 6, 3),
        (3, 2, 1, 6, 4, 8, 0, 5, 7),
        (2, 6, 8, 1, 0, 3, 7, 4, 5),
        (7, 1, 3, 5, 8, 4, 2, 0, 6),
        (6, 5, 4, 0, 7, 2, 3, 8, 1),
        (5, 0, 2, 4, 3, 6, 1, 7, 8),
        (1, 4, 6, 8, 2, 7, 5, 3, 0),
    ),
}

#: What is known beyond each square, for the balance report's per-deal line.
NOTES: dict[int, str] = {
    9: "two seats left within one as well: neither found nor ruled out",
}
