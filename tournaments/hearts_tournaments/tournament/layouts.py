"""Layouts of a deal's games found by a SAT solver, for the ``balanced`` seating.

``SQUARES[n][r][s]`` is the position of the deal's seating that sits at seat ``s`` in game
``r``: a Latin square (every position at every seat once over the deal's ``n`` games). Where
a table size is missing here, ``balanced`` uses the ``permute`` labels
(:data:`hearts_tournaments.tournament.schedule.LABELS`), which are already as good as is known.

* **9 seats**: every position has every other as its left neighbour once or twice over the
  deal's games (the labels of ``permute`` leave 9 ordered pairs never; no labelling can do
  better, as its 9 differences would sum to 0 mod 9). Found by CaDiCaL (python-sat) among the
  squares with a symmetry of order 3: game ``r + 3`` seats position ``p + 3`` (mod 9) where
  game ``r`` seats ``p``. Two seats left it is 0..4 games (24 ordered pairs never).
  tests/test_seating_layouts.py recounts it, and tests/test_seating_neighbours.py recounts the
  printed schedules.
* **10 and 11 seats**: no better square is known. What was proven and searched, at 9, 10 and
  11 seats: docs/design/SCHEDULES.md, "The search for better squares".
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
