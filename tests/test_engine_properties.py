"""Property tests over random games at every table size (hypothesis)."""

from __future__ import annotations

import random
from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hearts_client.bots import make_bot
from hearts_core.cards import CARDS, Card
from hearts_core.deal import deal_hand
from hearts_core.local import play_game
from hearts_core.record import outcome_of, state_to_record
from hearts_core.replay import replay
from hearts_core.rules import HAND_POINTS, MoonChoice, Rules
from hearts_core.state import Phase, State

games = st.tuples(st.integers(min_value=6, max_value=11), st.integers(min_value=0, max_value=2**32))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(games, st.sampled_from(["random", "heuristic"]))
def test_random_games_keep_every_invariant(game: tuple[int, int], kind: str) -> None:
    players, seed = game
    rules = Rules(players=players, target_score=80)
    rng = random.Random(seed)
    state = State(rules)
    bots = [make_bot(kind if s % 2 else "random", rng.random()) for s in range(players)]
    from hearts_core.view import build_view

    while not state.game_over:
        deal, kitty = deal_hand(rules, str(seed), state.hand_index + 1)
        state.start_hand(deal, kitty)
        # Every card exists exactly twice across the hands and the kitty.
        assert Counter([*kitty, *(c for h in deal for c in h)]) == Counter({c: 2 for c in CARDS})
        for s in range(players):
            state.pass_cards(s, bots[s].choose_pass(build_view(state, s)))
        while state.phase is Phase.PLAYING:
            legal = state.legal_plays()
            assert legal, "the legal set is never empty"
            assert all(c in state.hands[state.to_play] for c in legal)
            state.play(bots[state.to_play].choose_play(build_view(state, state.to_play)))
        if state.phase is Phase.MOON_CHOICE:
            state.choose_moon(rng.choice(list(MoonChoice)))
        result = state.results[-1]
        # Every dealt card except the kitty is played exactly once.
        assert Counter(result.plays) == Counter(c for h in deal for c in h)
        assert all(len(state.hands[s]) == 0 for s in range(players))
        # Collected plus uncollected points are the hand's 52.
        assert sum(result.points) + sum(c.points for c in result.uncollected) == HAND_POINTS
        if result.moon is not None:
            assert sorted(result.scores) in ([-26] + [0] * (players - 1), [0] + [26] * (players - 1))
    record = state_to_record(state)
    assert replay(record) == outcome_of(state)


@settings(max_examples=15, deadline=None)
@given(games)
def test_replaying_a_games_record_reproduces_it(game: tuple[int, int]) -> None:
    players, seed = game
    rules = Rules(players=players, target_score=100)
    state = play_game(rules, str(seed), [make_bot("heuristic", f"{seed}/{s}") for s in range(players)])
    outcome = replay(state_to_record(state))
    assert outcome["error"] is None
    assert outcome["totals"] == state.totals and outcome["winners"] == state.winners
    assert outcome["game_over"] is True


def test_same_rules_and_seed_give_the_same_deals() -> None:
    rules = Rules(players=9)
    assert deal_hand(rules, "s", 3) == deal_hand(rules, "s", 3)
    assert deal_hand(rules, "s", 3) != deal_hand(rules, "s", 4)
    assert deal_hand(rules, "s", 0) != deal_hand(rules, "t", 0)
    hands, kitty = deal_hand(rules, "s", 0)
    assert [len(h) for h in hands] == [11] * 9 and len(kitty) == 5


def test_a_card_is_its_code() -> None:
    assert str(Card.parse("QS")) == "QS" and Card.parse("TH").points == 1 and Card.parse("QS").points == 13
    assert sorted(map(Card.parse, ["AS", "2C", "KH", "TD"])) == list(
        map(Card.parse, ["2C", "TD", "KH", "AS"])
    )
