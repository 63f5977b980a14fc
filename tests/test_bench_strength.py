"""bench/strength.py measures points per hand in mid-game hands, at every deal index."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

import bench.strength as strength
from hearts_client.bot import Bot
from hearts_client.bots.montecarlo import Objective
from hearts_core.cards import Card
from hearts_core.rules import MoonChoice
from hearts_core.view import View


class _Watching:
    """A heuristic bot that records whether each View it saw put the montecarlo objective in its endgame."""

    def __init__(self, inner: Bot, seen: list[bool]) -> None:
        self.inner = inner
        self.seen = seen

    def choose_pass(self, view: View) -> Sequence[Card]:
        self.seen.append(Objective(view).endgame)
        return self.inner.choose_pass(view)

    def choose_play(self, view: View) -> Card:
        self.seen.append(Objective(view).endgame)
        return self.inner.choose_play(view)

    def choose_moon(self, view: View) -> MoonChoice:
        return self.inner.choose_moon(view)


@pytest.mark.parametrize("index", [0, 7, 199, 200, 479, 1999])
def test_no_deal_is_a_last_hand_or_an_endgame(index: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # Hand ``index`` of a game sets the dealer and the pass direction; before the fix, deals from
    # index 199 on were at or past the rules' hand limit (200), so the search bots played them as
    # the game's last hand (for placing, not points) while the bench counts points.
    seen: list[bool] = []
    made = strength._bot

    def watched(config: strength.Config, name: str, seed: str) -> Bot:
        return _Watching(made(config, name, seed), seen)  # type: ignore[return-value]

    monkeypatch.setattr(strength, "_bot", watched)
    config = strength.Config(bot="heuristic", field="random", players=8, hands=max(index + 1, 480), seed="t")
    outcome = strength.play_deal(config, index)
    assert seen and not any(seen), f"deal {index}: a bot saw an endgame"
    assert outcome.seat == index % 8
