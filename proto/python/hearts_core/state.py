"""The referee's State: the whole truth of one game, and the only object that mutates.

A game is a sequence of hands. Each hand is started with an explicit deal (seeded dealing lives
in :mod:`hearts_core.deal`, replay feeds the deals of a record), then goes through passing,
playing and, when someone shoots the moon, the moon choice. Every action is checked in layers
("is the card held" → "is it legal here") and an illegal one raises the :mod:`errors` type
carrying its conformance code, leaving the state unchanged.

Rule choices this module makes where RULES.md leaves room (documented in README "Rules notes"):

* On the first lead of a hand, a leader holding only hearts and the Black Maria may lead any
  card, hearts included, although hearts are not broken ("if the leader holds nothing else,
  any card may be led" is taken to override the hearts-broken rule for that one lead).
* Set-aside cards waiting when the hand ends are uncollected. Since the kitty waits with them
  until someone wins a trick, a hand in which nobody wins any trick leaves the kitty uncollected
  too.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, field

from hearts_core.cards import (
    BLACK_MARIA,
    CARDS,
    HEARTS_MASK,
    POINT_MASK,
    SUIT_MASKS,
    Card,
    CardSet,
    cards_of_mask,
    suit_cards,
)
from hearts_core.errors import (
    BadDeal,
    BadMoonChoice,
    BadPassCount,
    FirstLeadRestricted,
    GameAlreadyOver,
    HeartsNotBroken,
    MustFollowSuit,
    NotInHand,
    OutOfTurn,
    PassNotInHand,
)
from hearts_core.public import HandSummary, TrickView
from hearts_core.rules import MoonChoice, PassDirection, Rules, hand_scores, moon_shooter

PASS_COUNT = 3
_NON_POINT = ~POINT_MASK
_NON_HEART = ~HEARTS_MASK


class Phase(enum.StrEnum):
    """Where the game stands."""

    DEALING = "dealing"  # waiting for the next hand's deal
    PASSING = "passing"
    PLAYING = "playing"
    MOON_CHOICE = "moon_choice"
    GAME_OVER = "game_over"


class DecisionKind(enum.StrEnum):
    """What the game waits for next."""

    DEAL = "deal"  # the next hand's cards (the dealer's job: a seed, or a record)
    PASS = "pass"  # three cards from each seat still to pass
    PLAY = "play"  # one card from the seat to play
    MOON = "moon"  # the moon shooter's option


@dataclass(frozen=True, slots=True)
class Decision:
    """Who must decide, and what: the answer of :meth:`State.to_decide`.

    Attributes:
        kind: What is decided.
        seats: Who decides: every seat still to pass (in seat order) for ``PASS``, the one seat
            for ``PLAY`` and ``MOON``, none for ``DEAL``.
        hand_index: The hand it belongs to (for ``DEAL``, the hand about to be dealt).
    """

    kind: DecisionKind
    seats: tuple[int, ...]
    hand_index: int

    @property
    def seat(self) -> int:
        """The one seat that decides a ``PLAY`` or ``MOON``."""
        (seat,) = self.seats
        return seat


@dataclass(frozen=True, slots=True)
class Deal:
    """The next hand's cards: one list per seat, and the kitty."""

    hands: Sequence[Sequence[Card]]
    kitty: Sequence[Card]


@dataclass(frozen=True, slots=True)
class Pass:
    """A seat passes three cards."""

    seat: int
    cards: Sequence[Card]


@dataclass(frozen=True, slots=True)
class Play:
    """A seat plays a card."""

    seat: int
    card: Card


@dataclass(frozen=True, slots=True)
class Moon:
    """The moon shooter's option."""

    seat: int
    choice: MoonChoice | str


#: Everything that moves a game on: :meth:`State.apply` takes one.
Action = Deal | Pass | Play | Moon


@dataclass(slots=True)
class Trick:
    """One trick: its leader, the cards in playing order and, once complete, its winner.

    ``winner`` is ``None`` while the trick is in progress and when it was set aside.
    """

    leader: int
    cards: list[Card] = field(default_factory=list)
    winner: int | None = None

    def seat_of(self, index: int, players: int) -> int:
        """The seat that played ``cards[index]``."""
        return (self.leader + index) % players


@dataclass(slots=True)
class HandResult:
    """A finished hand, with everything its game record and outcome need."""

    index: int
    dealer: int
    pass_direction: PassDirection
    deal: list[list[Card]]
    kitty: list[Card]
    passes: list[list[Card]]
    plays: list[Card]
    tricks: list[Trick]
    points: list[int]
    scores: list[int]
    moon: int | None
    moon_choice: MoonChoice | None
    uncollected: list[Card]
    kitty_taker: int | None
    summary: HandSummary


