"""The bot test kit: ``hearts bot test`` tests one bot the way a competition runs it.

The same bubblewrap sandbox, limits, Unix socket, flags and environment as a tournament: every
game is played on the arena (:mod:`hearts_tournaments.arena`), the bot in one seat and the
referee's default rule in the others, on the kit's own referee, which can deal chosen hands,
refuse a legal answer and close a stream on purpose (:mod:`hearts_server.table.script`, the
kit's alone). Four levels, each on a fresh process, each a list of named checks
(:mod:`.catalogue`) with a verdict, the fix and the evidence (:mod:`.report`):

- :mod:`.process`: it starts, takes its flags, answers on stdout only (stdio), exits when its
  table ends, leaves nothing behind, stays in its limits;
- :mod:`.session`: it joins, answers each request with its id, plays game after game on one
  stream, answers again after a rejection and reconnects after a lost stream;
- :mod:`.rules`: hands dealt on purpose (:mod:`.scenarios`) for the rules' rare paths, and
  every table size;
- :mod:`.timing`: its decision times at every table size, by the referee's clock, against the
  decision limit and the time bank.

:func:`.run.run_kit` runs them into a report; the pre-flight check of ``hearts tournament
check``, ``hearts league add`` and the portal runs the quick levels (process and session).
:mod:`.table` plays the kit's games on the arena and keeps what the checks read;
:mod:`.subject` makes the bot under test from ``hearts bot test``'s command line.
"""
