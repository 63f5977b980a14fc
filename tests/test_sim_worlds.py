"""``hearts_client.sim.sample_worlds``: property tests on positions from real games.

A position is a real game (``hearts_core``) stopped late in a hand, so that few cards are hidden.
The constraints a world must satisfy are worked out here again, independently of the sampler,
from the View alone: the seat's hand, every card played, hand sizes and the kitty size, the
cards it passed (still in the receiver's hand unless played since), voids shown, and what a lead
proves. Then:

* every sampled world satisfies them, and the true world does too (the checker is not vacuous);
* over many samples, every (card, place) pair that some consistent world has appears: the set
  of possible pairs is computed exactly by a matching with the card forced into the place.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hearts_client.sampler import World
from hearts_client.sim import Game, sample_worlds
from hearts_core.cards import FULL_MASK, HEARTS_MASK, POINT_MASK, SUIT_MASKS, CardSet
from hearts_core.deal import deal_hand
from hearts_core.rules import Rules
from hearts_core.state import State
from hearts_core.view import View, build_view


def _position(players: int, seed: int, left: int) -> tuple[State, View]:
    """A random game stopped with about ``left`` cards per seat still to play."""
    rng = random.Random(seed)
    rules = Rules(players)
    state = State(rules)
    state.start_hand(*deal_hand(rules, f"worlds-{seed}", 0))
    for seat in range(players):
        state.pass_cards(seat, rng.sample(list(state.hands[seat]), 3))
    stop = players * (rules.hand_size - left) + rng.randrange(players)
    for _ in range(stop):
        state.play(rng.choice(state.legal_plays()))
    return state, build_view(state, state.to_play)


def _constraints(view: View) -> tuple[list[int], list[int], Counter[int], list[Counter[int]]]:
    """Per place (seats, then the kitty): allowed cards mask, capacity; the hidden pool; known cards."""
    n = view.players
    me = view.seat
    allowed = [FULL_MASK] * (n + 1)
    tricks = [*view.tricks, *([view.current] if view.current and view.current.cards else [])]
    broken = False
    for index, trick in enumerate(tricks):
        lead = trick.cards[0]
        if index == 0 and POINT_MASK >> lead & 1:
            allowed[trick.leader] &= POINT_MASK
        elif not broken and HEARTS_MASK >> lead & 1:
            allowed[trick.leader] &= HEARTS_MASK
        suit = SUIT_MASKS[lead // 13]
        for i, card in enumerate(trick.cards):
            if not suit >> card & 1:
                allowed[(trick.leader + i) % n] &= ~suit
        if trick.complete and any(POINT_MASK >> c & 1 for c in trick.cards):
            broken = True
    known: list[Counter[int]] = [Counter() for _ in range(n + 1)]
    known[me] = Counter(int(c) for c in view.hand)
    receiver = view.pass_direction.target(me, n)
    played_by_receiver = Counter(int(c) for s, c in view.played_cards() if s == receiver)
    known[receiver] = Counter(int(c) for c in view.passed) - played_by_receiver
    pool = Counter({c: 2 for c in range(52)})
    pool -= Counter(int(c) for c in view.hand)
    pool -= Counter(int(c) for _, c in view.played_cards())
    pool -= known[receiver]
    capacity = [view.hand_sizes[s] - sum(known[s].values()) for s in range(n)] + [view.kitty_size]
    capacity[me] = 0
    return allowed, capacity, pool, known


def _consistent(view: View, world: World) -> bool:
    allowed, capacity, pool, known = _constraints(view)
    n = view.players
    places = [*world.hands, world.kitty]
    hidden: Counter[int] = Counter()
    for place, cards in enumerate(places):
        counts = Counter(int(c) for c in cards) - known[place]
        if Counter(int(c) for c in cards) != counts + known[place]:
            return False  # a known card is missing
        if sum(counts.values()) != capacity[place]:
            return False
        if any(not allowed[place] >> c & 1 for c in counts):
            return False
        hidden += counts
    return hidden == pool and places[view.seat] == view.hand and len(places) == n + 1


def _feasible(allowed: list[int], capacity: list[int], pool: Counter[int]) -> set[tuple[int, int]]:
    """Every (card, place) that some consistent placement has: a matching with the pair forced."""
    units = [c for c, k in sorted(pool.items()) for _ in range(k)]

    def fits(cap: list[int], cards: list[int]) -> bool:
        slots = [p for p, k in enumerate(cap) for _ in range(k)]
        if len(slots) != len(cards):
            return False
        match: dict[int, int] = {}

        def augment(u: int, seen: set[int]) -> bool:
            for slot, place in enumerate(slots):
                if allowed[place] >> cards[u] & 1 and slot not in seen:
                    seen.add(slot)
                    if slot not in match or augment(match[slot], seen):
                        match[slot] = u
                        return True
            return False

        return all(augment(u, set()) for u in range(len(cards)))

    out = set()
    for card in pool:
        rest = list(units)
        rest.remove(card)
        for place, cap in enumerate(capacity):
            if cap and allowed[place] >> card & 1:
                smaller = list(capacity)
                smaller[place] -= 1
                if fits(smaller, rest):
                    out.add((card, place))
    return out


def _pairs(view: View, world: World) -> set[tuple[int, int]]:
    _, _, _, known = _constraints(view)
    out = set()
    for place, cards in enumerate([*world.hands, world.kitty]):
        for card in Counter(int(c) for c in cards) - known[place]:
            out.add((card, place))
    return out


@settings(max_examples=30, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(players=st.integers(6, 11), seed=st.integers(0, 10**6), left=st.integers(1, 3))
def test_sampled_worlds_are_consistent_and_cover_every_placement(players: int, seed: int, left: int) -> None:
    state, view = _position(players, seed, left)
    true = World(hands=tuple(h.copy() for h in state.hands), kitty=CardSet(state.kitty))
    assert _consistent(view, true)
    worlds = sample_worlds(view, 600, seed=seed)
    assert len(worlds) == 600
    seen: set[tuple[int, int]] = set()
    for world in worlds:
        assert _consistent(view, world)
        seen |= _pairs(view, world)
    allowed, capacity, pool, _ = _constraints(view)
    assert seen == _feasible(allowed, capacity, pool)


def test_a_broken_world_is_caught() -> None:
    # The checker above rejects a world that breaks a void, so the property is not vacuous.
    for seed in range(200):
        state, view = _position(8, seed, 3)
        allowed, _, _, _ = _constraints(view)
        for seat in range(8):
            if seat == view.seat or allowed[seat] == FULL_MASK:
                continue
            banned = next(c for c in range(52) if not allowed[seat] >> c & 1)
            for other in range(8):
                if other in (seat, view.seat) or banned not in state.hands[other]:
                    continue
                hands = [h.copy() for h in state.hands]
                swap = next(iter(hands[seat]))
                hands[other].remove(banned)
                hands[other].add(swap)
                hands[seat].remove(swap)
                hands[seat].add(banned)
                assert not _consistent(view, World(hands=tuple(hands), kitty=CardSet(state.kitty)))
                return
    pytest.fail("no position with a void to break")


def test_sample_worlds_is_deterministic_and_feeds_from_view() -> None:
    _, view = _position(7, 3, 4)
    a = sample_worlds(view, 5, seed=1)
    assert a == sample_worlds(view, 5, seed=1)
    assert a != sample_worlds(view, 5, seed=2)
    for world in a:
        game = Game.from_view(view, world)
        assert game.current_player == view.seat
    with pytest.raises(ValueError):
        sample_worlds(view, -1, seed=0)
