"""``random``: a uniformly random legal card, three random cards to pass."""

from __future__ import annotations

from collections.abc import Sequence

from hearts_client.bot import Bot
from hearts_core.cards import Card
from hearts_core.view import View


class RandomBot(Bot):
    """Plays a uniformly random legal card and passes three random cards."""

    name = "random"

    def choose_pass(self, view: View) -> Sequence[Card]:
        return self.rng.sample(list(view.hand), 3)

    def choose_play(self, view: View) -> Card:
        return self.rng.choice(view.legal)
