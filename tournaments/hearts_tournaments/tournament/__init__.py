"""Tournaments: the config, the schedule, the runner over the arena, the store, the results and
their report, and ``verify``.

:mod:`.config` (the TOML file), :mod:`.schedule` (balanced deals and seatings), :mod:`.runner`
(plays the schedule through an executor, stores each game once), :mod:`.executors` (its games on
a Ray cluster, by :mod:`hearts_tournaments.results.executors`), :mod:`.store` (SQLite),
:mod:`.quarantine` (which failing bots sit out, in schedule order), :mod:`.results` (standings
with honest intervals, from :mod:`hearts_tournaments.results.stats`), :mod:`.report`,
:mod:`.gauntlet` (a sequential test), :mod:`.verify` (results nobody can rewrite, by
:mod:`hearts_tournaments.results.signing`), :mod:`.audit` (the fair-play audit of a stored
tournament), :mod:`.standings_snapshot` (the cached standings the web reads), :mod:`.preflight`
(starting each entrant once before a run), :mod:`.progress`.
"""
