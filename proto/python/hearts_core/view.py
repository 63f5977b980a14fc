"""What one seat may know: a View, built from scratch for that seat.

RULES.md "Hidden information" allows a seat its own hand, the three cards it passed and the
three it received, every card played with who played it and who won each trick (or that it was
set aside), the size of the kitty and, only when the hand ends, the kitty and everyone's points.

:func:`build_view` reads exactly those facts out of the :class:`State` and nothing else; it
never copies the state and blanks fields out. The View is the only object that ever reaches a
bot, in-process or (converted to protobuf at the edge) over gRPC.
"""

from __future__ import annotations

from dataclasses import dataclass

from hearts_core.cards import Card, CardSet
from hearts_core.public import HandSummary, TrickView
from hearts_core.rules import PassDirection, Rules
from hearts_core.state import Phase, State


@dataclass(frozen=True, slots=True)
class View:
    """Everything one seat may know at one moment, and nothing more.

    Attributes:
        rules: The game's parameters (public).
        seat: The seat this view belongs to.
        phase: Where the game stands.
        hand_index: The current hand, counting from 0.
        dealer: The current hand's dealer.
        pass_direction: Where this hand's passes go.
        hand: This seat's cards now.
        passed: The three cards this seat passed (empty until it has passed).
        received: The three cards it received (empty until every pass is in).
        tricks: The completed tricks of this hand, in order.
        current: The trick in progress (possibly empty), or ``None`` outside play.
        to_play: The seat to act (play, or choose for the moon), or ``None``.
        hearts_broken: Whether a heart or the Black Maria was played to an earlier trick.
        hand_sizes: Cards held by each seat now.
        kitty_size: How many cards the kitty holds.
        kitty_taker: The seat that won the kitty (the first trick winner), once known.
        taken: Per seat, the points of the trick cards it has collected this hand, not counting
            the kitty, whose contents stay hidden until the hand ends.
        set_aside: Cards of set-aside tricks waiting for the next trick winner.
        totals: Per seat, the game totals before this hand.
        legal: The distinct cards this seat may play now; empty unless it is to play.
        moon_shooter: The seat choosing the moon option, during that choice.
        history: The finished hands, revealed.
    """

    rules: Rules
    seat: int
    phase: Phase
    hand_index: int
    dealer: int
    pass_direction: PassDirection
    hand: CardSet
    passed: tuple[Card, ...]
    received: tuple[Card, ...]
    tricks: tuple[TrickView, ...]
    current: TrickView | None
    to_play: int | None
    hearts_broken: bool
    hand_sizes: tuple[int, ...]
    kitty_size: int
    kitty_taker: int | None
    taken: tuple[int, ...]
    set_aside: tuple[Card, ...]
    totals: tuple[int, ...]
    legal: tuple[Card, ...]
    moon_shooter: int | None
    history: tuple[HandSummary, ...]

    @property
    def players(self) -> int:
        """The table size."""
        return self.rules.players

    def played_cards(self) -> list[tuple[int, Card]]:
        """Every (seat, card) played this hand, in order, the current trick included."""
        out: list[tuple[int, Card]] = []
        n = self.players
        tricks = (*self.tricks, self.current) if self.current else self.tricks
        for trick in tricks:
            leader = trick.leader  # cards[i] was played by (leader + i) % n, as TrickView.seat_of
            out.extend([((leader + i) % n, c) for i, c in enumerate(trick.cards)])
        return out


def build_view(state: State, seat: int) -> View:
    """Builds ``seat``'s View of ``state`` from the facts that seat may know.

    Raises:
        ValueError: if ``seat`` is not a seat of the table.
    """
    n = state.players
    if not 0 <= seat < n:
        raise ValueError(f"seat must be 0..{n - 1}, not {seat}")
    history = state.summaries
    in_hand = state.phase in (Phase.PASSING, Phase.PLAYING, Phase.MOON_CHOICE)
    if not in_hand:
        # Between hands and after the game: only the public record of finished hands.
        last = state.hand_index
        return View(
            rules=state.rules,
            seat=seat,
            phase=state.phase,
            hand_index=last,
            dealer=state.rules.dealer(max(last, 0)),
            pass_direction=PassDirection.for_hand(max(last, 0)),
            hand=CardSet(),
            passed=(),
            received=(),
            tricks=(),
            current=None,
            to_play=None,
            hearts_broken=False,
            hand_sizes=(0,) * n,
            kitty_size=state.rules.kitty_size,
            kitty_taker=None,
            taken=(0,) * n,
            set_aside=(),
            totals=tuple(state.totals),
            legal=(),
            moon_shooter=None,
            history=history,
        )
    own_pass = state.passes[seat]
    playing = state.phase is Phase.PLAYING
    if state.phase is Phase.MOON_CHOICE:
        to_play: int | None = state.moon_shooter
    elif playing:
        to_play = state.to_play
    else:
        to_play = None
    return View(
        rules=state.rules,
        seat=seat,
        phase=state.phase,
        hand_index=state.hand_index,
        dealer=state.dealer,
        pass_direction=state.pass_direction,
        hand=state.hands[seat].copy(),
        passed=tuple(own_pass) if own_pass is not None else (),
        received=tuple(state.received(seat)),
        tricks=state.trick_views,
        current=TrickView(state.current.leader, tuple(state.current.cards), None, False) if playing else None,
        to_play=to_play,
        hearts_broken=state.hearts_broken,
        hand_sizes=tuple([h.once.bit_count() + h.twice.bit_count() for h in state.hands]),
        kitty_size=state.rules.kitty_size,
        kitty_taker=state.kitty_taker,
        # Points and waiting cards from the public tricks alone: the kitty travels with the
        # first winnings but its cards stay hidden until the hand ends.
        taken=tuple(state.public_taken),
        set_aside=tuple(state.public_waiting),
        totals=tuple(state.totals),
        legal=state.legal_plays() if playing and state.to_play == seat else (),
        moon_shooter=state.moon_shooter,
        history=history,
    )


__all__ = ["HandSummary", "TrickView", "View", "build_view"]
