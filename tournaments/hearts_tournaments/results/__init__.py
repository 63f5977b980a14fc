"""What a tournament and a league share about their results, and about playing their games.

:mod:`.signing` (every stored game signed, a chain nobody can rewrite), :mod:`.stats` (ratings
and honest intervals, the sequential test, luck), :mod:`.store` (the SQLite primitives both
databases are built on), :mod:`.stop` (stopping on a signal), :mod:`.audit` (the fair-play audit
of a set of games), :mod:`.executors` (playing games on a Ray cluster) and :mod:`.where`
(where games are played, :class:`~.where.ExecutorKind`).

It sits below both (``{league, tournament} → results → kit → arena``): neither borrows from
the other.
"""
