"""``montecarlo``: determinized Monte Carlo search over worlds consistent with the View.

At each play decision with a choice to make, the bot draws worlds with
:class:`hearts_client.sampler.WorldSampler` (every placement of the unseen cards that agrees
with what its seat knows) and, on each world, plays every distinct legal card followed by a
heuristic rollout to the end of the hand through the simulator (:mod:`hearts_client.sim`:
``Game.from_view`` then ``play_out("heuristic", hands=1)``, the native core when it is built). Every card is
tried on the *same* worlds, so their comparison is not blurred by the luck of the draw. The
card with the lowest mean value is played; ties go to the card the heuristic itself would play.

The value of a rollout, lower being better (see ``docs/design/MONTECARLO.md``):

* Normally: the points the hand scores for this seat (a moon shot scored as in
  :func:`hand_scores`).
* In the endgame, when some total before the hand is within :data:`ENDGAME_WINDOW` points of
  the target, or the hand is the last one allowed: the final placing. If the game ends with
  the hand, a win (shared or not) is worth :data:`WIN_VALUE`, a loss :data:`LOSS_VALUE` plus
  :data:`PLACE_STEP` per further place down; if it goes on, the value is this seat's total
  minus the best other total, clamped to +-:data:`MARGIN_CAP`, so that any continuation ranks
  between winning now and losing now.

Passing reuses the heuristic's pass; the moon choice picks "others +26" only when that ends the
game with this seat winning, else "self -26" (both leave the same margin over the field).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from hearts_client.bot import Bot, moon_choice
from hearts_client.bots.heuristic import HeuristicBot
from hearts_client.sampler import WorldSampler
from hearts_client.sim import Game
from hearts_core import rules
from hearts_core.cards import CARDS, Card
from hearts_core.rules import HAND_POINTS, MOON_POINTS
from hearts_core.view import View

#: Worlds sampled per decision by default. At 8 players: about 30 ms a decision on average and
#: 0.15 s at worst on one core, well inside the referee's 1 s limit; 100 worlds measured no
#: stronger against heuristic bots at twice the time (docs/design/MONTECARLO.md).
DEFAULT_WORLDS = 50
#: The endgame starts when some total before the hand is this close to the target score.
ENDGAME_WINDOW = MOON_POINTS
#: Rollout values in the endgame (lower is better).
WIN_VALUE = -100.0
LOSS_VALUE = 100.0
PLACE_STEP = 10.0
MARGIN_CAP = 99.0


class MonteCarloBot(Bot):
    """Picks the card with the best mean rollout value over sampled worlds.

    Args:
        seed: Seeds world sampling; with a world budget (no ``time_limit``) the bot's decisions
            are a function of the seed and the views it is shown.
        worlds: How many worlds to sample per decision (at most, with ``time_limit``).
        time_limit: If given, stop sampling once this many seconds have passed in a decision
            (checked after each world, so at least one world is always used).

    Raises:
        ValueError: if ``worlds`` is below 1 or ``time_limit`` is not positive.
    """

    name = "montecarlo"

    def __init__(
        self,
        seed: int | str | None = None,
        worlds: int = DEFAULT_WORLDS,
        time_limit: float | None = None,
    ) -> None:
        super().__init__(seed)
        if worlds < 1:
            raise ValueError(f"worlds must be at least 1, not {worlds}")
        if time_limit is not None and time_limit <= 0:
            raise ValueError(f"time_limit must be positive, not {time_limit}")
        self.worlds = worlds
        self.time_limit = time_limit
        self._heuristic = HeuristicBot(seed)

    def reseed(self, seed: int | str) -> None:
        super().reseed(seed)
        self._heuristic.reseed(seed)

    def choose_pass(self, view: View) -> Sequence[Card]:
        return self._heuristic.choose_pass(view)

    def choose_play(self, view: View) -> Card:
        legal = view.legal
        if len(legal) == 1:
            return legal[0]
        start = time.perf_counter()
        limit = self.time_limit
        if self.time_left is not None:
            # Over gRPC the referee says how long this decision may take: use at most half of it,
            # so that a busy machine costs strength, not a timeout fault.
            limit = min(limit, self.time_left / 2) if limit is not None else self.time_left / 2
        sampler = WorldSampler(view)
        value = Objective(view)
        favourite = int(self._heuristic.choose_play(view))
        candidates = [int(c) for c in legal]
        sums = [0.0] * len(candidates)
        for _ in range(self.worlds):
            base = Game.from_view(view, sampler.sample(self.rng))
            for index, card in enumerate(candidates):
                game = base.clone()
                game.apply_action(card)
                game.play_out("heuristic", hands=1)
                sums[index] += value.of_scores(game.hand_scores_history()[-1])
            if limit is not None and time.perf_counter() - start >= limit:
                break
        best = min(range(len(candidates)), key=lambda i: (sums[i], candidates[i] != favourite, i))
        return CARDS[candidates[best]]


def hand_scores(points: Sequence[int], totals: Sequence[int], target: int) -> list[int]:
    """What a hand adds to each total, given the points collected.

    The rules' scoring (:func:`hearts_core.rules.hand_scores`), a moon shooter assumed to
    choose as :func:`moon_choice` does.

    Args:
        points: Per seat, the points collected in the hand.
        totals: Per seat, the totals before the hand.
        target: The target score.

    Returns:
        Per seat, the hand's score.
    """
    shooter = rules.moon_shooter(points)
    choice = None if shooter is None else moon_choice(shooter, totals, target)
    return rules.hand_scores(points, choice)


class Objective:
    """The value of a rollout's outcome for one seat; lower is better.

    Args:
        view: The deciding seat's View: gives the seat, the totals before the hand and the
            game's target and hand limit.
    """

    def __init__(self, view: View) -> None:
        self.seat = view.seat
        self.totals = view.totals
        self.target = view.rules.target_score
        self.last_hand = view.hand_index + 1 >= view.rules.max_hands
        self.endgame = self.last_hand or max(self.totals) >= self.target - ENDGAME_WINDOW

    def __call__(self, points: Sequence[int]) -> float:
        """The value of a hand that ends with these points collected per seat."""
        me = self.seat
        if not self.endgame and HAND_POINTS not in points:
            return float(points[me])
        return self.of_scores(hand_scores(points, self.totals, self.target))

    def of_scores(self, scores: Sequence[int]) -> float:
        """The value of a hand that adds ``scores`` to the totals (a moon shot already scored)."""
        me = self.seat
        if not self.endgame:
            return float(scores[me])
        final = [t + s for t, s in zip(self.totals, scores, strict=True)]
        mine = final[me]
        others = final[:me] + final[me + 1 :]
        if self.last_hand or max(final) >= self.target:
            ahead = sum(1 for t in others if t < mine)
            return WIN_VALUE if ahead == 0 else LOSS_VALUE + PLACE_STEP * (ahead - 1)
        return max(-MARGIN_CAP, min(MARGIN_CAP, float(mine - min(others))))
