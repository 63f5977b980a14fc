"""The pure-Python simulator backend: :class:`Game` and :class:`VecGame`, a layer over ``hearts_core``.

This is the fallback the SDK uses when the native module ``hearts_sim`` (built from
``clients/sim/``) is not installed. It has exactly the native module's API and gives the same
results for the same inputs and seeds, and it holds no rule of its own: a game is a
:class:`hearts_core.state.State`, the referee's engine, which deals, checks every action (its
errors become :class:`IllegalAction` with the same conformance code), plays the tricks and
scores the hands. What this module adds is the simulator's interface to it: the flat action
space (a card, one passed card at a time, or a moon choice), the automatic next deal (the
referee's :func:`hearts_core.deal.deal_hand` or the simulator's own :func:`fast_deal`), the
random policy's generator :class:`Xoshiro` as ``docs/SIMULATOR.md`` specifies it, the
observation tensor and clones. The heuristic policy is the SDK's heuristic bot itself
(:class:`hearts_client.bots.heuristic.HeuristicBot`), asked with the View of the seat to act.
"""

from __future__ import annotations

import functools
import operator
from collections import Counter
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final

from hearts_client.bot import moon_choice
from hearts_core.cards import CARDS, Card, CardSet
from hearts_core.deal import deal_hand
from hearts_core.errors import BadDeal, HeartsError
from hearts_core.replay import replay as _replay
from hearts_core.rules import MoonChoice, Rules
from hearts_core.state import PASS_COUNT, Phase, State, Trick
from hearts_core.view import build_view

if TYPE_CHECKING:
    from hearts_client.bots.heuristic import HeuristicBot

NUM_CARDS: Final = 52
NUM_ACTIONS: Final = 54
MOON_SELF_MINUS_26: Final = 52
MOON_OTHERS_PLUS_26: Final = 53
PASS: Final = 0
PLAY: Final = 1
MOON: Final = 2
OVER: Final = 3
PHASE_NAMES: Final = ("pass", "play", "moon", "over")

_M64: Final = (1 << 64) - 1
_GOLDEN: Final = 0x9E3779B97F4A7C15
#: The simulator's phase of each of the engine's (a game is dealt at once, never seen DEALING).
_PHASES: Final = {Phase.PASSING: PASS, Phase.PLAYING: PLAY, Phase.MOON_CHOICE: MOON, Phase.GAME_OVER: OVER}
_MOON_CHOICES: Final = {
    MOON_SELF_MINUS_26: MoonChoice.SELF_MINUS_26,
    MOON_OTHERS_PLUS_26: MoonChoice.OTHERS_PLUS_26,
}


def obs_size(players: int) -> int:
    """The length of one observation (``docs/SIMULATOR.md``, "Observation"): ``320 + 60 * players``."""
    return 320 + 60 * players


OBS_SIZE = obs_size


class IllegalAction(ValueError):
    """An action the rules forbid here; the game is unchanged.

    Attributes:
        code: The conformance error code (``hearts_core.errors``), e.g. ``"MUST_FOLLOW_SUIT"``.
        hand: The hand index the action was tried in (None for a bad deal).
        play: The number of cards played this hand before it, for a card play (else None).
        seat: The seat that acted (None when no seat was to act, e.g. once the game is over).
    """

    def __init__(
        self,
        code: str,
        message: str,
        hand: int | None = None,
        play: int | None = None,
        seat: int | None = None,
    ) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.hand = hand
        self.play = play
        self.seat = seat


def _illegal(exc: HeartsError) -> IllegalAction:
    """The engine's error as the simulator raises it: the same code, message and place."""
    return IllegalAction(exc.code, exc.message, exc.hand, exc.play, exc.seat)


# ------------------------------------------------------------------------------------- RNG
def fnv1a(text: str) -> int:
    """FNV-1a (64 bits) of ``text``'s UTF-8 bytes: the seed hash of :func:`fast_deal` and VecGame."""
    h = 0xCBF29CE484222325
    for b in text.encode():
        h = ((h ^ b) * 0x100000001B3) & _M64
    return h


