"""The world sampler: every world agrees with the seat's View, and only the View reaches it."""

from __future__ import annotations

import copy
import inspect
import random
from collections.abc import Iterator

import pytest

from hearts_client.bots.heuristic import HeuristicBot
from hearts_client.bots.random_bot import RandomBot
from hearts_client.sampler import World, WorldSampler, sample_worlds
from hearts_core.cards import BLACK_MARIA, SUIT_MASKS, Card, CardSet
from hearts_core.deal import deal_hand
from hearts_core.rules import Rules
from hearts_core.state import Phase, State
from hearts_core.view import View, build_view


def decision_points(players: int, hands: int, seed: str) -> Iterator[State]:
    """Yields the true State before every play of ``hands`` hands (mixed random/heuristic)."""
    rules = Rules(players=players)
    for index in range(hands):
        state = State(rules)
        state.hand_index = index - 1  # vary dealer and pass direction
        state.totals = [0] * players
        deal, kitty = deal_hand(rules, seed, index)
        state.start_hand(deal, kitty)
        bots = [
            (RandomBot if (seat + index) % 2 else HeuristicBot)(f"{seed}/{index}/{seat}")
            for seat in range(players)
        ]
        for seat, bot in enumerate(bots):
            state.pass_cards(seat, list(bot.choose_pass(build_view(state, seat))))
        while state.phase is Phase.PLAYING:
            yield state
            seat = state.to_play
            state.play(bots[seat].choose_play(build_view(state, seat)))


def voids(view: View) -> list[int]:
    """Per seat, the suits (as masks) it showed void in by not following, worked out here."""
    shown = [0] * view.players
    tricks = [*view.tricks, *([view.current] if view.current else [])]
    for trick in tricks:
        for position, card in enumerate(trick.cards):
            if card.suit != trick.cards[0].suit:
                shown[trick.seat_of(position, view.players)] |= SUIT_MASKS[trick.cards[0].suit]
    return shown


def assert_agrees(world: World, view: View) -> None:
    n = view.players
    assert world.hands[view.seat] == view.hand
    assert [len(h) for h in world.hands] == list(view.hand_sizes)
    assert len(world.kitty) == view.kitty_size
    for seat, suits in enumerate(voids(view)):
        assert not world.hands[seat].once & suits, f"seat {seat} holds a suit it showed void in"
    receiver = view.pass_direction.target(view.seat, n)
    played_by_receiver = CardSet(c for s, c in view.played_cards() if s == receiver)
    still_held = CardSet(view.passed) - played_by_receiver
    for card in still_held:
        assert world.hands[receiver].count(card) >= still_held.count(card)
    everything = world.kitty.copy()
    for hand in world.hands:
        everything = everything | hand
    everything = everything | CardSet(c for _, c in view.played_cards())
    assert everything == CardSet.full()
    assert len(everything) == 104


@pytest.mark.parametrize("players", range(6, 12))
def test_every_world_agrees_with_the_view(players: int) -> None:
    rng = random.Random(players)
    points = 0
    for step, state in enumerate(decision_points(players, hands=6, seed=f"sampler-{players}")):
        if step % 3:
            continue
        # The seat to play, and another seat watching, both get consistent worlds.
        for seat in (state.to_play, (state.to_play + 2) % players):
            view = build_view(state, seat)
            sampler = WorldSampler(view)
            for b, allowed in enumerate(sampler.allowed[:players]):
                if b != seat:
                    # Every inference the sampler draws holds in the true deal.
                    assert not state.hands[b].once & ~allowed
            for world in sample_worlds(view, rng, 2):
                assert_agrees(world, view)
            points += 1
    assert points > 50


def test_passed_cards_stay_with_the_receiver_until_played() -> None:
    rng = random.Random(7)
    checked = played_since = 0
    for state in decision_points(8, hands=4, seed="passes"):
        view = build_view(state, state.to_play)
        receiver = view.pass_direction.target(view.seat, 8)
        played = CardSet(c for s, c in view.played_cards() if s == receiver)
        still_held = CardSet(view.passed) - played
        played_since += len(still_held) < 3
        for world in sample_worlds(view, rng, 3):
            for card in still_held:
                assert world.hands[receiver].count(card) >= still_held.count(card)
            checked += 1
    assert checked > 100
    assert played_since > 10  # the "unless since played" case was met


def test_the_sampler_is_given_the_view_and_a_generator_only() -> None:
    init = list(inspect.signature(WorldSampler.__init__).parameters)
    assert init == ["self", "view"]
    assert list(inspect.signature(WorldSampler.sample).parameters) == ["self", "rng"]
    assert list(inspect.signature(sample_worlds).parameters) == ["view", "rng", "count"]
    hints = inspect.get_annotations(sample_worlds, eval_str=True)
    assert hints["view"] is View
    assert hints["rng"] is random.Random


def redeal_hidden(state: State, seat: int, rng: random.Random) -> State:
    """A copy of ``state`` with every card ``seat`` cannot see dealt again, consistently.

    Cards move between the other hands and the kitty by swaps of two cards of the same suit
    and the same point value, which keeps every hand size, void and lead inference true; the
    cards ``seat`` passed stay with their receiver.
    """
    other = copy.deepcopy(state)
    n = state.players
    view = build_view(state, seat)
    receiver = view.pass_direction.target(seat, n)
    passed = set(view.passed)
    bins: list[list[Card]] = [list(h) for h in other.hands]
    bins.append(list(other.kitty))
    movable = [b for b in range(n + 1) if b != seat]
    for _ in range(400):
        a, b = rng.sample(movable, 2)
        if not bins[a] or not bins[b]:
            continue
        i, j = rng.randrange(len(bins[a])), rng.randrange(len(bins[b]))
        x, y = bins[a][i], bins[b][j]
        if x.suit != y.suit or (x == BLACK_MARIA) != (y == BLACK_MARIA):
            continue
        if (a == receiver and x in passed) or (b == receiver and y in passed):
            continue
        bins[a][i], bins[b][j] = y, x
    other.hands = [CardSet(cards) for cards in bins[:n]]
    other.kitty = sorted(bins[n])
    if other.kitty_taker is None:
        # The kitty still waits with the set-aside tricks for the first trick winner.
        other.pending = [*other.kitty, *(c for t in other.tricks for c in t.cards)]
    return other


def test_hidden_cards_never_reach_the_sampler() -> None:
    rng = random.Random(3)
    changed = 0
    for step, state in enumerate(decision_points(9, hands=3, seed="leak")):
        if step % 4:
            continue
        seat = state.to_play
        other = redeal_hidden(state, seat, rng)
        changed += other.hands != state.hands or other.kitty != state.kitty
        view, other_view = build_view(state, seat), build_view(other, seat)
        assert view == other_view
        worlds = sample_worlds(view, random.Random(step), 3)
        assert worlds == sample_worlds(other_view, random.Random(step), 3)
    assert changed > 10


def test_a_view_outside_a_hand_is_refused() -> None:
    state = State(Rules(players=6))
    with pytest.raises(ValueError, match="no hand in progress"):
        WorldSampler(build_view(state, 0))
