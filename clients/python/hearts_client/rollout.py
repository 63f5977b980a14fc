"""Fast rollouts: play a sampled world to the end of the hand with a heuristic on bit masks.

A rollout starts from a :class:`Position` (the public facts of the hand at one decision, read
from the deciding seat's View), a sampled world (every hand and the kitty) and the card the
deciding seat is trying. It then plays every remaining card with :func:`policy_card`, a port of
:class:`hearts_client.bots.heuristic.HeuristicBot` to 52-bit masks, and returns the points each
seat collected. Each seat's policy consults only what that seat could know in the world: its
own hand, the cards played and the points taken, never the other hands.

The rollout is pure Python tuned for speed: hands are ``once``/``twice`` masks as in
:class:`hearts_core.cards.CardSet`, the trick in progress is tracked as two masks of the led
suit (cards seen once, cards seen twice, so cancellation is a mask operation), and no object
is allocated per card.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from hearts_client.bot import MOON_ALERT_POINTS
from hearts_core.cards import BLACK_MARIA, FULL_MASK, HEARTS_MASK, POINT_MASK, SUIT_MASKS
from hearts_core.view import View

_QS: Final = int(BLACK_MARIA)
_QS_BIT: Final = 1 << _QS
_SPADES: Final = 3
_SPADE_MASK: Final = SUIT_MASKS[_SPADES]
_NON_POINT: Final = FULL_MASK & ~POINT_MASK
_NON_HEART: Final = FULL_MASK & ~HEARTS_MASK
# King and ace of spades: they catch the Black Maria while it is out.
_HIGH_SPADES: Final = (1 << (_SPADES * 13 + 11)) | (1 << (_SPADES * 13 + 12))
_SUITS: Final = tuple(SUIT_MASKS)
_RANK: Final = tuple(c % 13 + 2 for c in range(52))
_POINTS: Final = tuple(13 if c == _QS else (1 if HEARTS_MASK >> c & 1 else 0) for c in range(52))
# Bits strictly above each card, within all 52 bits: who beats a card of the led suit.
_ABOVE: Final = tuple(FULL_MASK & ~((2 << c) - 1) for c in range(52))


@dataclass(frozen=True, slots=True)
class Position:
    """The public state of a hand at one seat's play decision.

    Attributes:
        players: The table size.
        seat: The seat about to play.
        leader: The leader of the trick in progress.
        trick: The cards already played to the trick in progress, in order.
        tricks_left: Tricks still to complete, the one in progress included.
        first_trick: Whether the trick in progress is the hand's first.
        hearts_broken: Whether a point card was played to an earlier trick.
        taken: Per seat, the points collected from tricks so far (the kitty not included).
        pending: Points of set-aside tricks waiting for the next trick winner.
        kitty_taker: Who collected the kitty, or ``None`` while it still waits.
        played_once: Cards played this hand at least once (the trick in progress included).
        played_twice: Cards played twice.
    """

    players: int
    seat: int
    leader: int
    trick: tuple[int, ...]
    tricks_left: int
    first_trick: bool
    hearts_broken: bool
    taken: tuple[int, ...]
    pending: int
    kitty_taker: int | None
    played_once: int
    played_twice: int

    @classmethod
    def from_view(cls, view: View) -> Position:
        """The position of ``view``'s seat, which must be to play.

        Raises:
            ValueError: if the view's seat is not to play a card.
        """
        if view.current is None or view.to_play != view.seat or not view.legal:
            raise ValueError("the view's seat is not to play")
        once = twice = 0
        for _, card in view.played_cards():
            bit = 1 << card
            if once & bit:
                twice |= bit
            else:
                once |= bit
        return cls(
            players=view.players,
            seat=view.seat,
            leader=view.current.leader,
            trick=tuple(int(c) for c in view.current.cards),
            tricks_left=view.rules.hand_size - len(view.tricks),
            first_trick=not view.tricks,
            hearts_broken=view.hearts_broken,
            taken=view.taken,
            pending=sum(c.points for c in view.set_aside),
            kitty_taker=view.kitty_taker,
            played_once=once,
            played_twice=twice,
        )


def _led_masks(trick: Sequence[int]) -> tuple[int, int, int]:
    """The suit led, and the cards of that suit played once or more and twice, as masks.

    The rollout carries these masks along the trick instead of recomputing the winner
    (:func:`hearts_core.state.winning_index`) card by card.
    """
    led = seen = dup = 0
    if trick:
        led = trick[0] // 13
        for played in trick:
            if played // 13 == led:
                bit = 1 << played
                if seen & bit:
                    dup |= bit
                else:
                    seen |= bit
    return led, seen, dup


def rollout(
    position: Position, once: Sequence[int], twice: Sequence[int], kitty_points: int, card: int
) -> list[int]:
    """Plays ``card`` for the position's seat, then the rest of the hand with the heuristic.

    Args:
        position: The public state at the decision.
        once: Per seat, the sampled hand's "held at least once" mask (the seat's own included).
        twice: Per seat, the "held twice" mask.
        kitty_points: The points in the sampled kitty.
        card: The card to try; it must be legal for the seat.

    Returns:
        Per seat, the points collected by the end of the hand, the kitty included (before any
        moon shot is scored).
    """
    n = position.players
    once = list(once)
    twice = list(twice)
    taken = list(position.taken)
    pending = position.pending
    kitty_taker = position.kitty_taker
    broken = position.hearts_broken
    first = position.first_trick
    p_once = position.played_once
    p_twice = position.played_twice
    leader = position.leader
    trick = list(position.trick)
    threat = _threat(taken)

    # The led suit's cards seen once and twice, and the trick's points, so far.
    points = sum(_POINTS[played] for played in trick)
    led, seen, dup = _led_masks(trick)
    seat = position.seat
    tricks_left = position.tricks_left
    while True:
        # Play ``card`` for ``seat``: it leaves the hand and joins the trick.
        bit = 1 << card
        if twice[seat] & bit:
            twice[seat] ^= bit
        else:
            once[seat] ^= bit
        if p_once & bit:
            p_twice |= bit
        else:
            p_once |= bit
        if not trick:
            led = card // 13
        if card // 13 == led:
            if seen & bit:
                dup |= bit
            else:
                seen |= bit
        points += _POINTS[card]
        trick.append(card)
        if len(trick) == n:
            single = seen & ~dup
            if single:
                winner = (leader + trick.index(single.bit_length() - 1)) % n
                if pending or points:
                    taken[winner] += pending + points
                    pending = 0
                    threat = _threat(taken)
                if kitty_taker is None:
                    kitty_taker = winner
                leader = winner
            else:
                pending += points
            if points:
                broken = True
            tricks_left -= 1
            if not tricks_left:
                break
            first = False
            trick = []
            led = seen = dup = points = 0
            seat = leader
        else:
            seat = (seat + 1) % n
        held = once[seat]
        follow = held & _SUITS[led] if trick else 0
        if follow and not follow & (follow - 1):
            # A single card of the led suit: forced, no policy to ask.
            card = follow.bit_length() - 1
        else:
            card = _choose(
                seat, held, twice[seat], trick, led, seen, dup, len(trick) == n - 1,
                first, broken, p_once, p_twice, threat, pending + points, leader, n,
            )  # fmt: skip
    if kitty_taker is not None:
        taken[kitty_taker] += kitty_points
    return taken


def policy_card(position: Position, once: int, twice: int) -> int:
    """The card the rollout policy would play at ``position`` holding ``once``/``twice``.

    Args:
        position: The public state at the decision.
        once: The deciding seat's "held at least once" mask.
        twice: Its "held twice" mask.

    Returns:
        The card (as an integer 0..51) the heuristic policy picks.
    """
    trick = list(position.trick)
    led, seen, dup = _led_masks(trick)
    pending = position.pending + sum(_POINTS[c] for c in trick)
    return _choose(
        position.seat, once, twice, trick, led, seen, dup, len(trick) == position.players - 1,
        position.first_trick, position.hearts_broken, position.played_once,
        position.played_twice, _threat(list(position.taken)), pending, position.leader,
        position.players,
    )  # fmt: skip


def _threat(taken: list[int]) -> int:
    # The heuristic's moon alert: the one seat holding every visible point, if it holds enough;
    # -1 when there is none.
    holder = -1
    for seat, points in enumerate(taken):
        if points > 0:
            if holder >= 0:
                return -1
            holder = seat
    return holder if holder >= 0 and taken[holder] >= MOON_ALERT_POINTS else -1


def _choose(
    seat: int,
    once: int,
    twice: int,
    trick: list[int],
    led: int,
    seen: int,
    dup: int,
    last: bool,
    first: bool,
    broken: bool,
    p_once: int,
    p_twice: int,
    threat: int,
    trick_points: int,
    leader: int,
    n: int,
) -> int:
    """The heuristic's card for ``seat`` (see :class:`HeuristicBot.choose_play`)."""
    if not trick:
        if first:
            legal = once & _NON_POINT or once
        elif not broken:
            legal = once & _NON_HEART or once
        else:
            legal = once
        if not legal & (legal - 1):
            return legal.bit_length() - 1
        return _lead(once, twice, legal, p_once, p_twice)
    single = seen & ~dup
    top = single.bit_length() - 1  # -1: every card of the led suit so far cancelled
    shooter_wins = threat >= 0 and threat != seat and top >= 0 and (leader + trick.index(top)) % n == threat
    legal = once & _SUITS[led]
    if not legal:
        return _discard(once, twice, p_twice, shooter_wins)
    if not legal & (legal - 1):
        return legal.bit_length() - 1
    takes = legal & ~seen & _ABOVE[top] if top >= 0 else legal & ~seen
    if shooter_wins and trick_points > 0 and takes:
        # Spoil the moon: take this trick's points away from the shooter.
        return takes.bit_length() - 1 if last else (takes & -takes).bit_length() - 1
    ducks = legal & ~takes
    if ducks:
        if ducks & _QS_BIT:
            return _QS
        if not last and top >= 0 and not (p_twice >> top & 1) and not (once >> top & 1):
            # The winner's twin is still out and may cancel it: duck low.
            return (ducks & -ducks).bit_length() - 1
        return ducks.bit_length() - 1
    safe = takes & _NON_POINT or takes
    return safe.bit_length() - 1 if last else (safe & -safe).bit_length() - 1