def fast_deal(players: int, seed_hash: int, hand_index: int) -> tuple[list[list[int]], list[int]]:
    """The simulator's own deal (native ``deal="fast"``): a Fisher-Yates shuffle of the two decks.

    The generator is ``Xoshiro(seed_hash ^ (hand_index + 1) * 0x9E3779B97F4A7C15)``; from the end,
    each 64-bit output gives two 32-bit draws (high half first), ``j = (half * (i + 1)) >> 32``.
    """
    rng = Xoshiro(seed_hash ^ (((hand_index + 1) * _GOLDEN) & _M64))
    deck = [i // 2 for i in range(104)]
    i = 103
    while i > 0:
        x = rng.next()
        for half in (x >> 32, x & 0xFFFFFFFF):
            if i == 0:
                break
            j = (half * (i + 1)) >> 32
            deck[i], deck[j] = deck[j], deck[i]
            i -= 1
    size = 104 // players
    hands = [sorted(deck[seat * size : (seat + 1) * size]) for seat in range(players)]
    return hands, sorted(deck[players * size :])


class Xoshiro:
    """xoshiro256++ seeded by splitmix64 (``rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64``).

    Args:
        seed: Any int; its low 64 bits (two's complement) seed splitmix64, whose first four
            outputs are the state.
    """

    __slots__ = ("s0", "s1", "s2", "s3")

    def __init__(self, seed: int = 0) -> None:
        self.seed(seed)

    def seed(self, seed: int) -> None:
        """Re-seeds in place."""
        x = seed & _M64
        out = []
        for _ in range(4):
            x = (x + 0x9E3779B97F4A7C15) & _M64
            z = x
            z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
            z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
            out.append(z ^ (z >> 31))
        self.s0, self.s1, self.s2, self.s3 = out

    def next(self) -> int:
        """The next 64-bit output."""
        s0, s1, s2, s3 = self.s0, self.s1, self.s2, self.s3
        t = (s0 + s3) & _M64
        result = ((((t << 23) | (t >> 41)) & _M64) + s0) & _M64
        t = (s1 << 17) & _M64
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= t
        s3 = ((s3 << 45) | (s3 >> 19)) & _M64
        self.s0, self.s1, self.s2, self.s3 = s0, s1, s2, s3
        return result

    def choose(self, n: int) -> int:
        """A number in ``0..n`` (n > 0): ``((next() >> 32) * n) >> 32``."""
        return ((self.next() >> 32) * n) >> 32

    def pick_bit(self, mask: int) -> int:
        """A uniformly chosen set bit of a non-empty mask: the ``choose(popcount)``-th lowest."""
        k = self.choose(mask.bit_count())
        for _ in range(k):
            mask &= mask - 1
        return (mask & -mask).bit_length() - 1

    def copy(self) -> Xoshiro:
        """An independent generator in the same state."""
        out = Xoshiro.__new__(Xoshiro)
        out.s0, out.s1, out.s2, out.s3 = self.s0, self.s1, self.s2, self.s3
        return out


def _bits(mask: int) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def _held(cards: CardSet) -> list[int]:
    """The cards as sorted action numbers, a card held twice twice (without making Card objects)."""
    if not cards.twice:
        return _bits(cards.once)
    out = []
    for card in _bits(cards.once):
        out.append(card)
        if cards.twice >> card & 1:
            out.append(card)
    return out


def _cards(values: Sequence[int]) -> list[Card]:
    """Action numbers as cards, or ``BAD_DEAL`` for one that is not a card."""
    out = []
    for value in values:
        if not 0 <= value < NUM_CARDS:
            raise IllegalAction("BAD_DEAL", f"card {value!r} is not a card")
        out.append(CARDS[value])
    return out


def _cards_of(hands: Sequence[Sequence[int]]) -> list[list[Card]]:
    return [_cards(hand) for hand in hands]


def _trick(trick: Trick) -> tuple[int, list[int], int]:
    return trick.leader, [int(c) for c in trick.cards], -1 if trick.winner is None else trick.winner


@functools.cache
def _heuristic() -> HeuristicBot:
    """The SDK's heuristic bot: the simulator's heuristic policy (its choices use no randomness)."""
    # Imported at first use: hearts_client.bots imports the search bots, which import this module.
    from hearts_client.bots.heuristic import HeuristicBot

    return HeuristicBot(0)


Policy = str | Callable[["Game"], int]


class Game:
    """One game of Cancellation Hearts, dealt from ``seed`` (see ``docs/SIMULATOR.md``).

    Args:
        players: 6 to 11.
        seed: Hand ``k`` is dealt as ``hearts_core.deal.deal_hand(rules, str(seed), k)``
            (``deal="referee"``) or ``fast_deal(players, fnv1a(str(seed)), k)`` (``deal="fast"``).
            The play RNG (for ``play_out("random")``) starts as ``Xoshiro(0)`` whatever the seed,
            as the native module's; ``play_out(seed=...)`` re-seeds it.
        target_score, max_hands, first_dealer: The rules (``hearts_core.rules.Rules``).
        deal: ``"referee"`` (default) or ``"fast"``.

    Raises:
        ValueError: on rules ``hearts_core.rules.Rules`` refuses (``BadPlayerCount`` is one).
    """

    __slots__ = ("_fast", "_history", "_last_trick", "_passed", "_received", "_rng", "_seed", "_state")

    def __init__(
        self,
        players: int,
        seed: str | int = 0,
        *,
        target_score: int = 150,
        max_hands: int = 200,
        first_dealer: int = 0,
        deal: str = "referee",
    ) -> None:
        if deal not in ("referee", "fast"):
            raise ValueError(f"deal must be 'referee' or 'fast', not {deal!r}")
        self._take(State(Rules(players, target_score, max_hands, first_dealer)), seed, deal == "fast", [])
        self._deal_next()

    def _take(self, state: State, seed: object, fast: bool, history: list[list[int]]) -> None:
        # The engine's state, and what the simulator keeps beside it.
        self._state = state
        self._seed = str(seed)
        self._fast = fast
        #: Scores of the hands before this game took up (``from_hands``' history).
        self._history = history
        #: Per seat, the cards passed so far this hand (one at a time), and those received.
        self._passed: list[list[int]] = [[] for _ in range(state.players)]
        self._received: list[list[int]] = [[] for _ in range(state.players)]
        self._rng = Xoshiro(0)
        #: The last trick of the previous hand (``last_trick()`` before this hand completes one).
        self._last_trick: Trick | None = None

    def _deal_next(self) -> None:
        state = self._state
        index = state.hand_index + 1
        if state.tricks:
            self._last_trick = state.tricks[-1]
        if self._fast:
            hands, kitty = fast_deal(state.players, fnv1a(self._seed), index)
            state.start_hand(_cards_of(hands), _cards(kitty))
        else:
            state.start_hand(*deal_hand(state.rules, self._seed, index))
        self._passed = [[] for _ in range(state.players)]
        self._received = [[] for _ in range(state.players)]

    @classmethod
    def from_hands(
        cls,
        players: int,
        hands: Sequence[Sequence[int]],
        kitty: Sequence[int],
        *,
        hand_index: int = 0,
        totals: Sequence[int] | None = None,
        seed: str | int = 0,
        target_score: int = 150,
        max_hands: int = 200,
        first_dealer: int = 0,
        passes: Sequence[Sequence[int]] | None = None,
        history: Sequence[Sequence[int]] | None = None,
    ) -> Game:
        """A game at the start of hand ``hand_index`` with the given cards (``docs/SIMULATOR.md``).

        With ``passes`` None, ``hands`` are as dealt and the game is at the start of passing;
        with ``passes`` (per seat 3 cards, or none when unknown) the passes are delivered,
        ``hands`` are the hands after passing and the game is at the first lead. ``history``
        (per earlier hand, its scores) becomes ``hand_scores_history()``.

        Raises:
            IllegalAction: ``BAD_DEAL`` if the cards are not two decks in the right sizes, or the
                totals, passes or history are not one per seat.
        """
        rules = Rules(players, target_score, max_hands, first_dealer)
        if totals is not None and len(totals) != players:
            raise IllegalAction("BAD_DEAL", f"expected {players} totals, not {len(totals)}")
        if hand_index < 0:
            raise IllegalAction("BAD_DEAL", f"hand_index must be 0 or more, not {hand_index}")
        dealt, rest = _cards_of(hands), _cards(kitty)
        if passes is not None and (
            len(passes) != players
            or any(len(p) not in (0, PASS_COUNT) or any(not 0 <= c < NUM_CARDS for c in p) for p in passes)
        ):
            raise IllegalAction("BAD_DEAL", f"passes must be {players} lists of 0 or 3 cards")
        for row in history or ():
            if len(row) != players:
                raise IllegalAction(
                    "BAD_DEAL", f"each hand of history holds {players} scores, not {len(row)}"
                )
        state = State(rules, totals=totals, next_hand=hand_index)
        try:
            state.start_hand(dealt, rest, skip_passing=passes is not None)
        except BadDeal as exc:
            raise IllegalAction("BAD_DEAL", exc.message) from None
        game = cls.__new__(cls)
        game._take(state, seed, False, [[int(v) for v in row] for row in history or ()])
        if passes is not None:
            for seat, cards in enumerate(passes):
                game._passed[seat] = sorted(int(c) for c in cards)
                game._received[state.pass_direction.target(seat, players)] = list(game._passed[seat])
        return game

    def _know_pass(self, seat: int, passed: Sequence[int], received: Sequence[int]) -> None:
        # A game started after the passes (from_view): the seat's own pass as it knows it.
        self._passed[seat] = sorted(int(c) for c in passed)
        self._received[seat] = sorted(int(c) for c in received)

    @classmethod
    def from_view(cls, view: Any, world: Any, seed: str | int = "") -> Game:
        """A determinization consistent with ``view``, hidden cards from ``world`` (see :mod:`._build`)."""
        from hearts_client.sim._build import from_view

        return from_view(cls, view, world, seed)

    @classmethod
    def from_record(cls, record: Any, hand: int = 0) -> Game:
        """The start of hand ``hand`` of a game record (a dict or a file path; see :mod:`._build`)."""
        from hearts_client.sim._build import from_record

        return from_record(cls, record, hand)

    # --------------------------------------------------------------------------- reading
    @property
    def players(self) -> int:
        """The table size."""
        return self._state.players

    @property
    def phase(self) -> int:
        """``PASS``, ``PLAY``, ``MOON`` or ``OVER``."""
        return _PHASES[self._state.phase]

    @property
    def hand_index(self) -> int:
        """The index of the hand in progress (at game over: of the last hand)."""
        return self._state.hand_index

    def _passer(self) -> int:
        # As native: the seat to pass is the first seat that has not passed three cards.
        return next((s for s, p in enumerate(self._passed) if len(p) < PASS_COUNT), self._state.players)

    @property
    def current_player(self) -> int:
        """The seat to act: the passer, the player, the moon shooter; -1 when the game is over."""
        state = self._state
        phase = state.phase
        if phase is Phase.PLAYING:
            return state.to_play
        if phase is Phase.PASSING:
            return self._passer()
        if phase is Phase.MOON_CHOICE:
            assert state.moon_shooter is not None
            return state.moon_shooter
        return -1

    @property
    def trick_index(self) -> int:
        """The index of the trick in progress (completed tricks this hand)."""
        return len(self._state.tricks)

    @property
    def target_score(self) -> int:
        """The rules' target score."""
        return self._state.rules.target_score

    @property
    def max_hands(self) -> int:
        """The rules' hand cap."""
        return self._state.rules.max_hands

    @property
    def first_dealer(self) -> int:
        """The dealer of hand 0."""
        return self._state.rules.first_dealer

    @property
    def seed(self) -> str:
        """The deal seed, as a string."""
        return self._seed

    @property
    def dealer(self) -> int:
        """The current hand's dealer."""
        return self._state.dealer

    def is_over(self) -> bool:
        """Whether the game has ended."""
        return self._state.game_over

    def _holding(self, seat: int) -> CardSet:
        """``seat``'s cards; while passing, without those it has chosen to pass (the engine takes
        them out of the hands only when every pass is in)."""
        hand = self._state.hands[seat]
        passed = self._passed[seat]
        if not passed or self._state.phase is not Phase.PASSING:
            return hand
        hand = hand.copy()
        for card in passed:
            hand.remove(CARDS[card])
        return hand

    def legal_mask(self) -> int:
        """The legal actions as a 54-bit int (bit ``a`` set when action ``a`` is legal)."""
        state = self._state
        phase = state.phase
        if phase is Phase.PLAYING:
            return state.legal_mask()
        if phase is Phase.PASSING:
            return self._holding(self._passer()).once
        if phase is Phase.MOON_CHOICE:
            return 3 << NUM_CARDS
        return 0

    def legal_actions(self) -> list[int]:
        """The legal actions, sorted and distinct (empty when the game is over)."""
        return _bits(self.legal_mask())

    def legal_mask_into(self, buf: Any) -> None:
        """Writes the 54 legal flags (0/1) into a writable buffer of length 54."""
        mask = self.legal_mask()
        for a in range(NUM_ACTIONS):
            buf[a] = mask >> a & 1

    def _seat(self, seat: int) -> int:
        """``seat``, checked: a seat of this table (as the native module checks it)."""
        if not 0 <= seat < self._state.players:
            raise IndexError(f"seat must be 0..{self._state.players - 1}, not {seat}")
        return seat

    def hand(self, seat: int) -> list[int]:
        """``seat``'s cards, sorted, duplicates repeated (during passing: not yet chosen to pass)."""
        return _held(self._holding(self._seat(seat)))

    def kitty(self) -> list[int]:
        """The kitty's cards, sorted."""
        return sorted(int(c) for c in self._state.kitty)

    def trick(self) -> list[tuple[int, int]]:
        """The trick in progress as (seat, card) in playing order."""
        state = self._state
        if state.phase is not Phase.PLAYING:
            return []
        n, leader = state.players, state.current.leader
        return [((leader + i) % n, int(c)) for i, c in enumerate(state.current.cards)]

    def tricks(self) -> list[tuple[int, list[int], int]]:
        """The completed tricks of this hand (at game over: the last hand): (leader, cards, winner or -1)."""
        return [_trick(t) for t in self._state.tricks]

    def points(self) -> list[int]:
        """Points collected this hand per seat, kitty included (at game over: the last hand's)."""
        return list(self._state.points)

    def taken(self) -> list[int]:
        """Per seat, points of trick cards collected this hand, the kitty excluded (public)."""
        return list(self._state.public_taken)

    def set_aside_points(self) -> int:
        """Points of set-aside trick cards waiting for the next winner (public)."""
        return sum(c.points for c in self._state.public_waiting)

    def uncollected(self) -> list[int]:
        """Cards waiting for a trick winner (the kitty until taken); at hand end, nobody's."""
        state = self._state
        waiting = state.results[-1].uncollected if state.game_over else state.pending
        return sorted(int(c) for c in waiting)

    @property
    def kitty_taker(self) -> int | None:
        """The seat that collected the kitty this hand, or None."""
        return self._state.kitty_taker

    @property
    def moon_shooter(self) -> int | None:
        """The seat that took every point this hand (once the last trick is done), or None."""
        return self._state.moon_shooter

    @property
    def hearts_broken(self) -> bool:
        """Whether a point card was played to a completed trick this hand."""
        return self._state.hearts_broken

    @property
    def pass_direction(self) -> str:
        """``"left"`` or ``"right"``: where this hand's passes go."""
        return self._state.pass_direction.value

    @property
    def obs_size(self) -> int:
        """The length of this game's observations."""
        return obs_size(self._state.players)

    def last_trick(self) -> tuple[int, list[int], int | None] | None:
        """The last completed trick (at the start of a hand, the previous hand's last): (leader,
        cards in playing order, winner or None when set aside); None before any trick completes."""
        tricks = self._state.tricks
        last = tricks[-1] if tricks else self._last_trick
        if last is None:
            return None
        return last.leader, [int(c) for c in last.cards], last.winner

    def last_hand(self) -> dict[str, Any] | None:
        """The last finished hand: ``{"index", "points", "scores", "moon", "uncollected",
        "kitty_taker"}``, or None before the first hand ends."""
        if not self._state.results:
            return None
        result = self._state.results[-1]
        return {
            "index": result.index,
            "points": list(result.points),
            "scores": list(result.scores),
            "moon": result.moon,
            "uncollected": [int(c) for c in result.uncollected],
            "kitty_taker": result.kitty_taker,
        }

    def passed(self, seat: int) -> list[int]:
        """The cards ``seat`` passed (so far) this hand, sorted."""
        return sorted(self._passed[self._seat(seat)])

    def received(self, seat: int) -> list[int]:
        """The cards ``seat`` received this hand, sorted (empty until the passes are delivered)."""
        return sorted(self._received[self._seat(seat)])

    def totals(self) -> list[int]:
        """The game totals (before the hand in progress)."""
        return list(self._state.totals)

    def hand_scores_history(self) -> list[list[int]]:
        """What each hand finished in this game added to the totals, in order."""
        return [list(h) for h in self._history] + [list(r.scores) for r in self._state.results]

    def returns(self) -> list[float]:
        """Minus the totals (higher is better): the final returns once the game is over."""
        return [-float(t) for t in self._state.totals]

    def winners(self) -> list[int]:
        """The seats with the lowest total once the game is over, else empty."""
        return list(self._state.winners)

    # --------------------------------------------------------------------------- acting
    def apply_action(self, action: int) -> None:
        """Applies one action (a card 0..51, or a moon choice 52/53).

        Raises:
            IllegalAction: with the conformance code of the rule broken; nothing changes.
            ValueError: for an int outside 0..53 (TypeError: not an int), as the native module.
        """
        action = operator.index(action)
        if not 0 <= action < NUM_ACTIONS:
            raise ValueError(f"an action is 0..{NUM_ACTIONS - 1}, not {action}")
        state = self._state
        phase = state.phase
        if phase is Phase.PLAYING:
            if action >= NUM_CARDS:
                self._not_a_card(action)
            try:
                state.play(CARDS[action])
            except HeartsError as exc:
                raise _illegal(exc) from None
        elif phase is Phase.PASSING:
            self._pass_one(action)
        elif phase is Phase.MOON_CHOICE:
            if action < NUM_CARDS:
                raise IllegalAction(
                    "OUT_OF_TURN",
                    "the moon shooter is to choose now",
                    state.hand_index,
                    None,
                    state.moon_shooter,
                )
            state.choose_moon(_MOON_CHOICES[action])
        else:
            raise IllegalAction("OUT_OF_TURN", "the game is over", state.hand_index)
        if state.phase is Phase.DEALING:
            self._deal_next()

    def step(self, action: int) -> list[int]:
        """Applies ``action`` as :meth:`apply_action` and returns the legal actions after it
        (the fast path for Python stepping: one call per decision)."""
        self.apply_action(action)
        return _bits(self.legal_mask())

    def _not_a_card(self, action: int) -> None:
        state = self._state
        raise IllegalAction(
            "NOT_IN_HAND",
            f"action {action} is not in the hand",
            state.hand_index,
            len(state.plays),
            state.to_play,
        )

    def _pass_one(self, action: int) -> None:
        seat = self._passer()
        hand = self._state.hand_index
        if action >= NUM_CARDS:
            raise IllegalAction("OUT_OF_TURN", "a card is to be passed now", hand, None, seat)
        card = CARDS[action]
        if card not in self._holding(seat):
            raise IllegalAction(
                "PASS_NOT_IN_HAND", f"{card} is not in the hand (or not that many copies)", hand, None, seat
            )
        self._passed[seat].append(action)
        if len(self._passed[seat]) == PASS_COUNT:
            self._pass_in(seat)

    def _pass_in(self, seat: int) -> None:
        """Hands ``seat``'s three cards to the engine; the last pass in delivers them all."""
        state = self._state
        state.pass_cards(seat, [CARDS[c] for c in self._passed[seat]])
        if state.phase is Phase.PLAYING:
            for source, cards in enumerate(self._passed):
                self._received[state.pass_direction.target(source, state.players)] = list(cards)

    def apply_pass(self, seat: int, cards: Sequence[int]) -> None:
        """Passes three cards for ``seat`` at once (any seat that has passed none yet, as native).

        Raises:
            IllegalAction: ``OUT_OF_TURN``, ``BAD_PASS_COUNT`` or ``PASS_NOT_IN_HAND``; nothing changes.
        """
        state = self._state
        if not 0 <= seat < state.players:
            raise ValueError(f"seat must be 0..{state.players - 1}, not {seat}")
        where = (state.hand_index, None, seat)
        if state.phase is not Phase.PASSING or self._passed[seat]:
            if state.game_over:
                raise IllegalAction("OUT_OF_TURN", "the game is over", *where)
            raise IllegalAction("OUT_OF_TURN", f"seat {seat} may not pass now", *where)
        if len(cards) != PASS_COUNT:
            raise IllegalAction(
                "BAD_PASS_COUNT", f"pass exactly {PASS_COUNT} cards, not {len(cards)}", *where
            )
        left = state.hands[seat].copy()
        for card in cards:
            if not isinstance(card, int) or not 0 <= card < NUM_CARDS:
                raise IllegalAction("PASS_NOT_IN_HAND", f"{card!r} is not a card", *where)
            if CARDS[card] not in left:
                raise IllegalAction(
                    "PASS_NOT_IN_HAND", f"{CARDS[card]} is not in the hand (or not that many copies)", *where
                )
            left.remove(CARDS[card])
        self._passed[seat] = [int(c) for c in cards]
        self._pass_in(seat)

    def apply_play(self, card: int) -> None:
        """Plays ``card`` for the seat to play (``apply_action`` restricted to the play phase).

        Raises:
            IllegalAction: ``OUT_OF_TURN`` outside play, else as :meth:`apply_action`.
        """
        state = self._state
        if state.phase is not Phase.PLAYING:
            if state.game_over:
                raise IllegalAction("OUT_OF_TURN", "the game is over", state.hand_index)
            raise IllegalAction(
                "OUT_OF_TURN", "no card is expected now", state.hand_index, None, self.current_player
            )
        card = operator.index(card)
        if not 0 <= card < NUM_CARDS:
            self._not_a_card(card)
        self.apply_action(card)

    def apply_moon(self, choice: int | str) -> None:
        """The moon shooter's choice: 52 / ``"self_minus_26"`` or 53 / ``"others_plus_26"``.

        Raises:
            IllegalAction: ``OUT_OF_TURN`` outside the moon phase, ``BAD_MOON_CHOICE`` for another value.
        """
        # As native: the value is checked first, then the phase.
        if choice == MoonChoice.SELF_MINUS_26.value:
            choice = MOON_SELF_MINUS_26
        elif choice == MoonChoice.OTHERS_PLUS_26.value:
            choice = MOON_OTHERS_PLUS_26
        state = self._state
        if choice not in _MOON_CHOICES or isinstance(choice, bool):
            raise IllegalAction(
                "BAD_MOON_CHOICE",
                f"moon choice must be 52, 53, 'self_minus_26' or 'others_plus_26', not {choice!r}",
                state.hand_index,
            )
        if state.phase is not Phase.MOON_CHOICE:
            if state.game_over:
                raise IllegalAction("OUT_OF_TURN", "the game is over", state.hand_index)
            raise IllegalAction("OUT_OF_TURN", "no moon choice is expected now", state.hand_index)
        self.apply_action(int(choice))

    # --------------------------------------------------------------------------- policies
    def _heuristic_action(self) -> int:
        """The heuristic bot's action now, from the View of the seat to act; -1 when over."""
        state = self._state
        phase = state.phase
        if phase is Phase.PLAYING:
            legal = state.legal_mask()
            if not legal & (legal - 1):  # forced: no View to build, no policy to ask
                return legal.bit_length() - 1
            return int(_heuristic().choose_play(build_view(state, state.to_play)))
        if phase is Phase.PASSING:
            # The engine's hand is the hand as dealt until every pass is in. The first of the
            # bot's three not passed yet (as native: after passes chosen by another policy it
            # skips those, never naming a card no longer held).
            seat = self._passer()
            gone = Counter(self._passed[seat])
            for card in _heuristic().choose_pass(build_view(state, seat)):
                if gone[int(card)]:
                    gone[int(card)] -= 1
                    continue
                return int(card)
            raise AssertionError("the seat has passed three cards already")  # pragma: no cover
        if phase is Phase.MOON_CHOICE:
            assert state.moon_shooter is not None
            choice = moon_choice(state.moon_shooter, state.totals, state.rules.target_score)
            return MOON_OTHERS_PLUS_26 if choice is MoonChoice.OTHERS_PLUS_26 else MOON_SELF_MINUS_26
        return -1

    def policy_action(self, policy: str = "heuristic") -> int | None:
        """The action the named policy (``"heuristic"`` or ``"random"``, which draws from the
        play RNG) takes now, or None when the game is over.

        Raises:
            ValueError: for another policy name.
        """
        if policy == "heuristic":
            action = self._heuristic_action()
        elif policy == "random":
            action = self._random_action()
        else:
            raise ValueError(f"unknown policy {policy!r}: use 'random' or 'heuristic'")
        return None if action < 0 else action

    def _random_action(self) -> int:
        """The random policy's action: one draw, ``rng.pick_bit(legal_mask())``; -1 when over."""
        mask = self.legal_mask()
        if not mask:
            return -1
        return self._rng.pick_bit(mask)

    def play_out(
        self, policy: Policy = "random", seed: int | None = None, *, hands: int | None = None
    ) -> int:
        """Plays on with ``policy`` for every seat, to the game's end (or ``hands`` hand ends).

        Args:
            policy: ``"random"`` (uniform over ``legal_actions()``, one draw of the play RNG per
                action: ``rng.pick_bit(legal_mask())``), ``"heuristic"`` (the SDK's heuristic
                bot, no draws) or a callable taking the game and returning an action.
            seed: If given, the play RNG is first re-seeded with ``seed`` (its low 64 bits).
            hands: Stop after this many hands have ended during this call (the game is then at
                the start of the next hand), or at game over.

        Raises:
            ValueError: for an unknown policy name or ``hands`` below 1.
            IllegalAction: if a callable policy returns an illegal action.

        Returns:
            The number of actions taken.
        """
        if seed is not None:
            self._rng.seed(int(seed))
        if hands is not None and hands < 1:
            raise ValueError(f"hands must be at least 1, not {hands}")
        if policy == "random":
            choose: Callable[[], int] = self._random_action
        elif policy == "heuristic":
            choose = self._heuristic_action
        elif callable(policy):

            def choose() -> int:
                return int(policy(self))
        else:
            raise ValueError(f"unknown policy {policy!r}: use 'random', 'heuristic' or a callable")
        results = self._state.results
        stop = None if hands is None else len(results) + hands
        steps = 0
        while not self._state.game_over:
            self.apply_action(choose())
            steps += 1
            if stop is not None and len(self._state.results) >= stop:
                break
        return steps

    # --------------------------------------------------------------------------- copies
    def clone(self) -> Game:
        """A deep, independent copy, the play RNG's state included."""
        out = Game.__new__(type(self))
        out._state = self._state.copy()
        out._seed = self._seed
        out._fast = self._fast
        out._history = self._history  # never mutated
        out._passed = [list(p) for p in self._passed]
        out._received = list(self._received)  # each list replaced, never mutated
        out._rng = self._rng.copy()
        out._last_trick = self._last_trick  # a completed trick: never mutated
        return out

    __copy__ = clone

    def __deepcopy__(self, memo: dict[int, Any]) -> Game:
        return self.clone()

    # --------------------------------------------------------------------------- observation
    def observation_into(self, seat: int, buf: Any) -> None:
        """Writes ``seat``'s information-state tensor (``OBS_SIZE(players)`` float32s) into ``buf``.

        The layout is in ``docs/SIMULATOR.md`` ("Observation"); every element is written.
        """
        values = self._observation(self._seat(seat))
        if hasattr(buf, "__len__") and len(buf) != len(values):
            raise ValueError(f"the buffer holds {len(buf)} values, an observation {len(values)}")
        try:
            buf[:] = values
        except TypeError:
            for i, v in enumerate(values):
                buf[i] = v

    def observation(self, seat: int) -> Any:
        """``seat``'s observation as a new numpy float32 array (a list of floats without numpy)."""
        values = self._observation(self._seat(seat))
        try:
            import numpy as np
        except ImportError:  # pragma: no cover - numpy is optional
            return values
        return np.asarray(values, dtype=np.float32)

    def _observation(self, seat: int) -> list[float]:
        # The native module's layout (clients/sim/core/src/obs.rs, docs/SIMULATOR.md), read from
        # the engine's state in every phase, game over included (the last hand's facts).
        state = self._state
        n = state.players
        f32 = _f32
        out = [0.0] * obs_size(n)
        for card in _held(self._holding(seat)):
            out[card] += 1.0
        once = twice = 0
        for card in state.plays:
            bit = 1 << card
            if once & bit:
                twice |= bit
            once |= bit
        for c in _bits(once):
            out[52 + c] = 1.0
        for c in _bits(twice):
            out[104 + c] = 1.0
        tricks = list(state.tricks)
        if state.phase is Phase.PLAYING:
            tricks.append(state.current)
            leader = state.current.leader
            for i, c in enumerate(state.current.cards):
                out[156 + 52 * ((leader + i - seat) % n) + c] = 1.0
        voids = [0] * n
        for trick in tricks:  # a seat that did not follow the suit led is void in it
            led = trick.cards[0] // 13 if trick.cards else 0
            for i, card in enumerate(trick.cards):
                if card // 13 != led:
                    voids[(trick.leader + i) % n] |= 1 << led
        base = 156 + 52 * n
        target = state.rules.target_score
        hand_size = state.rules.hand_size
        for s in range(n):
            r = (s - seat) % n
            out[base + r] = f32(state.public_taken[s] / 26)
            out[base + n + r] = f32(state.totals[s] / target)
            for suit in range(4):
                if voids[s] >> suit & 1:
                    out[base + 2 * n + 4 * r + suit] = 1.0
            out[base + 6 * n + r] = f32(len(self._holding(s)) / hand_size)
        known = base + 7 * n
        for c in self._passed[seat]:
            out[known + c] += 1.0
        for c in self._received[seat]:
            out[known + 52 + c] += 1.0
        if state.kitty_taker is not None:
            out[known + 104 + (state.kitty_taker - seat) % n] = 1.0
        tail = known + 104 + n
        out[tail + state.hand_index % 2] = 1.0
        out[tail + 2 + _PHASES[state.phase]] = 1.0
        if self.current_player == seat:
            for a in _bits(self.legal_mask()):
                out[tail + 6 + a] = 1.0
        return out

    def __repr__(self) -> str:
        return (
            f"<Game players={self.players} hand={self.hand_index} phase={PHASE_NAMES[self.phase]} "
            f"to_act={self.current_player} totals={self.totals()}>"
        )


def _f32_factory() -> Callable[[float], float]:
    import struct

    pack = struct.Struct("f")

    def f32(x: float) -> float:
        return float(pack.unpack(pack.pack(x))[0])

    return f32


_f32: Final = _f32_factory()


# ------------------------------------------------------------------------------------- VecGame
class VecGame:
    """``num_games`` games stepped together into numpy arrays (numpy needed for the arrays).

    As the native module: game ``i`` in its ``e``-th episode is ``Game(players,
    f"{seed}/{i}/{e}", deal=deal, **rules)`` with its play RNG re-seeded to
    ``Xoshiro(fnv1a(seed) ^ i * 0x9E3779B97F4A7C15 ^ rotl64(e, 32))``; a game that ends during
    :meth:`step` is replaced by its next episode at once (during :meth:`step_random` the next
    episode keeps drawing from the ended game's generator).

    Args:
        num_games: How many games (1 or more).
        players: 6 to 11.
        seed: The base seed (None: ``"0"``).
        target_score, max_hands, first_dealer: as for :class:`Game`.
        deal: ``"fast"`` (default, the simulator's own shuffle :func:`fast_deal`) or ``"referee"``.
    """

    def __init__(
        self,
        num_games: int,
        players: int,
        seed: str | int | None = None,
        *,
        target_score: int = 150,
        max_hands: int = 200,
        first_dealer: int = 0,
        deal: str = "fast",
    ) -> None:
        if deal not in ("referee", "fast"):
            raise ValueError(f"deal must be 'referee' or 'fast', not {deal!r}")
        if num_games < 1:
            raise ValueError("num_games must be at least 1")
        self._num_games = num_games
        self._players = players
        self._seed = "0" if seed is None else str(seed)
        self._deal = deal
        self._rules = {"target_score": target_score, "max_hands": max_hands, "first_dealer": first_dealer}
        self._games: list[Game] = []
        self._episodes: list[int] = []
        self.reset()

    @property
    def num_games(self) -> int:
        """How many games are stepped together."""
        return self._num_games

    @property
    def players(self) -> int:
        """The table size of every game."""
        return self._players

    @property
    def obs_size(self) -> int:
        """The length of one game's observation."""
        return obs_size(self._players)

    def __len__(self) -> int:
        return self._num_games

    def _game(self, i: int, e: int) -> Game:
        return Game(self._players, f"{self._seed}/{i}/{e}", deal=self._deal, **self._rules)

    def _new(self, i: int, e: int) -> Game:
        g = self._game(i, e)
        rot = ((e << 32) | (e >> 32)) & _M64
        g._rng = Xoshiro(fnv1a(self._seed) ^ ((i * _GOLDEN) & _M64) ^ rot)
        return g

    def reset(self) -> None:
        """Every game back to episode 0."""
        self._episodes = [0] * self._num_games
        self._games = [self._new(i, 0) for i in range(self._num_games)]

    def game(self, i: int) -> Game:
        """A copy of game ``i``."""
        if not 0 <= i < self._num_games:
            raise IndexError(f"game index must be 0..{self._num_games - 1}, not {i}")
        return self._games[i].clone()

    def current_players(self, out: Any = None) -> list[int] | None:
        """Writes each game's current player into ``out`` (int array of length ``num_games``);
        without ``out``, returns them as a list."""
        if out is None:
            return [g.current_player for g in self._games]
        for i, g in enumerate(self._games):
            out[i] = g.current_player
        return None

    def legal_masks(self, out: Any) -> None:
        """Writes each game's 54 legal flags into row ``i`` of ``out`` (uint8/bool ``[N, 54]``)."""
        for i, g in enumerate(self._games):
            g.legal_mask_into(out[i])

    def observations(self, out: Any) -> None:
        """Writes each game's current player's observation into row ``i`` of ``out`` (float32 [N, OBS])."""
        for i, g in enumerate(self._games):
            g.observation_into(max(g.current_player, 0), out[i])

    def step(self, actions: Any, rewards: Any = None, dones: Any = None) -> None:
        """Applies ``actions[i]`` in game ``i``.

        Args:
            actions: One action per game.
            rewards: If given (float32 ``[N, players]``), row ``i`` gets minus what this step added
                to each seat's total (nonzero only when a hand ends), so that an episode's rewards
                sum to its returns.
            dones: If given (uint8/bool ``[N]``), 1 where the game ended (and was reset).

        Raises:
            ValueError: for a wrong number of actions or an action outside 0..53.
            IllegalAction: for an illegal action (``.game`` says which); every action is checked
                before any is applied, so nothing changes.
        """
        acts = [int(a) for a in actions]
        if len(acts) != self._num_games:
            raise ValueError(f"step: {len(acts)} actions for {self._num_games} games")
        for i, (a, g) in enumerate(zip(acts, self._games, strict=True)):
            if not 0 <= a < NUM_ACTIONS:
                raise ValueError(f"an action is 0..{NUM_ACTIONS - 1}, not {a}")
            if not g.legal_mask() >> a & 1:
                try:
                    g.clone().apply_action(a)
                except IllegalAction as exc:
                    exc.game = i  # type: ignore[attr-defined]
                    exc.args = (f"game {i}: {exc.args[0]}",)
                    raise
        for i, g in enumerate(self._games):
            before = len(g._state.results)
            g.apply_action(acts[i])
            self._after(i, g, before, rewards, dones)

    def _after(self, i: int, g: Game, before: int, rewards: Any, dones: Any) -> None:
        if rewards is not None:
            row = rewards[i]
            if len(g._state.results) > before:
                for s, v in enumerate(g._state.results[-1].scores):
                    row[s] = -float(v)
            else:
                for s in range(self._players):
                    row[s] = 0.0
        over = g.phase == OVER
        if dones is not None:
            dones[i] = 1 if over else 0
        if over:
            self._episodes[i] += 1
            self._games[i] = self._new(i, self._episodes[i])

    def step_random(self, n_steps: int) -> int:
        """Steps every game ``n_steps`` times with uniformly random legal actions (each game's own
        play RNG; a finished game starts its next episode, which keeps drawing from that RNG).

        Returns:
            How many hands were completed meanwhile (as the native module).
        """
        hands = 0
        for i in range(self._num_games):
            g = self._games[i]
            for _ in range(n_steps):
                before = len(g._state.results)
                action = g._random_action()
                if action >= 0:
                    g.apply_action(action)
                hands += len(g._state.results) - before
                if g.phase == OVER:
                    self._episodes[i] += 1
                    fresh = self._game(i, self._episodes[i])
                    fresh._rng = g._rng
                    g = fresh
            self._games[i] = g
        return hands


def obs_size_of(players: int) -> int:
    """The observation length for ``players`` seats (as the native module's ``obs_size_of``)."""
    return obs_size(players)


def replay(record: dict[str, Any]) -> dict[str, Any]:
    """The conformance outcome of a game record (as ``hearts replay``): the engine's own replay."""
    return _replay(record)
