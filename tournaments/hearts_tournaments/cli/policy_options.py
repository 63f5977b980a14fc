"""The table policy's command-line options, declared once for every command that takes them.

``hearts serve`` (the defaults of tables created without them), ``hearts host`` and ``hearts
league init`` each take the four options below, with the same names, bounds and help, and make
one :class:`~hearts_core.defaults.TablePolicy` of them with :func:`table_policy`. Their bounds
are the policy type's own, their defaults its defaults (``DEFAULT_DECISION_MS``, ...).
"""

from __future__ import annotations

from typing import Annotated

import typer

from hearts_core.defaults import TablePolicy
from hearts_tournaments.cli.common import fail

#: Where --help shows them.
PANEL = "Table policy"


def _bounds(name: str) -> tuple[int, int]:
    # At least 1 on the command line: a zero bank or join timeout is not a policy anyone means.
    low, high = TablePolicy.BOUNDS[name]
    return max(1, low), high


DecisionMsOption = Annotated[
    int,
    typer.Option(
        "--decision-ms",
        min=_bounds("decision_ms")[0],
        max=_bounds("decision_ms")[1],
        help="Limit per decision, in milliseconds.",
        rich_help_panel=PANEL,
    ),
]
TimeBankMsOption = Annotated[
    int,
    typer.Option(
        "--time-bank-ms",
        min=_bounds("time_bank_ms")[0],
        max=_bounds("time_bank_ms")[1],
        help="Time bank per seat per game, in milliseconds.",
        rich_help_panel=PANEL,
    ),
]
MaxFaultsOption = Annotated[
    int,
    typer.Option(
        "--max-faults",
        min=_bounds("max_faults")[0],
        max=_bounds("max_faults")[1],
        help="Faults (timeouts, disconnections, floods) that retire a seat for the rest of a game.",
        rich_help_panel=PANEL,
    ),
]
JoinTimeoutMsOption = Annotated[
    int,
    typer.Option(
        "--join-timeout-ms",
        min=_bounds("join_timeout_ms")[0],
        max=_bounds("join_timeout_ms")[1],
        help="How long a table waits for its seats before the referee plays for the absent ones, "
        "in milliseconds.",
        rich_help_panel=PANEL,
    ),
]

#: The options, as --help shows them.
POLICY_OPTIONS = ("--decision-ms", "--time-bank-ms", "--max-faults", "--join-timeout-ms")


def table_policy(decision_ms: int, time_bank_ms: int, max_faults: int, join_timeout_ms: int) -> TablePolicy:
    """The policy of the four options.

    Raises:
        typer.Exit: with one line on stderr naming the option, for a value out of its bounds.
    """
    try:
        return TablePolicy(
            decision_ms=decision_ms,
            time_bank_ms=time_bank_ms,
            max_faults=max_faults,
            join_timeout_ms=join_timeout_ms,
        )
    except ValueError as exc:
        name = str(exc).split(" ", 1)[0]
        raise fail(f"--{name.replace('_', '-')}: {exc}") from None
