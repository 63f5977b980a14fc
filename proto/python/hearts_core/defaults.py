"""The referee's default limits, written once.

Every place that lets a limit go unset takes it from here: a table's settings and the server's
defaults (``hearts_server``), a tournament's ``[tournament]`` keys, ``hearts serve`` and
``hearts host``. The rules of the game (target score, hand limit, moon choice) have their
defaults in :mod:`hearts_core.rules`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True, slots=True)
class Limits:
    """How long a seat may think, how many faults retire it, and how long a table waits for it.

    Attributes:
        decision_ms: The limit for any single decision. The built-in ``montecarlo`` bot takes
            about 30 ms a decision (docs/MONTECARLO.md): a second is ample for a bot and short
            enough that a silent one costs the table little.
        time_bank_ms: Total thinking time per seat per game; a request's deadline is the smaller
            of ``decision_ms`` and what is left of the bank.
        max_faults: Faults (timeouts, disconnections, floods) that retire a seat for the rest of
            a game; from then on the referee plays for it by its default rule.
        join_timeout_ms: How long a table waits for every seat to join before it starts and the
            referee plays for the absent ones. One minute everywhere (the server, tournaments,
            ``hearts host``): enough for the slowest example bot (Java, TypeScript) to start cold
            on a loaded machine and for a person to paste the command ``hearts host`` prints;
            short enough that a bot which never comes stalls its table for one minute only. It
            is the server default the protocol documents (``TableConfig.join_timeout_ms``), and
            a tournament pays it only for a bot that hangs before joining: when a bot's process
            exits, the runner ends the wait for that seat at once.
    """

    decision_ms: int = 1000
    time_bank_ms: int = 60_000
    max_faults: int = 5
    join_timeout_ms: int = 60_000


#: The defaults, as one value.
DEFAULT_LIMITS: Final = Limits()
#: Each default on its own, for dataclass fields and command-line options.
DEFAULT_DECISION_MS: Final = DEFAULT_LIMITS.decision_ms
DEFAULT_TIME_BANK_MS: Final = DEFAULT_LIMITS.time_bank_ms
DEFAULT_MAX_FAULTS: Final = DEFAULT_LIMITS.max_faults
DEFAULT_JOIN_TIMEOUT_MS: Final = DEFAULT_LIMITS.join_timeout_ms
#: Tables waiting or playing at once, server-wide (``hearts serve --max-tables``); past it
#: CreateTable fails with RESOURCE_EXHAUSTED. The runner plays at most 256 tables at once.
MAX_LIVE_TABLES: Final = 256
