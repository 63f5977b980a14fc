"""How a table treats its seats (:class:`TablePolicy`), and the referee's default limits, written once.

The policy is one value wherever it is set: a table's settings and the server's defaults
(``hearts_server``), a tournament's and a league's config, ``hearts host``, and the command
line's options (``hearts_tournaments.cli.policy_options``) all hold a :class:`TablePolicy`, so its
defaults and its bounds are written here only. The rules of the game (target score, hand
limit, moon choice) have their defaults in :mod:`hearts_core.rules`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any, ClassVar, Final


@dataclass(frozen=True, slots=True)
class TablePolicy:
    """How long a seat may think, how many faults retire it, and how long a table waits for it.

    Each name is also the key of a config file (``[tournament]``, a league's settings) and of
    the record; :meth:`from_json` and :meth:`to_json` read and write those flat keys.

    Attributes:
        decision_ms: The limit for any single decision. The built-in ``montecarlo`` bot takes
            about 30 ms a decision (docs/design/MONTECARLO.md): a second is ample for a bot and short
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
            exits, the runner ends the wait for that seat at once. A table no seat of which was
            joined or released by then ends without playing (nobody came).
    """

    decision_ms: int = 1000
    time_bank_ms: int = 60_000
    max_faults: int = 5
    join_timeout_ms: int = 60_000

    #: The smallest and largest value of each field the referee accepts (documented in
    #: admin_service.proto): a table always ends, and in bounded time.
    BOUNDS: ClassVar[Mapping[str, tuple[int, int]]] = {
        "decision_ms": (1, 600_000),
        "time_bank_ms": (0, 86_400_000),
        "max_faults": (1, 1_000),
        "join_timeout_ms": (0, 3_600_000),
    }

    def __post_init__(self) -> None:
        for name, (low, high) in self.BOUNDS.items():
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"{name} must be a whole number of {_unit(name)}, not {value!r}")
            if value < low:
                raise ValueError(f"{name} must be at least {low}, not {value}")
            if value > high:
                raise ValueError(f"{name} must be at most {high}, not {value}")

    def to_json(self) -> dict[str, int]:
        """The policy as its flat config keys."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any], defaults: TablePolicy | None = None) -> TablePolicy:
        """The policy of the flat keys in ``data`` (other keys are ignored; a missing one is
        taken from ``defaults``, else the default).

        Raises:
            ValueError: naming the key, for a value out of its bounds or not a whole number.
        """
        base = defaults or DEFAULT_POLICY
        return cls(**{f.name: data.get(f.name, getattr(base, f.name)) for f in fields(cls)})


def _unit(name: str) -> str:
    return "milliseconds" if name.endswith("_ms") else "faults"


#: The names of the policy's fields (the config keys it owns).
POLICY_KEYS: Final = tuple(f.name for f in fields(TablePolicy))
#: The defaults, as one value.
DEFAULT_POLICY: Final = TablePolicy()
#: Each default on its own, for dataclass fields and command-line options.
DEFAULT_DECISION_MS: Final = DEFAULT_POLICY.decision_ms
DEFAULT_TIME_BANK_MS: Final = DEFAULT_POLICY.time_bank_ms
DEFAULT_MAX_FAULTS: Final = DEFAULT_POLICY.max_faults
DEFAULT_JOIN_TIMEOUT_MS: Final = DEFAULT_POLICY.join_timeout_ms
#: Tables waiting or playing at once, server-wide (``hearts serve --max-tables``); past it
#: CreateTable fails with RESOURCE_EXHAUSTED. The runner plays at most 256 tables at once.
MAX_LIVE_TABLES: Final = 256
