"""Rules of the engine that the conformance vectors do not pin down by themselves."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path

import pytest

from hearts_core.cards import Card, CardSet
from hearts_core.deal import deal_hand
from hearts_core.errors import (
    BadPassCount,
    BadPlayerCount,
    FirstLeadRestricted,
    HeartsNotBroken,
    MustFollowSuit,
    NotInHand,
    OutOfTurn,
    PassNotInHand,
)
from hearts_core.rules import MoonChoice, Rules, hand_scores, moon_shooter
from hearts_core.state import DecisionKind, Phase, State, winning_index


def cards(text: str) -> list[Card]:
    return [Card.parse(c) for c in text.split()]


def started(players: int, deal: list[list[Card]], kitty: list[Card]) -> State:
    state = State(Rules(players=players))
    state.start_hand(deal, kitty)
    return state


def full_deal(
    players: int, first: list[Card], second: list[Card] | None = None
) -> tuple[list[list[Card]], list[Card]]:
    """A legal deal in which seat 1 (the first leader) holds ``first`` (and seat 2 ``second``)."""
    fixed = {1: list(first), **({2: list(second)} if second is not None else {})}
    pool = list(CardSet.full() - CardSet([c for hand in fixed.values() for c in hand]))
    size = 104 // players
    hands: list[list[Card]] = [[] for _ in range(players)]
    for seat in range(players):
        if seat in fixed:
            hands[seat] = fixed[seat]
        else:
            hands[seat], pool = pool[:size], pool[size:]
    return hands, pool


@pytest.mark.parametrize("players", [5, 12, 0])
def test_player_count_outside_6_to_11_is_a_clear_error(players: int) -> None:
    with pytest.raises(BadPlayerCount, match="6 to 11 players"):
        Rules(players=players)


def test_cancellation_decides_the_winner() -> None:
    assert winning_index(cards("7D 7D KD KD 6D 4D")) == 4
    assert winning_index(cards("KC 4C 4C KC 3C 3C")) is None
    assert winning_index(cards("2S AH AH 3S")) == 3
    assert winning_index(cards("QS QS AS")) == 2


def test_first_lead_of_only_hearts_and_black_maria_may_be_anything() -> None:
    hand = cards("2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH QS")
    deal, kitty = full_deal(8, hand)
    state = State(Rules(players=8))
    state.start_hand(deal, kitty, skip_passing=True)
    assert set(state.legal_plays()) == set(hand)
    state.check_play(Card.parse("2H"))  # the documented choice: allowed on the first lead


def test_layered_legality_errors_carry_their_codes() -> None:
    hand = cards("2C 3C 2H 3H QS 4D 5D 6D 7D 8D 9D TD JD")
    follower = cards("4C 5C 6C 7C 8C 9C TC JC QC KC AC 2S 3S")  # seat 2: clubs, and two spades
    deal, kitty = full_deal(8, hand, follower)
    state = started(8, deal, kitty)
    with pytest.raises(BadPassCount):
        state.pass_cards(1, cards("2C 3C"))
    with pytest.raises(PassNotInHand):
        state.pass_cards(1, cards("2C 2C 3C"))
    with pytest.raises(OutOfTurn):
        state.play(Card.parse("2C"))
    for seat in range(8):
        state.passes[seat] = []
    state.phase = Phase.PLAYING
    with pytest.raises(NotInHand):
        state.play(Card.parse("AS"))
    with pytest.raises(FirstLeadRestricted):
        state.play(Card.parse("QS"))
    with pytest.raises(OutOfTurn):
        state.play(Card.parse("2C"), seat=0)
    state.play(Card.parse("2C"))
    assert state.to_play == 2
    with pytest.raises(MustFollowSuit):
        state.play(Card.parse("2S"))
    state.play(Card.parse("4C"))  # following suit is accepted
    assert state.to_play == 3


def test_hearts_not_broken() -> None:
    state = State(Rules(players=6))
    hand = cards("2H 3H 2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC 2D 3D")
    deal, kitty = full_deal(6, hand)
    state.start_hand(deal, kitty, skip_passing=True)
    state.tricks.append(state.current.__class__(leader=1, cards=cards("2S 3S 4S 5S 6S 7S"), winner=1))
    with pytest.raises(HeartsNotBroken):
        state.play(Card.parse("2H"))


def test_skipping_the_passes_starts_the_hand_at_its_first_lead() -> None:
    deal, kitty = full_deal(7, cards("2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC 2D"))
    state = State(Rules(players=7, first_dealer=3))
    state.start_hand(deal, kitty, skip_passing=True)
    assert state.phase is Phase.PLAYING and state.to_play == 4
    assert [list(h) for h in state.hands] == [sorted(h) for h in deal]
    assert state.awaiting_pass() == [] and all(state.received(s) == [] for s in range(7))
    with pytest.raises(OutOfTurn):
        state.pass_cards(0, deal[0][:3])


def _act(state: State, rng: random.Random) -> None:
    """One random legal action, whatever the game waits for (deals seeded from the hand's index)."""
    decision = state.to_decide()
    assert decision is not None
    if decision.kind is DecisionKind.DEAL:
        state.start_hand(*deal_hand(state.rules, "engine", decision.hand_index))
    elif decision.kind is DecisionKind.PASS:
        seat = decision.seats[0]
        state.pass_cards(seat, rng.sample(list(state.hands[seat]), 3))
    elif decision.kind is DecisionKind.PLAY:
        state.play(rng.choice(state.legal_plays()))
    else:
        state.choose_moon(rng.choice(list(MoonChoice)))


def test_a_game_taken_up_at_a_later_hand_deals_and_ends_as_that_hand() -> None:
    rules = Rules(players=7, max_hands=6, target_score=10**6)
    state = State(rules, totals=[5, 0, 0, 0, 0, 0, 9], next_hand=4)
    rng = random.Random(1)
    _act(state, rng)
    assert state.hand_index == 4 and state.dealer == 4 and state.pass_direction.value == "left"
    assert state.to_play == 5
    while not state.game_over:
        _act(state, rng)
    # Hands 4 and 5 are played: the sixth hand is the last of max_hands = 6.
    assert [r.index for r in state.results] == [4, 5]
    assert state.totals == [
        t + sum(r.scores[s] for r in state.results) for s, t in enumerate([5, 0, 0, 0, 0, 0, 9])
    ]
    with pytest.raises(ValueError, match="totals"):
        State(rules, totals=[0] * 6)
    with pytest.raises(ValueError, match="0 or more"):
        State(rules, next_hand=-1)


def test_a_copy_plays_on_alone() -> None:
    """``State.copy``: playing a copy to the game's end leaves the original exactly as it was,
    and two copies given the same actions end the same game."""
    rng = random.Random(4)
    copies = 0
    for players in (6, 9, 11):
        state = State(Rules(players=players, target_score=60))
        while not state.game_over:
            _act(state, rng)
            if rng.random() < 0.03:
                before = copy.deepcopy(vars(state))
                seed = rng.random()
                twins = [state.copy(), state.copy()]
                for twin in twins:
                    assert set(vars(twin)) == set(before)
                    play = random.Random(seed)
                    while not twin.game_over:
                        _act(twin, play)
                assert vars(state) == before
                assert twins[0].totals == twins[1].totals
                assert [r.plays for r in twins[0].results] == [r.plays for r in twins[1].results]
                copies += 1
    assert copies > 20


def test_card_set_holds_two_copies() -> None:
    hand = CardSet(cards("QS QS 2C"))
    assert len(hand) == 3 and hand.count(Card.parse("QS")) == 2 and hand.points == 26
    hand.remove(Card.parse("QS"))
    assert hand.count(Card.parse("QS")) == 1
    with pytest.raises(ValueError):
        CardSet(cards("2C 2C 2C"))
    assert str(CardSet(cards("AS 2C"))) == "2C AS"
    with pytest.raises(ValueError, match="unknown card code"):
        Card.parse("1S")


def test_hand_scores_follow_the_rules_and_the_vectors(vectors: list[Path]) -> None:
    assert hand_scores([20, 32, 0, 0, 0, 0]) == [20, 32, 0, 0, 0, 0]
    assert moon_shooter([0, 52, 0, 0, 0, 0]) == 1
    assert hand_scores([0, 52, 0, 0, 0, 0], MoonChoice.SELF_MINUS_26) == [0, -26, 0, 0, 0, 0]
    assert hand_scores([0, 52, 0, 0, 0, 0], MoonChoice.OTHERS_PLUS_26) == [26, 0, 26, 26, 26, 26]
    with pytest.raises(ValueError, match="shot the moon"):
        hand_scores([0, 52, 0, 0, 0, 0])
    # Every hand of every golden vector, the moon shots included, scores as the vector says.
    moons = 0
    for path in vectors:
        vector = json.loads(path.read_text())
        expected = vector["expected"].get("hands") or []
        for played, hand in zip(vector["record"]["hands"], expected, strict=False):
            choice = played.get("moon_choice") if hand["moon"] is not None else None
            assert hand_scores(hand["points"], choice and MoonChoice(choice)) == hand["scores"], path.name
            moons += hand["moon"] is not None
    assert moons >= 6, "the moon vectors went unchecked"
