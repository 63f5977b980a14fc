"""The simulator's heuristic policy decision for decision: native, the fallback and the SDK bot.

The pass is the delicate part: a seat passes one card per action, so a rollout may pass some
cards at random (or by a callable policy) and then hand over to the heuristic. The heuristic
then passes the first cards of ``HeuristicBot.choose_pass`` (its ranking of the hand as dealt)
that the seat still holds.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest

from hearts_client.bots.heuristic import HeuristicBot
from hearts_core.cards import CARDS
from hearts_core.deal import deal_hand
from hearts_core.rules import Rules
from hearts_core.state import State
from hearts_core.view import build_view
from tests.helpers.sim_backends import backend


def _sdk_pass(dealt_view: object, already: list[int]) -> int:
    """The SDK heuristic's next card: its pass of the hand as dealt, less what is already passed."""
    left = Counter(already)
    for card in HeuristicBot(0).choose_pass(dealt_view):  # type: ignore[arg-type]
        if left[int(card)]:
            left[int(card)] -= 1
            continue
        return int(card)
    raise AssertionError("the heuristic's three cards are all passed already")


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_the_heuristic_pass_after_partial_random_passes_agrees_everywhere() -> None:
    native, python = backend("native"), backend("python")
    mixed = 0
    for index in range(300):
        players = 6 + index % 6
        seed = f"partial/{index}"
        rng = random.Random(index)
        a, b = native.Game(players, seed, max_hands=1), python.Game(players, seed, max_hands=1)
        rules = Rules(players, max_hands=1)
        state = State(rules)
        state.start_hand(*deal_hand(rules, seed, 0))
        views = [build_view(state, s) for s in range(players)]  # the hands as dealt
        chance = rng.choice([0.2, 0.5, 0.8])
        while b.phase == python.PASS:
            seat = b.current_player
            assert a.current_player == seat
            assert a.legal_actions() == b.legal_actions()
            already = b.passed(seat)
            if rng.random() < chance:
                action = rng.choice(b.legal_actions())
            else:
                mixed += bool(already)
                expected = _sdk_pass(views[seat], already)
                got = (a.policy_action("heuristic"), b.policy_action("heuristic"))
                assert got == (expected, expected), (seed, seat, already, CARDS[expected])
                action = expected
            a.apply_action(action)
            b.apply_action(action)
        for s in range(players):
            assert a.hand(s) == b.hand(s) and len(a.hand(s)) == rules.hand_size
        # The heuristic finishes every hand it is given mid-pass, in both backends alike.
        ca, cb = a.clone(), b.clone()
        ca.play_out("heuristic", hands=1)
        cb.play_out("heuristic", hands=1)
        assert ca.hand_scores_history() == cb.hand_scores_history()
    assert mixed > 100


def test_play_out_heuristic_from_every_point_of_a_random_pass() -> None:
    """play_out("heuristic") taking over at every pass action gives the same hand in both backends."""
    native, python = backend("native"), backend("python")
    for index in range(40):
        players = 6 + index % 6
        a, b = native.Game(players, index, max_hands=1), python.Game(players, index, max_hands=1)
        rng = random.Random(index)
        while a.phase == native.PASS:
            ca, cb = a.clone(), b.clone()
            ca.play_out("heuristic", hands=1)
            cb.play_out("heuristic", hands=1)
            assert ca.hand_scores_history() == cb.hand_scores_history()
            last = ca.last_hand()
            # Every point of the two decks is taken or left uncollected: no card lost or made.
            assert sum(last["points"]) + sum(CARDS[c].points for c in last["uncollected"]) == 52
            action = rng.choice(a.legal_actions())
            a.apply_action(action)
            b.apply_action(action)