def _discard(once: int, twice: int, p_twice: int, shooter_wins: bool) -> int:
    if shooter_wins:
        # Give the would-be shooter no points.
        safe = once & _NON_POINT
        if safe:
            best = -1
            for suit_mask in _SUITS:
                cards = safe & suit_mask
                if cards:
                    card = cards.bit_length() - 1
                    if best < 0 or _RANK[card] > _RANK[best]:
                        best = card
            return best
    if once & _QS_BIT:
        return _QS
    hearts = once & HEARTS_MASK
    if hearts:
        top = hearts.bit_length() - 1
        if _RANK[top] >= 10 or hearts == once:
            return top
    # Fewer than two Black Marias seen means at least one is still out (we hold none here).
    if not p_twice & _QS_BIT:
        high = once & _HIGH_SPADES
        if high:
            return high.bit_length() - 1
    best = -1
    best_key = (0, 0)
    for suit_mask in _SUITS:
        cards = once & suit_mask
        if cards:
            card = cards.bit_length() - 1
            key = (
                _RANK[card] - cards.bit_count() - (twice & suit_mask).bit_count(),
                _POINTS[card],
            )
            if best < 0 or key > best_key:
                best, best_key = card, key
    return best


def _lead(once: int, twice: int, legal: int, p_once: int, p_twice: int) -> int:
    held_maria = (once >> _QS & 1) + (twice >> _QS & 1)
    marias_out = not p_twice >> _QS & 1 and held_maria < 2
    best = -1
    best_score = 0.0
    for suit, suit_mask in enumerate(_SUITS):
        cards = legal & suit_mask
        if not cards:
            continue
        unseen = (
            26
            - (p_once & suit_mask).bit_count()
            - (p_twice & suit_mask).bit_count()
            - (once & suit_mask).bit_count()
            - (twice & suit_mask).bit_count()
        )
        card = (cards & -cards).bit_length() - 1
        if card == _QS and not marias_out and cards != _QS_BIT:
            # Holding both Black Marias, a high spade (no longer dangerous) beats leading one.
            rest = cards & ~_QS_BIT
            card = (rest & -rest).bit_length() - 1
        rank = _RANK[card]
        score = rank - min(unseen, 8) * 0.5
        if _POINTS[card]:
            score += 30.0
        if suit == _SPADES and marias_out:
            if rank > 12:
                score += 40.0
            elif rank < 12 and not held_maria:
                score -= 3.0  # flush the Black Maria out with low spades
        if best < 0 or score < best_score:
            best, best_score = card, score
    return best
