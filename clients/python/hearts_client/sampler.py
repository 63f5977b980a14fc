"""World sampling: complete deals consistent with one seat's View, and with nothing else.

A *world* places every card the seat cannot see: the other seats' hands and the kitty. The
:class:`WorldSampler` is built from a :class:`~hearts_core.view.View` alone, so it cannot
know anything that view does not hold. It honours every fact the seat is entitled to:

* its own hand, exactly;
* every card played, with who played it (those cards are in no hand);
* each seat's hand size, and the kitty size (the kitty's cards stay hidden all hand);
* the cards it passed: they sit in the receiver's hand unless the receiver has since played
  that card (counted as a multiset, since both copies of a card may be passed);
* voids: a seat that did not follow the suit led holds none of that suit;
* what a lead proves: the hand's first lead may be a heart or the Black Maria only from a hand
  of nothing else, and a heart may be led before hearts are broken only from a hand of hearts.

The cards the seat received need no constraint: they are in its own hand.

Sampling deals the constrained cards first, most constrained first, each to a seat chosen with
probability proportional to the room left in it; when a card finds every admissible seat full,
an augmenting path moves already-dealt cards along so that it fits (a world always exists: the
true one). The remaining, unconstrained cards are then shuffled into the room left, which is
exactly uniform when no constraint applies and close to uniform otherwise.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass

from hearts_core.cards import (
    CARDS,
    FULL_MASK,
    HEARTS_MASK,
    POINT_MASK,
    SUIT_MASKS,
    Card,
    CardSet,
)
from hearts_core.state import Phase
from hearts_core.view import View


@dataclass(frozen=True, slots=True)
class World:
    """One complete placement of the cards still in play.

    Attributes:
        hands: Every seat's hand, the sampling seat's own included (exactly its real hand).
        kitty: The kitty's cards.
    """

    hands: tuple[CardSet, ...]
    kitty: CardSet


class WorldSampler:
    """Samples worlds consistent with one View.

    The constraints are worked out once from the view; :meth:`sample` then draws as many
    worlds as wanted. Two views that are equal give samplers that draw identical worlds from
    identically seeded generators.

    Args:
        view: The seat's View, during the passing or playing phase of a hand.

    Raises:
        ValueError: if the view is not inside a hand, or is inconsistent (a card seen more than
            twice).
    """

    def __init__(self, view: View) -> None:
        if view.phase not in (Phase.PASSING, Phase.PLAYING, Phase.MOON_CHOICE):
            raise ValueError(f"no hand in progress (phase {view.phase})")
        n = view.players
        me = view.seat
        self.players = n
        self.seat = me
        # Copies of each card nobody is known to hold: start from two decks and take away
        # everything the seat can place.
        remaining = [2] * 52
        for card in view.hand:
            remaining[card] -= 1
        played_by: list[CardSet] = [CardSet() for _ in range(n)]
        for seat, card in view.played_cards():
            remaining[card] -= 1
            played_by[seat].add(card)
        known: list[CardSet] = [CardSet() for _ in range(n)]
        known[me] = view.hand.copy()
        if view.phase is not Phase.PASSING and view.passed:
            receiver = view.pass_direction.target(me, n)
            still_held = CardSet(view.passed) - played_by[receiver]
            for card in still_held:
                remaining[card] -= 1
            known[receiver] = still_held
        if any(count < 0 for count in remaining):
            raise ValueError("the view shows a card more than twice")
        self.known: tuple[CardSet, ...] = tuple(known)
        # Bins 0..n-1 are seats, bin n is the kitty; the seat's own bin has no room.
        self.allowed: tuple[int, ...] = (*_allowed_masks(view), FULL_MASK)
        capacity = [view.hand_sizes[s] - len(known[s]) for s in range(n)]
        capacity[me] = 0
        capacity.append(view.kitty_size)
        self.capacity: tuple[int, ...] = tuple(capacity)
        pool = [CARDS[c] for c in range(52) for _ in range(remaining[c])]
        if sum(capacity) != len(pool) or min(capacity) < 0:
            raise ValueError(
                f"{len(pool)} unseen cards do not fit hand sizes {view.hand_sizes} "
                f"and a kitty of {view.kitty_size}"
            )
        open_bins = [b for b in range(n + 1) if capacity[b] > 0]
        self._eligible: dict[Card, tuple[int, ...]] = {
            card: tuple(b for b in open_bins if self.allowed[b] >> card & 1) for card in set(pool)
        }
        # A card admissible in every bin with room needs no care: it is shuffled into
        # whatever room is left once the constrained cards are placed.
        self._constrained = [c for c in pool if len(self._eligible[c]) < len(open_bins)]
        self._free = [c for c in pool if len(self._eligible[c]) == len(open_bins)]
        for card in self._constrained:
            if not self._eligible[card]:
                raise ValueError(f"no seat may hold {card}")

    def sample(self, rng: random.Random) -> World:
        """Draws one world.

        Args:
            rng: The only source of randomness; the same seed gives the same world.

        Returns:
            A world in which every seat's hand and the kitty agree with the view.
        """
        n = self.players
        left = list(self.capacity)
        dealt: list[list[Card]] = [[] for _ in range(n + 1)]
        cards = list(self._constrained)
        rng.shuffle(cards)
        eligible = self._eligible
        cards.sort(key=lambda c: len(eligible[c]))
        for card in cards:
            bins = [b for b in eligible[card] if left[b]]
            if bins:
                pick = rng.randrange(sum(left[b] for b in bins))
                for target in bins:
                    pick -= left[target]
                    if pick < 0:
                        break
            else:
                target = self._make_room(card, dealt, left)
            dealt[target].append(card)
            left[target] -= 1
        free = list(self._free)
        rng.shuffle(free)
        start = 0
        for target in range(n + 1):
            dealt[target].extend(free[start : start + left[target]])
            start += left[target]
        hands = tuple(_with(self.known[s], dealt[s]) for s in range(n))
        return World(hands=hands, kitty=_with(CardSet(), dealt[n]))

    def _make_room(self, card: Card, dealt: list[list[Card]], left: list[int]) -> int:
        # Breadth-first search for an augmenting path: a chain of moves, each card going to
        # another bin that admits it, ending in a bin with room. It frees a place in a bin that
        # admits ``card`` and exists whenever a consistent world does.
        parent: dict[int, tuple[int, Card] | None] = dict.fromkeys(self._eligible[card])
        queue = deque(parent)
        while queue:
            source = queue.popleft()
            for moved in dict.fromkeys(dealt[source]):
                for target in self._eligible[moved]:
                    if target in parent:
                        continue
                    parent[target] = (source, moved)
                    if left[target]:
                        step = parent[target]
                        while step is not None:
                            origin, shifted = step
                            dealt[origin].remove(shifted)
                            dealt[target].append(shifted)
                            left[target] -= 1
                            left[origin] += 1
                            target = origin
                            step = parent[target]
                        return target
                    queue.append(target)
        raise ValueError(f"no world consistent with the view has room for {card}")


def _with(known: CardSet, cards: list[Card]) -> CardSet:
    # CardSet.add per card, inlined: building hands is a good part of the cost of a world.
    once, twice = known.once, known.twice
    for card in cards:
        bit = 1 << card
        if once & bit:
            twice |= bit
        else:
            once |= bit
    return CardSet.from_masks(once, twice)


def sample_worlds(view: View, rng: random.Random, count: int) -> list[World]:
    """Draws ``count`` worlds consistent with ``view``.

    Args:
        view: The seat's View; nothing else is consulted.
        rng: The source of randomness.
        count: How many worlds to draw.

    Returns:
        The worlds, in drawing order.
    """
    sampler = WorldSampler(view)
    return [sampler.sample(rng) for _ in range(count)]


def _allowed_masks(view: View) -> list[int]:
    """Per seat, the cards it may still hold, from the voids and leads it has shown."""
    n = view.players
    allowed = [FULL_MASK] * n
    broken = False
    tricks = [*view.tricks, *([view.current] if view.current is not None else [])]
    for index, trick in enumerate(tricks):
        if not trick.cards:
            continue
        lead = trick.cards[0]
        if index == 0 and POINT_MASK >> lead & 1:
            # The first lead may be a point card only from a hand of point cards.
            allowed[trick.leader] &= POINT_MASK
        elif not broken and HEARTS_MASK >> lead & 1:
            # Hearts may be led unbroken only from a hand of nothing but hearts.
            allowed[trick.leader] &= HEARTS_MASK
        suit = SUIT_MASKS[lead // 13]
        for position, card in enumerate(trick.cards):
            if not suit >> card & 1:
                allowed[trick.seat_of(position, n)] &= ~suit
        if any(POINT_MASK >> c & 1 for c in trick.cards) and trick.complete:
            broken = True
    return allowed
