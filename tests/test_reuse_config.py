"""The ``reuse`` and ``restart_after`` keys of [tournament]: defaults, values, clear refusals."""

from __future__ import annotations

from pathlib import Path

import pytest

from hearts_tournaments.arena.bots import Reuse
from hearts_tournaments.tournament.config import ConfigError, parse_config

BOTS = '[[bots]]\nname = "a"\nbuiltin = "heuristic"\n\n[[bots]]\nname = "b"\nbuiltin = "random"\n'


def _config(extra: str) -> str:
    return f"[tournament]\ntable_size = 6\n{extra}\n{BOTS}"


def test_warm_bots_are_the_default_and_never_can_be_chosen(tmp_path: Path) -> None:
    default = parse_config(_config(""), tmp_path)
    assert default.reuse is Reuse.BETWEEN_DEALS and default.restart_after == 100
    cold = parse_config(_config('reuse = "never"\nrestart_after = 7'), tmp_path)
    assert cold.reuse is Reuse.NEVER and cold.restart_after == 7


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        ('reuse = "always"', 'tournament.reuse: must be one of "never", "between_deals", not'),
        ("reuse = 1", "tournament.reuse: must be one of"),
        ("restart_after = 0", "tournament.restart_after: must be between 1 and"),
        ('restart_after = "ten"', "tournament.restart_after: must be a whole number"),
    ],
)
def test_a_bad_reuse_setting_is_one_clear_line(tmp_path: Path, extra: str, needle: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(_config(extra), tmp_path)
    assert needle in str(caught.value) and "\n" not in str(caught.value)
