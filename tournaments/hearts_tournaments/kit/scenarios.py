"""The rules level's hands, dealt on purpose so that a rare path of the rules is certain.

Random play reaches a set-aside last trick or a moon shot once in many games; a bot that breaks
there breaks in a tournament, not in its author's tests. Each :class:`Scenario` deals its hands
so that the rare path happens **whatever the bot under test decides**: the other seats are
played by the referee's default rule (pass the three highest cards, play the lowest legal one),
so only the bot's own choices could steer the hand away, and each deal leaves them no way to.
Where the bot's pass could (a moon needs the bot to keep its aces), the hand starts after
passing: the referee passes for every seat (``ScriptedHand.passes``), and the bot plays the
whole hand from there. ``tests/test_kit_scenarios.py`` rehearses every scenario in-process
(:func:`rehearse`) against bots that choose at random and checks the path is taken each time;
the kit checks it again from each game's record.

Seats: hand 0 is dealt by seat 0, seat 1 leads its first trick, and cards pass to the left
(seat ``s`` to ``s + 1``).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from hearts_core.cards import CARDS, Card, Suit
from hearts_core.deal import deal_hand
from hearts_core.driver import play_through
from hearts_core.fallback import default_moon, default_pass, default_play
from hearts_core.rules import MoonChoice, PassDirection, Rules
from hearts_core.state import Deal, Decision, DecisionKind, HandResult, Moon, Pass, Play, State
from hearts_core.view import View, build_view
from hearts_server.table.script import ScriptedHand

#: Every card of the two decks.
DECK: tuple[Card, ...] = tuple(c for c in CARDS for _ in range(2))


def cards(codes: str) -> list[Card]:
    """Cards from space-separated codes (``"2C 2C QS"``)."""
    return [Card.parse(code) for code in codes.split()]


def _is(suit: Suit) -> Callable[[Card], bool]:
    return lambda card: card.suit is suit


def _not(test: Callable[[Card], bool]) -> Callable[[Card], bool]:
    return lambda card: not test(card)


def _anything(card: Card) -> bool:
    return True


def _below(rank: int) -> Callable[[Card], bool]:
    return lambda card: card.rank < rank


def _all(*tests: Callable[[Card], bool]) -> Callable[[Card], bool]:
    return lambda card: all(test(card) for test in tests)


def fill(
    rules: Rules,
    fixed: Mapping[int, Sequence[Card]],
    kitty: Sequence[Card],
    allowed: Mapping[int, Callable[[Card], bool]],
    seed: str,
) -> list[list[Card]]:
    """Deals the rest of the two decks so that each seat holds ``rules.hand_size`` cards.

    Args:
        rules: The table.
        fixed: Cards a seat must hold.
        kitty: The whole kitty.
        allowed: What else a seat may be given (any card where not named).
        seed: Orders the rest, so that the same scenario is always dealt the same.

    Raises:
        ValueError: the cards cannot be placed so (a scenario's own mistake).
    """
    size = rules.hand_size
    rest = Counter(DECK)
    rest.subtract(Counter([*kitty, *(c for held in fixed.values() for c in held)]))
    if any(count < 0 for count in rest.values()) or len(kitty) != rules.kitty_size:
        raise ValueError("a scenario names a card more than twice, or a kitty of the wrong size")
    hands = [list(fixed.get(seat, ())) for seat in range(rules.players)]
    pool = list(rest.elements())
    random.Random(seed).shuffle(pool)

    def takers(card: Card) -> list[int]:
        return [s for s in range(rules.players) if allowed.get(s, _anything)(card)]

    # The most constrained cards first, each to the seat with the most room left.
    pool.sort(key=lambda card: len(takers(card)))
    for card in pool:
        open_seats = [s for s in takers(card) if len(hands[s]) < size]
        if not open_seats:
            raise ValueError(f"no seat may take {card}")
        seat = max(open_seats, key=lambda s: (size - len(hands[s]), -s))
        hands[seat].append(card)
    if any(len(h) != size for h in hands):
        raise ValueError("the scenario's hands do not add up")
    return [sorted(h) for h in hands]


def passed_for(rules: Rules, after: Sequence[Sequence[Card]]) -> ScriptedHand:
    """The hand that holds ``after`` once the referee has passed for every seat.

    Each seat is made to have received the three highest different cards of ``after`` (so its deal is
    ``after`` without them, plus the three it passes on), and the kitty is what is left.
    """
    n = rules.players
    direction = PassDirection.for_hand(0)
    # Three different cards: only the both-copies scenario passes a bot both copies of one.
    received = [sorted(set(h), reverse=True)[:3] for h in after]
    passes = [received[direction.target(s, n)] for s in range(n)]
    deal = []
    for seat in range(n):
        held = Counter(after[seat])
        held.subtract(Counter(received[seat]))
        held.update(passes[seat])
        deal.append(tuple(sorted(held.elements())))
    kitty = Counter(DECK)
    kitty.subtract(Counter(c for h in after for c in h))
    return ScriptedHand(tuple(deal), tuple(sorted(kitty.elements())), tuple(tuple(p) for p in passes))


# --------------------------------------------------------------------------- what happened


@dataclass(frozen=True, slots=True)
class Scenario:
    """A game dealt on purpose for one check of the rules level.

    Attributes:
        check: The check it decides (``rules.set_aside``).
        what: What the deal forces, as the check's verdict says it.
        players: The table size.
        seat: The bot's seat.
        hands: The dealt hands, from hand 0.
        then: Hands dealt from the seed after them (so the bot decides after the rare path's
            last event: a hand's end, a set-aside last trick).
        reached: Says, from the game's hands as played, what the rare path was (for the
            verdict), or None when it did not happen.
    """

    check: str
    what: str
    players: int
    seat: int
    hands: tuple[ScriptedHand, ...]
    then: int
    reached: Callable[[Sequence[HandResult]], str | None]

    @property
    def rules(self) -> Rules:
        """The table's rules."""
        return Rules(players=self.players)


def _trick(results: Sequence[HandResult], hand: int, index: int) -> tuple[int, list[Card], int | None] | None:
    if hand >= len(results) or index >= len(results[hand].tricks):
        return None
    trick = results[hand].tricks[index]
    return trick.leader, list(trick.cards), trick.winner


def _cancel_reached(results: Sequence[HandResult]) -> str | None:
    first = _trick(results, 0, 0)
    if first is None or first[0] != 1 or first[1][:2] != cards("2C 2C"):
        return None
    won = f"seat {first[2]} won it" if first[2] is not None else "it was set aside"
    return f"seats 1 and 2 played the two 2C to trick 1 before the bot's turn: they cancelled, and {won}"


def _set_aside_reached(results: Sequence[HandResult]) -> str | None:
    first, second = _trick(results, 0, 0), _trick(results, 0, 1)
    if first is None or second is None or first[2] is not None or second[0] != first[0]:
        return None
    return f"trick 1 (2C, 2C and discards) was set aside and its leader, seat {first[0]}, led trick 2 again"


def _set_aside_taken_reached(results: Sequence[HandResult]) -> str | None:
    if not results or _set_aside_reached(results) is None:
        return None
    hand = results[0]
    winner = hand.tricks[1].winner
    points = sum(c.points for c in hand.tricks[0].cards)
    if winner is None or hand.kitty_taker != winner or points == 0:
        return None
    return (
        f"seat {winner} won trick 2 and with it the set-aside trick's {points} point(s) and the kitty "
        f"({' '.join(map(str, hand.kitty))})"
    )


def _last_trick_reached(results: Sequence[HandResult]) -> str | None:
    if len(results) < 2 or results[0].tricks[-1].winner is not None:
        return None
    hand = results[0]
    return (
        f"the last trick ({' '.join(map(str, hand.tricks[-1].cards))}) was set aside: its "
        f"{sum(c.points for c in hand.uncollected)} point(s) counted for nobody, and the next hand was "
        "dealt"
    )


def _first_lead_reached(results: Sequence[HandResult]) -> str | None:
    if not results:
        return None
    hand = results[0]
    led = hand.tricks[0].cards[0]
    held = Counter(hand.deal[1])
    held.subtract(Counter(hand.passes[1]))
    held.update(hand.passes[0])
    if not all(c.points for c in held.elements()):
        return None
    return f"the bot led the first trick holding only hearts and Black Marias, and led {led}"


def _both_copies_reached(results: Sequence[HandResult]) -> str | None:
    if not results:
        return None
    got = results[0].passes[2]
    twice = [c for c, k in Counter(got).items() if k == 2]
    if not twice:
        return None
    return f"the bot received both copies of {twice[0]} ({' '.join(map(str, got))}) and played the hand on"


def _moon_reached(results: Sequence[HandResult]) -> str | None:
    if not results or results[0].moon != 1:
        return None
    choice = results[0].moon_choice
    return f"the bot took every heart and both Black Marias and chose {choice.value if choice else '?'}"


def _directions_reached(results: Sequence[HandResult]) -> str | None:
    directions = {r.pass_direction for r in results}
    if directions != set(PassDirection):
        return None
    return f"{len(results)} hands, passing left and right in turn"


def _size_reached(players: int) -> Callable[[Sequence[HandResult]], str | None]:
    def reached(results: Sequence[HandResult]) -> str | None:
        if not results:
            return None
        rules = Rules(players=players)
        return f"{players} seats: hands of {rules.hand_size} cards, a kitty of {rules.kitty_size}"

    return reached


# --------------------------------------------------------------------------- the deals


def cancel() -> Scenario:
    """Trick 1: seat 1 leads 2C (the lowest card there is) and seat 2 follows with the other 2C
    (the lowest club there is), before the bot in seat 3 plays: it holds clubs and sees the pair
    cancelled in the trick it follows."""
    rules = Rules(players=6)
    deal = fill(
        rules,
        {1: cards("2C"), 2: cards("2C"), 3: cards("3C 4C 5C 6C 7C")},
        cards("9D 9S"),
        {},
        "kit/cancel",
    )
    return Scenario(
        "rules.cancel",
        "identical cards cancelled before its turn",
        6,
        3,
        (ScriptedHand(tuple(map(tuple, deal)), tuple(cards("9D 9S"))),),
        0,
        _cancel_reached,
    )


def _set_aside_deal() -> ScriptedHand:
    """Seats 1 and 2 hold every club: seat 1 leads 2C, seat 2 follows with the other 2C and
    everyone else (the bot in seat 3 too) is void in clubs and discards, seats 5 and 0 a 2H:
    the trick, with its points, is set aside. Seat 1 leads again, 3C; seat 2 follows with 4C
    and wins it, the set-aside cards and the kitty. Every pass stays clear of it: seat 1 passes
    aces and a king, seat 2 three aces of other suits, seat 0 no club, and the bot has no club
    to pass."""
    rules = Rules(players=6)
    kitty = cards("9S 9S")
    clubs = [c for c in DECK if c.suit is Suit.CLUBS]
    one = cards("2C 3C 3C") + [c for c in clubs if c.rank >= 9][:11] + cards("KD QD JD")
    left = Counter(clubs)
    left.subtract(Counter(one))
    two = sorted(left.elements()) + cards("AS AH AD KS KH")
    deal = fill(
        rules,
        {1: one, 2: two, 5: cards("2H"), 0: cards("2H")},
        kitty,
        {
            3: _not(_is(Suit.CLUBS)),
            4: _not(_is(Suit.CLUBS)),
            # Their lowest card is their 2H: no club, no 2D.
            5: _all(_not(_is(Suit.CLUBS)), lambda c: str(c) != "2D"),
            0: _all(_not(_is(Suit.CLUBS)), lambda c: str(c) != "2D", _below(12)),
        },
        "kit/set-aside",
    )
    return ScriptedHand(tuple(map(tuple, deal)), tuple(kitty))


def set_aside() -> Scenario:
    """A set-aside trick (every card of the suit led cancelled) and its leader leading again."""
    return Scenario(
        "rules.set_aside",
        "a trick set aside (every card of the suit led cancelled) and its leader leading again",
        6,
        3,
        (_set_aside_deal(),),
        0,
        _set_aside_reached,
    )


def set_aside_taken() -> Scenario:
    """The same deal: the set-aside points and the kitty go to the later winner of trick 2."""
    return Scenario(
        "rules.set_aside_taken",
        "set-aside points and the kitty going to a later winner",
        6,
        3,
        (_set_aside_deal(),),
        0,
        _set_aside_taken_reached,
    )


def set_aside_last_trick() -> Scenario:
    """Seat 1 holds J, Q, K and A of clubs and diamonds twice and one AS: it leads its lowest card
    and wins every trick, as no other seat holds one of its cards or beats it in its suit. Its
    last card is the AS, and seat 2 (all spades, the other AS its highest) keeps the other AS to
    the end; the bot (seat 3) holds no spade, seats 4, 5 and 0 an AH or two KH above
    everything else they hold (hearts are never led): the last trick is set aside and its
    points count for nobody. The hand starts after passing (else the bot could pass itself a
    spade); a second hand follows."""
    rules = Rules(players=6)
    honours = [Card.parse(f"{r}{s}") for s in "CD" for r in "JQKA" for _ in range(2)]
    spades = cards("AS KS KS QS QS JS JS TS TS 9S 9S 8S 8S 7S 7S 6S 6S")
    after = fill(
        rules,
        {1: [*honours, Card.parse("AS")], 2: spades, 4: cards("AH"), 5: cards("AH"), 0: cards("KH KH")},
        cards("5S 5S"),
        {
            1: lambda _: False,
            2: lambda _: False,
            3: _not(_is(Suit.SPADES)),
            4: _below(12),
            5: _below(12),
            0: _below(12),
        },
        "kit/last-trick",
    )
    return Scenario(
        "rules.set_aside_last_trick",
        "the last trick of a hand set aside, its points counting for nobody",
        6,
        3,
        (passed_for(rules, after),),
        1,
        _last_trick_reached,
    )


def first_lead_points() -> Scenario:
    """The bot leads the first trick (seat 1) holding only hearts and Black Marias: dealt 17 of
    them, it passes three of them and receives seat 0's three highest, AH, KH and QH (seat 0
    holds nothing else above a jack)."""
    rules = Rules(players=6)
    points = [c for c in DECK if c.points]
    for card in cards("AH KH QH"):
        points.remove(card)
    deal = fill(
        rules,
        {1: points[:17], 0: cards("AH KH QH")},
        cards("2D 2S"),
        {1: lambda _: False, 0: _below(12)},
        "kit/first-lead",
    )
    return Scenario(
        "rules.first_lead_points",
        "the first lead with nothing but hearts and Black Marias in hand",
        6,
        1,
        (ScriptedHand(tuple(map(tuple, deal)), tuple(cards("2D 2S"))),),
        0,
        _first_lead_reached,
    )


def both_copies() -> Scenario:
    """Seat 2's three highest cards are both AS and an AH: the bot in seat 3 receives both copies
    of a card. Its own highest are two AD and two AC, for a bot that passes both copies of one."""
    rules = Rules(players=6)
    deal = fill(
        rules,
        {2: cards("AS AS AH"), 3: cards("AD AD AC AC")},
        cards("2C 2D"),
        {2: _below(14), 3: _below(14)},
        "kit/both-copies",
    )
    return Scenario(
        "rules.both_copies",
        "both copies of a card passed",
        6,
        3,
        (ScriptedHand(tuple(map(tuple, deal)), tuple(cards("2C 2D"))),),
        0,
        _both_copies_reached,
    )


def moon() -> Scenario:
    """The bot (seat 1, the first leader) holds A and K of every suit twice and a QH; nobody else
    holds an ace or a king, the other QH is in the kitty: whatever it leads wins, so it takes
    every trick, the kitty, every heart and both Black Marias, and is asked the moon choice.
    The hand starts after passing (else it could pass its aces away)."""
    rules = Rules(players=6)
    top = [Card.parse(f"{r}{s}") for s in "CDSH" for r in "AK" for _ in range(2)]
    after = fill(
        rules,
        {1: [*top, Card.parse("QH")]},
        cards("QH 2C"),
        {1: lambda _: False},
        "kit/moon",
    )
    return Scenario(
        "rules.moon",
        "a hand the bot shoots the moon in, and its moon choice",
        6,
        1,
        (passed_for(rules, after),),
        0,
        _moon_reached,
    )


def pass_directions() -> Scenario:
    """Four hands dealt from the seed: passing left, right, left, right."""
    return Scenario(
        "rules.pass_directions",
        "both pass directions over several hands",
        7,
        2,
        (),
        4,
        _directions_reached,
    )


def table_size(players: int) -> Scenario:
    """One hand dealt from the seed at ``players`` seats (its hand size and kitty size)."""
    return Scenario(
        f"rules.table_size.{players}",
        f"a hand at {players} seats",
        players,
        players // 2,
        (),
        1,
        _size_reached(players),
    )


def scenarios() -> tuple[Scenario, ...]:
    """Every scenario of the rules level, in the order it plays them."""
    return (
        cancel(),
        set_aside(),
        set_aside_taken(),
        set_aside_last_trick(),
        first_lead_points(),
        both_copies(),
        moon(),
        pass_directions(),
        *(table_size(n) for n in range(6, 12)),
    )


# --------------------------------------------------------------------------- rehearsal


class Chooser:
    """A bot for :func:`rehearse`: any choices at all (at random, from its seed)."""

    def __init__(self, seed: str) -> None:
        self.random = random.Random(seed)

    def choose_pass(self, view: View) -> list[Card]:
        return self.random.sample(list(view.hand), 3)

    def choose_play(self, view: View) -> Card:
        return self.random.choice(list(view.legal))

    def choose_moon(self, view: View) -> MoonChoice:
        return self.random.choice(list(MoonChoice))


def rehearse(scenario: Scenario, bot: Chooser, seed: str = "rehearsal") -> list[HandResult]:
    """Plays the scenario's hands in-process, the bot in its seat and the referee's default rule
    in every other, as the kit's referee plays them; returns the hands as played."""
    rules = Rules(players=scenario.players, max_hands=len(scenario.hands) + scenario.then)
    state = State(rules)
    seat = scenario.seat

    def answer(decision: Decision) -> Deal | Iterable[Pass] | Play | Moon:
        kind, index = decision.kind, decision.hand_index
        scripted = scenario.hands[index] if index < len(scenario.hands) else None
        if kind is DecisionKind.DEAL:
            if scripted is not None:
                return Deal(scripted.deal, scripted.kitty)
            return Deal(*deal_hand(rules, seed, index))
        if kind is DecisionKind.PASS:
            if scripted is not None and scripted.passes is not None:
                return [Pass(s, list(scripted.passes[s])) for s in decision.seats]
            return [
                Pass(s, bot.choose_pass(build_view(state, s)) if s == seat else default_pass(state.hands[s]))
                for s in decision.seats
            ]
        if kind is DecisionKind.PLAY:
            player = decision.seat
            if player == seat:
                return Play(player, bot.choose_play(build_view(state, player)))
            return Play(player, default_play(state.legal_plays()))
        chooser = decision.seat
        return Moon(
            chooser, bot.choose_moon(build_view(state, chooser)) if chooser == seat else default_moon()
        )

    play_through(state, answer)
    return state.results
