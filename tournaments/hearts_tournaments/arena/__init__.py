"""The arena: plays one game on a local referee with sandboxed, possibly warm, bot processes.

A job in (:class:`~.job.GameJob`: the seats, the deal's seed, each bot's seed, the seats the
referee plays), a typed outcome out (:class:`~.outcome.GameOutcome`). :class:`~.local.Arena`
starts the referee (in-process on a private Unix socket, or a relay to an external one), the
sandbox watchdog and the warm pool, and plays as many games at once as it is given. It knows
nothing of tournaments or leagues: the tournament runner, the league, ``hearts host`` and the
Ray executor all stand on it, and none of them reaches into the referee's internals.

Its parts: :mod:`.bots` (who an entrant is), :mod:`.job` (a game to play), :mod:`.local` (the
arena), :mod:`.sandbox` (bubblewrap), :mod:`.entrants` (a bot process), :mod:`.stdio_entrant`
(the stdin/stdout bridge), :mod:`.warm` (processes kept between games), :mod:`.snapshot` (the
read-only copies of entrants' files that are what plays), :mod:`.seeds` (deal secrets and the
seeds they key), :mod:`.failures` (one line about an entrant that failed), :mod:`.host`
(``hearts host``), :mod:`.admin_token` (``hearts serve``'s admin token file),
:mod:`.builtin_bot` (the process a built-in bot runs as).
"""