def winning_index(cards: Sequence[Card]) -> int | None:
    """Which of a trick's cards (in playing order) wins it, or ``None`` if it is set aside.

    Identical cards cancel: the winner is the highest card of the suit led that was played
    only once. Applied to a trick in progress, it tells who is winning so far.
    """
    if not cards:
        return None
    led = cards[0] // 13
    seen = dup = 0
    for card in cards:
        if card // 13 == led:
            bit = 1 << card
            if seen & bit:
                dup |= bit
            else:
                seen |= bit
    single = seen & ~dup
    if not single:
        return None
    return cards.index(CARDS[single.bit_length() - 1])


class State:
    """The truth of one game. Mutated only through its action methods.

    A game may also be taken up at a later hand (a simulator starting from a known position):
    ``next_hand`` is then the first hand dealt and ``totals`` the totals before it.

    Args:
        rules: The game's parameters.
        totals: The game totals before the first hand dealt (default: all zero).
        next_hand: The index of the first hand dealt (default 0).

    Raises:
        ValueError: if ``totals`` is not one total per seat or ``next_hand`` is negative.
    """

    def __init__(self, rules: Rules, *, totals: Sequence[int] | None = None, next_hand: int = 0) -> None:
        self.rules = rules
        n = rules.players
        if totals is not None and len(totals) != n:
            raise ValueError(f"expected {n} totals, not {len(totals)}")
        if next_hand < 0:
            raise ValueError(f"the next hand's index must be 0 or more, not {next_hand}")
        self.players = n
        self.totals = [0] * n if totals is None else [int(t) for t in totals]
        self.results: list[HandResult] = []
        self.phase = Phase.DEALING
        self.game_over = False
        self.winners: list[int] = []
        self.hand_index = next_hand - 1
        # Per-hand state, reset by start_hand.
        self.hands: list[CardSet] = []
        self.deal: list[list[Card]] = []
        self.kitty: list[Card] = []
        self.passes: list[list[Card] | None] = []
        self.plays: list[Card] = []
        self.tricks: list[Trick] = []
        #: The completed tricks of this hand as everyone sees them (public, immutable). A new
        #: tuple each time a trick completes, so that every View built until the next one shares it.
        self.trick_views: tuple[TrickView, ...] = ()
        #: Per seat, the points of the trick cards it collected this hand, and the trick cards
        #: set aside waiting for the next winner: the public tally of ``trick_views`` (the kitty,
        #: hidden until the hand ends, is in neither).
        self.public_taken: list[int] = [0] * n
        self.public_waiting: list[Card] = []
        self._public_waiting_points = 0
        #: The summaries of the finished hands (``r.summary for r in results``), as one tuple.
        self.summaries: tuple[HandSummary, ...] = ()
        self.current: Trick = Trick(0)
        self.to_play = 0
        self.hearts_broken = False
        self.points = [0] * n
        self.pending: list[Card] = []
        self.pending_points = 0
        self.kitty_taker: int | None = None
        self.moon_shooter: int | None = None

    # ----------------------------------------------------------------- derived facts
    @property
    def dealer(self) -> int:
        """The dealer of the current hand."""
        return self.rules.dealer(self.hand_index)

    @property
    def pass_direction(self) -> PassDirection:
        """The pass direction of the current hand."""
        return PassDirection.for_hand(self.hand_index)

    @property
    def trick_index(self) -> int:
        """The index of the trick in progress (equal to the number completed)."""
        return len(self.tricks)

    def received(self, seat: int) -> list[Card]:
        """The cards ``seat`` received this hand (empty until every pass is in)."""
        if self.phase is Phase.PASSING:
            return []
        source = self.passes[self.pass_direction.source(seat, self.players)]
        return list(source) if source is not None else []

    def awaiting_pass(self) -> list[int]:
        """Seats whose pass the referee still needs, in seat order."""
        if self.phase is not Phase.PASSING:
            return []
        return [s for s, p in enumerate(self.passes) if p is None]

    # ----------------------------------------------------------------- the decision API
    def to_decide(self) -> Decision | None:
        """Who must decide, and what, before the game can move on; None once it is over."""
        phase = self.phase
        if phase is Phase.PLAYING:
            return Decision(DecisionKind.PLAY, (self.to_play,), self.hand_index)
        if phase is Phase.PASSING:
            return Decision(DecisionKind.PASS, tuple(self.awaiting_pass()), self.hand_index)
        if phase is Phase.DEALING:
            return Decision(DecisionKind.DEAL, (), self.hand_index + 1)
        if phase is Phase.MOON_CHOICE:
            assert self.moon_shooter is not None
            return Decision(DecisionKind.MOON, (self.moon_shooter,), self.hand_index)
        return None

    def apply(self, action: Action) -> None:
        """Applies one action, after the same checks as the action methods below.

        Raises:
            HeartsError: the rule the action breaks (nothing is changed then).
        """
        if isinstance(action, Play):
            self.play(action.card, action.seat)
        elif isinstance(action, Pass):
            self.pass_cards(action.seat, action.cards)
        elif isinstance(action, Deal):
            self.start_hand(action.hands, action.kitty)
        else:
            self.choose_moon(action.choice, action.seat)

    def copy(self) -> State:
        """An independent copy: acting on either leaves the other as it was.

        What never changes once made (the rules, a hand's deal and kitty, completed tricks, the
        results and views of finished hands) is shared; everything an action changes is copied.
        """
        out = State.__new__(State)
        out.__dict__.update(self.__dict__)
        out.totals = list(self.totals)
        out.results = list(self.results)
        out.winners = list(self.winners)
        out.hands = [h.copy() for h in self.hands]
        out.passes = list(self.passes)
        out.plays = list(self.plays)
        out.tricks = list(self.tricks)
        out.public_taken = list(self.public_taken)
        out.current = Trick(self.current.leader, list(self.current.cards), self.current.winner)
        out.points = list(self.points)
        out.pending = list(self.pending)
        return out

    # ----------------------------------------------------------------- dealing
    def start_hand(
        self, deal: Sequence[Sequence[Card]], kitty: Sequence[Card], *, skip_passing: bool = False
    ) -> None:
        """Starts the next hand with the given deal (per seat) and kitty.

        With ``skip_passing`` the hand starts at its first lead: ``deal`` is then the hands as
        they are after passing, and no pass is recorded (a simulator starting from a known
        position).

        Raises:
            GameAlreadyOver: if the game has ended.
            BadDeal: if the deal plus kitty is not two full decks or a hand size is wrong.
        """
        index = self.hand_index + 1
        if self.game_over:
            raise GameAlreadyOver("the game is over; no further hand may be dealt", hand=index)
        if self.phase is not Phase.DEALING:
            raise OutOfTurn(f"hand {self.hand_index} is still in progress", hand=index)
        n = self.players
        size = self.rules.hand_size
        if len(deal) != n or any(len(h) != size for h in deal) or len(kitty) != self.rules.kitty_size:
            raise BadDeal(
                f"expected {n} hands of {size} cards and a kitty of {self.rules.kitty_size}",
                hand=index,
            )
        everything = CardSet()
        try:
            for card in (*(c for h in deal for c in h), *kitty):
                everything.add(card)
        except ValueError:
            raise BadDeal("a card appears more than twice in the deal", hand=index) from None
        if len(everything) != 104:  # pragma: no cover - sizes above already force 104 cards
            raise BadDeal("the deal is not two full decks", hand=index)
        self.hand_index = index
        self.deal = [list(h) for h in deal]
        self.kitty = list(kitty)
        self.hands = [CardSet(h) for h in deal]
        self.passes = [None] * n
        self.plays = []
        self.tricks = []
        self.trick_views = ()
        self.public_taken = [0] * n
        self.public_waiting = []
        self._public_waiting_points = 0
        self.hearts_broken = False
        self.points = [0] * n
        self.pending = list(kitty)
        self.pending_points = sum(c.points for c in kitty)
        self.kitty_taker = None
        self.moon_shooter = None
        self.current = Trick((self.dealer + 1) % n)
        self.to_play = self.current.leader
        self.phase = Phase.PLAYING if skip_passing else Phase.PASSING

    # ----------------------------------------------------------------- passing
    def check_pass(self, seat: int, cards: Sequence[Card]) -> None:
        """Checks a pass without applying it.

        Raises:
            OutOfTurn: if it is not the passing phase or ``seat`` already passed.
            BadPassCount: if ``cards`` is not three cards.
            PassNotInHand: if a card (or a copy of it) is not held.
        """
        if self.phase is not Phase.PASSING or not 0 <= seat < self.players:
            raise OutOfTurn("no pass is expected now", hand=self.hand_index, seat=seat)
        if self.passes[seat] is not None:
            raise OutOfTurn("this seat has already passed", hand=self.hand_index, seat=seat)
        if len(cards) != PASS_COUNT:
            raise BadPassCount(
                f"pass exactly {PASS_COUNT} cards, not {len(cards)}", hand=self.hand_index, seat=seat
            )
        hand = self.hands[seat].copy()
        for card in cards:
            if card not in hand:
                raise PassNotInHand(
                    f"{card} is not in the hand (or not that many copies)",
                    hand=self.hand_index,
                    seat=seat,
                )
            hand.remove(card)

    def pass_cards(self, seat: int, cards: Sequence[Card]) -> None:
        """Records ``seat``'s three passed cards; the last pass in delivers them all.

        Raises:
            OutOfTurn, BadPassCount, PassNotInHand: see :meth:`check_pass`.
        """
        self.check_pass(seat, cards)
        self.passes[seat] = list(cards)
        if all(p is not None for p in self.passes):
            self._deliver_passes()

    def _deliver_passes(self) -> None:
        n = self.players
        direction = self.pass_direction
        for seat, cards in enumerate(self.passes):
            assert cards is not None
            for card in cards:
                self.hands[seat].remove(card)
        for seat, cards in enumerate(self.passes):
            assert cards is not None
            target = self.hands[direction.target(seat, n)]
            for card in cards:
                target.add(card)
        self.phase = Phase.PLAYING

    # ----------------------------------------------------------------- playing
    def legal_mask(self) -> int:
        """The legal cards of the seat to play, as a 52-bit mask."""
        once = self.hands[self.to_play].once
        cards = self.current.cards
        if cards:
            follow = once & SUIT_MASKS[cards[0] // 13]
            return follow or once
        if not self.tricks:
            return (once & _NON_POINT) or once
        if not self.hearts_broken:
            return (once & _NON_HEART) or once
        return once

    def legal_plays(self) -> tuple[Card, ...]:
        """The distinct cards the seat to play may play, in card order (never empty)."""
        if self.phase is not Phase.PLAYING:
            return ()
        mask = self.legal_mask()
        cards = self.current.cards
        if cards:  # following: the legal cards usually sit in one suit, one table lookup
            suit = cards[0] // 13
            pattern = (mask >> (13 * suit)) & 0x1FFF
            if pattern << (13 * suit) == mask:
                return suit_cards(suit, pattern)
        return cards_of_mask(mask)

    def check_play(self, card: Card, seat: int | None = None) -> None:
        """Checks that the seat to play (or ``seat``, if given) may play ``card`` now.

        Raises:
            OutOfTurn: if no card is expected or ``seat`` is not the seat to play.
            NotInHand, FirstLeadRestricted, HeartsNotBroken, MustFollowSuit: by layer.
        """
        player = self.to_play
        if self.phase is not Phase.PLAYING or (seat is not None and seat != player):
            raise OutOfTurn(
                f"seat {player} is to play" if self.phase is Phase.PLAYING else "no card is expected now",
                hand=self.hand_index,
                play=len(self.plays),
                seat=seat if seat is not None else player,
            )
        bit = 1 << card
        once = self.hands[player].once
        where = {"hand": self.hand_index, "play": len(self.plays), "seat": player}
        if not once & bit:
            raise NotInHand(f"{card} is not in the hand", **where)
        cards = self.current.cards
        if cards:
            suit_mask = SUIT_MASKS[cards[0] // 13]
            if not bit & suit_mask and once & suit_mask:
                raise MustFollowSuit(f"{card} does not follow {cards[0].suit.name.lower()}", **where)
        elif not self.tricks:
            if bit & POINT_MASK and once & _NON_POINT:
                raise FirstLeadRestricted("the first lead may not be a heart or the Black Maria", **where)
        elif bit & HEARTS_MASK and not self.hearts_broken and once & _NON_HEART:
            raise HeartsNotBroken("hearts may not be led until a heart or QS is played", **where)

    def play(self, card: Card, seat: int | None = None) -> None:
        """Plays ``card`` for the seat to play, completing the trick and the hand as needed.

        Raises:
            OutOfTurn, NotInHand, FirstLeadRestricted, HeartsNotBroken, MustFollowSuit: see
            :meth:`check_play`; the state is unchanged.
        """
        player = self.to_play
        bit = 1 << card
        if (
            self.phase is not Phase.PLAYING
            or (seat is not None and seat != player)
            or not bit & self.legal_mask()
        ):
            # The hot path only tests the legal mask; the layered check names the rule broken.
            self.check_play(card, seat)
            raise AssertionError(f"legal_mask and check_play disagree on {card}")  # pragma: no cover
        hand = self.hands[player]
        if hand.twice & bit:
            hand.twice ^= bit
        else:
            hand.once ^= bit
        self.plays.append(card)
        trick = self.current
        trick.cards.append(card)
        if len(trick.cards) < self.players:
            self.to_play = (player + 1) % self.players
            return
        self._finish_trick(trick)

    def _finish_trick(self, trick: Trick) -> None:
        trick_points = 0
        for card in trick.cards:
            if (1 << card) & POINT_MASK:
                trick_points += 13 if card == BLACK_MARIA else 1
        self.pending.extend(trick.cards)
        self.pending_points += trick_points
        if trick_points:
            self.hearts_broken = True
        index = winning_index(trick.cards)
        if index is not None:
            winner = trick.seat_of(index, self.players)
            trick.winner = winner
            if self.kitty_taker is None:
                self.kitty_taker = winner
            self.points[winner] += self.pending_points
            self.pending = []
            self.pending_points = 0
            self.public_taken[winner] += self._public_waiting_points + trick_points
            self.public_waiting = []
            self._public_waiting_points = 0
            leader = winner
        else:
            self.public_waiting = [*self.public_waiting, *trick.cards]
            self._public_waiting_points += trick_points
            leader = trick.leader
        self.tricks.append(trick)
        view = TrickView(trick.leader, tuple(trick.cards), trick.winner, True)
        self.trick_views = (*self.trick_views, view)
        if len(self.tricks) == self.rules.hand_size:
            self._finish_play()
        else:
            self.current = Trick(leader)
            self.to_play = leader

    def _finish_play(self) -> None:
        shooter = moon_shooter(self.points)
        if shooter is not None:
            self.moon_shooter = shooter
            self.to_play = shooter
            self.phase = Phase.MOON_CHOICE
        else:
            self._finish_hand(None)

    # ----------------------------------------------------------------- moon
    def choose_moon(self, choice: MoonChoice | str, seat: int | None = None) -> None:
        """Applies the moon shooter's choice and finishes the hand.

        Raises:
            OutOfTurn: if no moon choice is expected or ``seat`` is not the shooter.
            BadMoonChoice: if ``choice`` is not a :class:`MoonChoice` value.
        """
        if self.phase is not Phase.MOON_CHOICE or (seat is not None and seat != self.moon_shooter):
            raise OutOfTurn("no moon choice is expected from this seat", hand=self.hand_index)
        try:
            parsed = MoonChoice(choice)
        except ValueError:
            raise BadMoonChoice(
                f"moon choice must be one of {[c.value for c in MoonChoice]}, not {choice!r}",
                hand=self.hand_index,
            ) from None
        self._finish_hand(parsed)

    # ----------------------------------------------------------------- scoring
    def _finish_hand(self, choice: MoonChoice | None) -> None:
        n = self.players
        shooter = self.moon_shooter
        scores = hand_scores(self.points, choice)
        for seat in range(n):
            self.totals[seat] += scores[seat]
        passes = [list(p) for p in self.passes if p is not None]
        uncollected = sorted(self.pending)
        summary = HandSummary(
            index=self.hand_index,
            points=tuple(self.points),
            scores=tuple(scores),
            moon=shooter,
            kitty=tuple(self.kitty),
            kitty_taker=self.kitty_taker,
            uncollected=tuple(uncollected),
        )
        self.summaries = (*self.summaries, summary)
        self.results.append(
            HandResult(
                index=self.hand_index,
                dealer=self.dealer,
                pass_direction=self.pass_direction,
                deal=self.deal,
                kitty=self.kitty,
                passes=passes,
                plays=self.plays,
                tricks=self.tricks,
                points=list(self.points),
                scores=scores,
                moon=shooter,
                moon_choice=choice,
                uncollected=uncollected,
                kitty_taker=self.kitty_taker,
                summary=summary,
            )
        )
        self.pending = []
        # hand_index + 1 hands of the game are over (a game taken up later played fewer here).
        if max(self.totals) >= self.rules.target_score or self.hand_index + 1 >= self.rules.max_hands:
            low = min(self.totals)
            self.winners = [s for s, t in enumerate(self.totals) if t == low]
            self.game_over = True
            self.phase = Phase.GAME_OVER
        else:
            self.phase = Phase.DEALING
