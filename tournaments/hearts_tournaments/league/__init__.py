"""League play: a continuous, resumable league whose entrants come, go and improve.

* :mod:`.config`: the league's settings (:class:`LeagueConfig`), fixed at ``init``.
* :mod:`.store`: the league's SQLite database (WAL): entrants, versions, blocks, games, seat
  results, rating history and the log of commands.
* :mod:`.matchmaking`: who plays the next block, and in which seats (a pure function).
* :mod:`.ratings`: the online OpenSkill update and the official batch Plackett-Luce table.
* :mod:`.play`: the ``run`` loop that validates new versions and plays blocks on the referee.
* :mod:`hearts_tournaments.cli.league`: ``hearts league ...``.

See ``docs/LEAGUE.md``.
"""
