"""The pure-Python simulator backend: :class:`Game` and :class:`VecGame` on ``hearts_core``'s rules.

This is the fallback the SDK uses when the native module ``hearts_sim`` (built from
``clients/sim/``) is not installed. It has exactly the native module's API and gives the same
results for the same inputs and seeds: the deals are ``hearts_core.deal.deal_hand``'s (or the
simulator's own :func:`fast_deal`), the random policy draws from the generator :class:`Xoshiro`
specified in ``docs/SIMULATOR.md`` exactly as the native module does, and
the heuristic policy is the SDK's rollout policy (:mod:`hearts_client.rollout`).

The state is kept as 52-bit masks like :class:`hearts_core.state.State`, without the record-grade
bookkeeping (trick views, summaries) a simulator does not need; illegal actions raise
:class:`IllegalAction` carrying the conformance code of ``hearts_core.errors`` and change nothing.
"""

from __future__ import annotations

import operator
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, Final

from hearts_client.bot import moon_choice
from hearts_client.rollout import _choose, _threat
from hearts_core.cards import BLACK_MARIA, CARDS, FULL_MASK, HEARTS_MASK, POINT_MASK, SUIT_MASKS, Suit
from hearts_core.deal import deal_hand
from hearts_core.rules import MOON_POINTS, MoonChoice, Rules

NUM_CARDS: Final = 52
NUM_ACTIONS: Final = 54
MOON_SELF_MINUS_26: Final = 52
MOON_OTHERS_PLUS_26: Final = 53
PASS: Final = 0
PLAY: Final = 1
MOON: Final = 2
OVER: Final = 3
PHASE_NAMES: Final = ("pass", "play", "moon", "over")
PASS_COUNT: Final = 3
HAND_POINTS: Final = 52

_M64: Final = (1 << 64) - 1
_QS: Final = int(BLACK_MARIA)
_NON_POINT: Final = FULL_MASK & ~POINT_MASK
_NON_HEART: Final = FULL_MASK & ~HEARTS_MASK
_SUITS: Final = tuple(SUIT_MASKS)
_POINTS: Final = tuple(13 if c == _QS else (1 if HEARTS_MASK >> c & 1 else 0) for c in range(52))
_GOLDEN: Final = 0x9E3779B97F4A7C15


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


# ------------------------------------------------------------------------------------- RNG
def fnv1a(text: str) -> int:
    """FNV-1a (64 bits) of ``text``'s UTF-8 bytes: the seed hash of :func:`fast_deal` and VecGame."""
    h = 0xCBF29CE484222325
    for b in text.encode():
        h = ((h ^ b) * 0x100000001B3) & _M64
    return h


def _split(players: int, deck: Sequence[int]) -> tuple[list[list[int]], list[int]]:
    size = 104 // players
    hands = [sorted(deck[seat * size : (seat + 1) * size]) for seat in range(players)]
    return hands, sorted(deck[players * size :])


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
    return _split(players, deck)


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


def _cards_of(mask: int) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def _with_twice(once: int, twice: int) -> list[int]:
    out = []
    for c in _cards_of(once):
        out.append(c)
        if twice >> c & 1:
            out.append(c)
    return out


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

    __slots__ = (
        "_broken",
        "_dealt",
        "_dup",
        "_fast",
        "_hand_index",
        "_history",
        "_hs",
        "_kitty",
        "_kitty_points",
        "_kitty_taker",
        "_last_hand",
        "_last_trick",
        "_leader",
        "_led",
        "_once",
        "_p_once",
        "_p_twice",
        "_passer",
        "_passes",
        "_pending_points",
        "_phase",
        "_players",
        "_points",
        "_received",
        "_rng",
        "_rules",
        "_seed",
        "_seen",
        "_shooter",
        "_taken",
        "_to_play",
        "_totals",
        "_trick",
        "_tricks",
        "_twice",
        "_voids",
        "_waiting",
        "_waiting_points",
        "_winners",
    )  # fmt: skip

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
        self._setup(Rules(players, target_score, max_hands, first_dealer), seed, 0, None)
        self._fast = deal == "fast"
        hands, kitty = self._deal(0)
        self._start(hands, kitty, None)

    def _deal(self, index: int) -> tuple[list[list[int]], list[int]]:
        if self._fast:
            return fast_deal(self._players, fnv1a(self._seed), index)
        hands, kitty = deal_hand(self._rules, self._seed, index)
        return [[int(c) for c in h] for h in hands], [int(c) for c in kitty]

    def _setup(self, rules: Rules, seed: object, hand_index: int, totals: Sequence[int] | None) -> None:
        self._rules = rules
        self._players = rules.players
        self._seed = str(seed)
        self._hs = rules.hand_size
        self._hand_index = hand_index
        self._totals = [0] * rules.players if totals is None else [int(t) for t in totals]
        self._history: list[list[int]] = []
        self._winners: list[int] = []
        self._fast = False
        self._rng = Xoshiro(0)
        self._last_trick: tuple[int, list[int], int] | None = None
        self._last_hand: dict[str, Any] | None = None

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
        size = rules.hand_size
        if len(hands) != players or any(len(h) != size for h in hands) or len(kitty) != rules.kitty_size:
            raise IllegalAction(
                "BAD_DEAL", f"expected {players} hands of {size} cards and a kitty of {rules.kitty_size}"
            )
        counts = [0] * 52
        for card in (*(c for h in hands for c in h), *kitty):
            if not 0 <= card < 52 or counts[card] == 2:
                raise IllegalAction("BAD_DEAL", f"card {card!r} is not a card or appears more than twice")
            counts[card] += 1
        if passes is not None and (
            len(passes) != players
            or any(len(p) not in (0, PASS_COUNT) or any(not 0 <= c < 52 for c in p) for p in passes)
        ):
            raise IllegalAction("BAD_DEAL", f"passes must be {players} lists of 0 or 3 cards")
        for row in history or ():
            if len(row) != players:
                raise IllegalAction(
                    "BAD_DEAL", f"each hand of history holds {players} scores, not {len(row)}"
                )
        game = cls.__new__(cls)
        game._setup(rules, seed, hand_index, totals)
        game._start([sorted(int(c) for c in h) for h in hands], sorted(int(c) for c in kitty), passes)
        if history is not None:
            game._history = [[int(v) for v in h] for h in history]
        return game

    # --------------------------------------------------------------------------- a hand
    def _start(
        self, hands: Sequence[Sequence[int]], kitty: Sequence[int], passes: Sequence[Sequence[int]] | None
    ) -> None:
        n = self._players
        once = [0] * n
        twice = [0] * n
        for seat, hand in enumerate(hands):
            o = t = 0
            for card in hand:
                bit = 1 << card
                if o & bit:
                    t |= bit
                else:
                    o |= bit
            once[seat] = o
            twice[seat] = t
        self._once = once
        self._twice = twice
        self._dealt = [list(h) for h in hands]
        self._kitty = list(kitty)
        self._kitty_points = sum(_POINTS[c] for c in kitty)
        self._trick: list[int] = []
        self._tricks: list[tuple[int, list[int], int]] = []
        self._led = self._seen = self._dup = 0
        self._broken = False
        self._points = [0] * n
        self._taken = [0] * n
        self._pending_points = self._kitty_points
        self._waiting: list[int] = list(kitty)
        self._waiting_points = 0
        self._kitty_taker = -1
        self._p_once = self._p_twice = 0
        self._voids = [0] * n
        self._shooter = -1
        self._leader = (self._rules.dealer(self._hand_index) + 1) % n
        self._to_play = self._leader
        if passes is None:
            self._passes: list[list[int]] = [[] for _ in range(n)]
            self._received: list[list[int]] = [[] for _ in range(n)]
            self._passer = 0
            self._phase = PASS
        else:
            self._passes = [sorted(int(c) for c in p) for p in passes]
            self._received = [[] for _ in range(n)]
            for seat in range(n):
                self._received[self._target(seat)] = list(self._passes[seat])
            self._passer = n
            self._phase = PLAY

    def _know_pass(self, seat: int, passed: Sequence[int], received: Sequence[int]) -> None:
        # A game started after the passes (from_view): the seat's own pass as it knows it.
        self._passes[seat] = sorted(int(c) for c in passed)
        self._received[seat] = sorted(int(c) for c in received)

    def _target(self, seat: int) -> int:
        return (seat + (1 if self._hand_index % 2 == 0 else -1)) % self._players

    def _deliver(self) -> None:
        n = self._players
        once, twice = self._once, self._twice
        for seat in range(n):
            target = self._target(seat)
            self._received[target] = list(self._passes[seat])
            for card in self._passes[seat]:
                bit = 1 << card
                if once[target] & bit:
                    twice[target] |= bit
                else:
                    once[target] |= bit
        for p in self._passes:
            p.sort()
        self._phase = PLAY

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
        return self._players

    @property
    def phase(self) -> int:
        """``PASS``, ``PLAY``, ``MOON`` or ``OVER``."""
        return self._phase

    @property
    def hand_index(self) -> int:
        """The index of the hand in progress (at game over: of the last hand)."""
        return self._hand_index

    @property
    def current_player(self) -> int:
        """The seat to act: the passer, the player, the moon shooter; -1 when the game is over."""
        phase = self._phase
        if phase == PLAY:
            return self._to_play
        if phase == PASS:
            return self._passer
        if phase == MOON:
            return self._shooter
        return -1

    @property
    def trick_index(self) -> int:
        """The index of the trick in progress (completed tricks this hand)."""
        return len(self._tricks)

    @property
    def target_score(self) -> int:
        """The rules' target score."""
        return self._rules.target_score

    @property
    def max_hands(self) -> int:
        """The rules' hand cap."""
        return self._rules.max_hands

    @property
    def first_dealer(self) -> int:
        """The dealer of hand 0."""
        return self._rules.first_dealer

    @property
    def seed(self) -> str:
        """The deal seed, as a string."""
        return self._seed

    @property
    def dealer(self) -> int:
        """The current hand's dealer."""
        return self._rules.dealer(self._hand_index)

    def is_over(self) -> bool:
        """Whether the game has ended."""
        return self._phase == OVER

    def _legal(self) -> int:
        once = self._once[self._to_play]
        if self._trick:
            follow = once & _SUITS[self._led]
            return follow or once
        if not self._tricks:
            return (once & _NON_POINT) or once
        if not self._broken:
            return (once & _NON_HEART) or once
        return once

    def legal_mask(self) -> int:
        """The legal actions as a 54-bit int (bit ``a`` set when action ``a`` is legal)."""
        phase = self._phase
        if phase == PLAY:
            return self._legal()
        if phase == PASS:
            return self._once[self._passer]
        if phase == MOON:
            return 3 << 52
        return 0

    def legal_actions(self) -> list[int]:
        """The legal actions, sorted and distinct (empty when the game is over)."""
        return _cards_of(self.legal_mask())

    def legal_mask_into(self, buf: Any) -> None:
        """Writes the 54 legal flags (0/1) into a writable buffer of length 54."""
        mask = self.legal_mask()
        for a in range(NUM_ACTIONS):
            buf[a] = mask >> a & 1

    def _seat(self, seat: int) -> int:
        """``seat``, checked: a seat of this table (as the native module checks it)."""
        if not 0 <= seat < self._players:
            raise IndexError(f"seat must be 0..{self._players - 1}, not {seat}")
        return seat

    def hand(self, seat: int) -> list[int]:
        """``seat``'s cards, sorted, duplicates repeated (during passing: not yet chosen to pass)."""
        seat = self._seat(seat)
        return _with_twice(self._once[seat], self._twice[seat])

    def kitty(self) -> list[int]:
        """The kitty's cards, sorted."""
        return list(self._kitty)

    def trick(self) -> list[tuple[int, int]]:
        """The trick in progress as (seat, card) in playing order."""
        n = self._players
        return [((self._leader + i) % n, c) for i, c in enumerate(self._trick)]

    def tricks(self) -> list[tuple[int, list[int], int]]:
        """The completed tricks of this hand (at game over: the last hand): (leader, cards, winner or -1)."""
        return [(leader, list(cards), winner) for leader, cards, winner in self._tricks]

    def points(self) -> list[int]:
        """Points collected this hand per seat, kitty included (at game over: the last hand's)."""
        return list(self._points)

    def taken(self) -> list[int]:
        """Per seat, points of trick cards collected this hand, the kitty excluded (public)."""
        return list(self._taken)

    def set_aside_points(self) -> int:
        """Points of set-aside trick cards waiting for the next winner (public)."""
        return self._waiting_points

    def uncollected(self) -> list[int]:
        """Cards waiting for a trick winner (the kitty until taken); at hand end, nobody's."""
        return sorted(self._waiting)

    @property
    def kitty_taker(self) -> int | None:
        """The seat that collected the kitty this hand, or None."""
        return None if self._kitty_taker < 0 else self._kitty_taker

    @property
    def moon_shooter(self) -> int | None:
        """The seat that took every point this hand (once the last trick is done), or None."""
        return None if self._shooter < 0 else self._shooter

    @property
    def hearts_broken(self) -> bool:
        """Whether a point card was played to a completed trick this hand."""
        return self._broken

    @property
    def pass_direction(self) -> str:
        """``"left"`` or ``"right"``: where this hand's passes go."""
        return "left" if self._hand_index % 2 == 0 else "right"

    @property
    def obs_size(self) -> int:
        """The length of this game's observations."""
        return obs_size(self._players)

    def last_trick(self) -> tuple[int, list[int], int | None] | None:
        """The last completed trick (at the start of a hand, the previous hand's last): (leader,
        cards in playing order, winner or None when set aside); None before any trick completes."""
        if self._last_trick is None:
            return None
        leader, cards, winner = self._last_trick
        return leader, list(cards), None if winner < 0 else winner

    def last_hand(self) -> dict[str, Any] | None:
        """The last finished hand: ``{"index", "points", "scores", "moon", "uncollected",
        "kitty_taker"}``, or None before the first hand ends."""
        return None if self._last_hand is None else dict(self._last_hand)

    def passed(self, seat: int) -> list[int]:
        """The cards ``seat`` passed (so far) this hand, sorted."""
        return sorted(self._passes[self._seat(seat)])

    def received(self, seat: int) -> list[int]:
        """The cards ``seat`` received this hand, sorted (empty until the passes are delivered)."""
        return sorted(self._received[self._seat(seat)])

    def totals(self) -> list[int]:
        """The game totals (before the hand in progress)."""
        return list(self._totals)

    def hand_scores_history(self) -> list[list[int]]:
        """What each hand finished in this game added to the totals, in order."""
        return [list(h) for h in self._history]

    def returns(self) -> list[float]:
        """Minus the totals (higher is better): the final returns once the game is over."""
        return [-float(t) for t in self._totals]

    def winners(self) -> list[int]:
        """The seats with the lowest total once the game is over, else empty."""
        return list(self._winners)

    # --------------------------------------------------------------------------- acting
    def apply_action(self, action: int) -> None:
        """Applies one action (a card 0..51, or a moon choice 52/53).

        Raises:
            IllegalAction: with the conformance code of the rule broken; nothing changes.
            ValueError: for an int outside 0..53 (TypeError: not an int), as the native module.
        """
        phase = self._phase
        if phase == PLAY and isinstance(action, int) and 0 <= action < 52 and self._legal() >> action & 1:
            self._play(action)
            return
        action = operator.index(action)
        if not 0 <= action < NUM_ACTIONS:
            raise ValueError(f"an action is 0..{NUM_ACTIONS - 1}, not {action}")
        if phase == PLAY:
            self._why_not_play(action)
        elif phase == PASS:
            self._pass_one(action)
        elif phase == MOON:
            if action < 52:
                raise IllegalAction(
                    "OUT_OF_TURN", "the moon shooter is to choose now", self._hand_index, None, self._shooter
                )
            self._finish_hand(action)
        else:
            raise IllegalAction("OUT_OF_TURN", "the game is over", self._hand_index)

    def step(self, action: int) -> list[int]:
        """Applies ``action`` as :meth:`apply_action` and returns the legal actions after it
        (the fast path for Python stepping: one call per decision)."""
        self.apply_action(action)
        return _cards_of(self.legal_mask())

    def _plays(self) -> int:
        return len(self._tricks) * self._players + len(self._trick)

    def _why_not_play(self, card: int) -> None:
        where = (self._hand_index, self._plays(), self._to_play)
        if not 0 <= card < 52:
            raise IllegalAction("NOT_IN_HAND", f"action {card} is not in the hand", *where)
        once = self._once[self._to_play]
        bit = 1 << card
        if not once & bit:
            raise IllegalAction("NOT_IN_HAND", f"{CARDS[card]} is not in the hand", *where)
        if self._trick:
            suit = _SUITS[self._led]
            if not bit & suit and once & suit:
                raise IllegalAction(
                    "MUST_FOLLOW_SUIT",
                    f"{CARDS[card]} does not follow {Suit(self._led).name.lower()}",
                    *where,
                )
        elif not self._tricks:
            if bit & POINT_MASK and once & _NON_POINT:
                raise IllegalAction(
                    "FIRST_LEAD_RESTRICTED", "the first lead may not be a heart or the Black Maria", *where
                )
        elif bit & HEARTS_MASK and not self._broken and once & _NON_HEART:
            raise IllegalAction(
                "HEARTS_NOT_BROKEN", "hearts may not be led until a heart or QS is played", *where
            )
        raise AssertionError(f"legal mask and checks disagree on {card}")  # pragma: no cover

    def _pass_one(self, card: int) -> None:
        seat = self._passer
        if card >= 52:
            raise IllegalAction("OUT_OF_TURN", "a card is to be passed now", self._hand_index, None, seat)
        bit = 1 << card
        if self._twice[seat] & bit:
            self._twice[seat] ^= bit
        elif self._once[seat] & bit:
            self._once[seat] ^= bit
        else:
            raise IllegalAction(
                "PASS_NOT_IN_HAND",
                f"{CARDS[card]} is not in the hand (or not that many copies)",
                self._hand_index,
                None,
                seat,
            )
        passes = self._passes[seat]
        passes.append(card)
        if len(passes) == PASS_COUNT:
            self._advance_passer()

    def _advance_passer(self) -> None:
        # As native: the seat to pass is the first seat that has not passed three cards.
        n = self._players
        self._passer = next((s for s in range(n) if len(self._passes[s]) < PASS_COUNT), n)
        if self._passer == n:
            self._deliver()

    def apply_pass(self, seat: int, cards: Sequence[int]) -> None:
        """Passes three cards for ``seat`` at once (any seat that has passed none yet, as native).

        Raises:
            IllegalAction: ``OUT_OF_TURN``, ``BAD_PASS_COUNT`` or ``PASS_NOT_IN_HAND``; nothing changes.
        """
        if not 0 <= seat < self._players:
            raise ValueError(f"seat must be 0..{self._players - 1}, not {seat}")
        where = (self._hand_index, None, seat)
        if self._phase != PASS or self._passes[seat]:
            if self._phase == OVER:
                raise IllegalAction("OUT_OF_TURN", "the game is over", *where)
            raise IllegalAction("OUT_OF_TURN", f"seat {seat} may not pass now", *where)
        if len(cards) != PASS_COUNT:
            raise IllegalAction(
                "BAD_PASS_COUNT", f"pass exactly {PASS_COUNT} cards, not {len(cards)}", *where
            )
        once, twice = self._once[seat], self._twice[seat]
        for card in cards:
            if not isinstance(card, int) or not 0 <= card < 52:
                raise IllegalAction("PASS_NOT_IN_HAND", f"{card!r} is not a card", *where)
            bit = 1 << card
            if twice & bit:
                twice ^= bit
            elif once & bit:
                once ^= bit
            else:
                raise IllegalAction(
                    "PASS_NOT_IN_HAND", f"{CARDS[card]} is not in the hand (or not that many copies)", *where
                )
        if seat == self._passer:
            for card in cards:
                self._pass_one(int(card))
            return
        self._once[seat], self._twice[seat] = once, twice
        self._passes[seat] = [int(c) for c in cards]
        self._advance_passer()

    def apply_play(self, card: int) -> None:
        """Plays ``card`` for the seat to play (``apply_action`` restricted to the play phase).

        Raises:
            IllegalAction: ``OUT_OF_TURN`` outside play, else as :meth:`apply_action`.
        """
        if self._phase != PLAY:
            seat = self.current_player
            if self._phase == OVER:
                raise IllegalAction("OUT_OF_TURN", "the game is over", self._hand_index)
            raise IllegalAction("OUT_OF_TURN", "no card is expected now", self._hand_index, None, seat)
        card = operator.index(card)
        if not 0 <= card < 52:
            self._why_not_play(card)
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
        if choice not in (MOON_SELF_MINUS_26, MOON_OTHERS_PLUS_26) or isinstance(choice, bool):
            raise IllegalAction(
                "BAD_MOON_CHOICE",
                f"moon choice must be 52, 53, 'self_minus_26' or 'others_plus_26', not {choice!r}",
                self._hand_index,
            )
        if self._phase != MOON:
            if self._phase == OVER:
                raise IllegalAction("OUT_OF_TURN", "the game is over", self._hand_index)
            raise IllegalAction("OUT_OF_TURN", "no moon choice is expected now", self._hand_index)
        self._finish_hand(int(choice))

    def _play(self, card: int) -> None:
        seat = self._to_play
        bit = 1 << card
        if self._twice[seat] & bit:
            self._twice[seat] ^= bit
        else:
            self._once[seat] ^= bit
        if self._p_once & bit:
            self._p_twice |= bit
        else:
            self._p_once |= bit
        trick = self._trick
        if not trick:
            self._led = card // 13
        if card // 13 == self._led:
            if self._seen & bit:
                self._dup |= bit
            else:
                self._seen |= bit
        else:
            self._voids[seat] |= 1 << self._led
        trick.append(card)
        n = self._players
        if len(trick) < n:
            self._to_play = (seat + 1) % n
            return
        trick_points = 0
        for c in trick:
            trick_points += _POINTS[c]
        if trick_points:
            self._broken = True
        single = self._seen & ~self._dup
        leader = self._leader
        if single:
            winner = (leader + trick.index(single.bit_length() - 1)) % n
            if self._kitty_taker < 0:
                self._kitty_taker = winner
            self._points[winner] += self._pending_points + trick_points
            self._taken[winner] += self._waiting_points + trick_points
            self._pending_points = 0
            self._waiting = []
            self._waiting_points = 0
            self._tricks.append((leader, trick, winner))
            self._last_trick = (leader, trick, winner)
            leader = winner
        else:
            self._pending_points += trick_points
            self._waiting.extend(trick)
            self._waiting_points += trick_points
            self._tricks.append((leader, trick, -1))
            self._last_trick = (leader, trick, -1)
        self._trick = []
        self._led = self._seen = self._dup = 0
        self._leader = self._to_play = leader
        if len(self._tricks) == self._hs:
            if HAND_POINTS in self._points:
                self._shooter = self._points.index(HAND_POINTS)
                self._phase = MOON
            else:
                self._finish_hand(-1)

    def _finish_hand(self, choice: int) -> None:
        n = self._players
        if choice < 0:
            scores = list(self._points)
        elif choice == MOON_OTHERS_PLUS_26:
            scores = [MOON_POINTS] * n
            scores[self._shooter] = 0
        else:
            scores = [0] * n
            scores[self._shooter] = -MOON_POINTS
        totals = self._totals
        for seat in range(n):
            totals[seat] += scores[seat]
        self._history.append(scores)
        self._last_hand = {
            "index": self._hand_index,
            "points": list(self._points),
            "scores": list(scores),
            "moon": None if self._shooter < 0 else self._shooter,
            "uncollected": sorted(self._waiting),
            "kitty_taker": None if self._kitty_taker < 0 else self._kitty_taker,
        }
        if max(totals) >= self._rules.target_score or self._hand_index + 1 >= self._rules.max_hands:
            low = min(totals)
            self._winners = [s for s, t in enumerate(totals) if t == low]
            self._phase = OVER
            return
        self._hand_index += 1
        hands, kitty = self._deal(self._hand_index)
        self._start(hands, kitty, None)

    # --------------------------------------------------------------------------- policies
    def _heuristic_action(self) -> int:
        """The action the heuristic policy takes now (``docs/SIMULATOR.md``); -1 when over."""
        phase = self._phase
        if phase == PLAY:
            seat = self._to_play
            once = self._once[seat]
            trick = self._trick
            n = self._players
            return _choose(
                seat, once, self._twice[seat], trick, self._led, self._seen, self._dup,
                len(trick) == n - 1, not self._tricks, self._broken, self._p_once, self._p_twice,
                _threat(self._taken), self._waiting_points + sum(_POINTS[c] for c in trick),
                self._leader, n,
            )  # fmt: skip
        if phase == PASS:
            # Imported here: hearts_client.bots imports the bots, which import this module.
            from hearts_client.bots.heuristic import pass_danger

            seat = self._passer
            dealt = [CARDS[c] for c in self._dealt[seat]]
            counts = Counter(c.suit for c in dealt)
            ranked = sorted(dealt, key=lambda c: (pass_danger(c, counts), c), reverse=True)
            # The first of its three not passed yet (as native: after passes chosen by another
            # policy it skips those, never naming a card no longer held).
            gone = Counter(self._passes[seat])
            for card in ranked[:PASS_COUNT]:
                if gone[int(card)]:
                    gone[int(card)] -= 1
                    continue
                return int(card)
            raise AssertionError("the seat has passed three cards already")  # pragma: no cover
        if phase == MOON:
            choice = moon_choice(self._shooter, self._totals, self._rules.target_score)
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
                action: ``rng.pick_bit(legal_mask())``), ``"heuristic"`` (the SDK's rollout
                policy, no draws) or a callable taking the game and returning an action.
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
        done = len(self._history)
        stop = None if hands is None else done + hands
        steps = 0
        while self._phase != OVER:
            self.apply_action(choose())
            steps += 1
            if stop is not None and len(self._history) >= stop:
                break
        return steps

    # --------------------------------------------------------------------------- copies
    def clone(self) -> Game:
        """A deep, independent copy, the play RNG's state included."""
        out = Game.__new__(type(self))
        out._rules = self._rules
        out._players = self._players
        out._seed = self._seed
        out._fast = self._fast
        out._hs = self._hs
        out._hand_index = self._hand_index
        out._totals = list(self._totals)
        out._history = [list(h) for h in self._history]
        out._winners = list(self._winners)
        out._phase = self._phase
        out._once = list(self._once)
        out._twice = list(self._twice)
        out._dealt = self._dealt  # never mutated
        out._kitty = self._kitty  # never mutated
        out._kitty_points = self._kitty_points
        out._passes = [list(p) for p in self._passes]
        out._received = [list(r) for r in self._received]
        out._passer = self._passer
        out._trick = list(self._trick)
        out._leader = self._leader
        out._to_play = self._to_play
        out._led, out._seen, out._dup = self._led, self._seen, self._dup
        out._tricks = list(self._tricks)  # completed tricks are never mutated
        out._broken = self._broken
        out._points = list(self._points)
        out._taken = list(self._taken)
        out._pending_points = self._pending_points
        out._waiting = list(self._waiting)
        out._waiting_points = self._waiting_points
        out._kitty_taker = self._kitty_taker
        out._p_once, out._p_twice = self._p_once, self._p_twice
        out._voids = list(self._voids)
        out._shooter = self._shooter
        out._rng = self._rng.copy()
        out._last_trick = self._last_trick  # never mutated
        out._last_hand = self._last_hand  # replaced, never mutated
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
        # The native module's layout (clients/sim/core/src/obs.rs, docs/SIMULATOR.md), written
        # from the same state in every phase, game over included.
        n = self._players
        f32 = _f32
        out = [0.0] * obs_size(n)
        once, twice = self._once[seat], self._twice[seat]
        for c in _cards_of(once):
            out[c] = 2.0 if twice >> c & 1 else 1.0
        for c in _cards_of(self._p_once):
            out[52 + c] = 1.0
        for c in _cards_of(self._p_twice):
            out[104 + c] = 1.0
        leader = self._leader
        for i, c in enumerate(self._trick):
            r = (leader + i - seat) % n
            out[156 + 52 * r + c] = 1.0
        base = 156 + 52 * n
        target = self._rules.target_score
        hs = self._hs
        for s in range(n):
            r = (s - seat) % n
            out[base + r] = f32(self._taken[s] / 26)
            out[base + n + r] = f32(self._totals[s] / target)
            v = self._voids[s]
            for suit in range(4):
                if v >> suit & 1:
                    out[base + 2 * n + 4 * r + suit] = 1.0
            out[base + 6 * n + r] = f32((self._once[s].bit_count() + self._twice[s].bit_count()) / hs)
        known = base + 7 * n
        for c in self._passes[seat]:
            out[known + c] += 1.0
        for c in self._received[seat]:
            out[known + 52 + c] += 1.0
        if self._kitty_taker >= 0:
            out[known + 104 + (self._kitty_taker - seat) % n] = 1.0
        tail = known + 104 + n
        out[tail + (self._hand_index % 2)] = 1.0
        out[tail + 2 + self._phase] = 1.0
        if self.current_player == seat:
            for a in _cards_of(self.legal_mask()):
                out[tail + 6 + a] = 1.0
        return out

    def __repr__(self) -> str:
        return (
            f"<Game players={self._players} hand={self._hand_index} phase={PHASE_NAMES[self._phase]} "
            f"to_act={self.current_player} totals={self._totals}>"
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
            before = len(g._history)
            g.apply_action(acts[i])
            self._after(i, g, before, rewards, dones)

    def _after(self, i: int, g: Game, before: int, rewards: Any, dones: Any) -> None:
        if rewards is not None:
            row = rewards[i]
            if len(g._history) > before:
                for s, v in enumerate(g._history[-1]):
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
                before = len(g._history)
                action = g._random_action()
                if action >= 0:
                    g.apply_action(action)
                hands += len(g._history) - before
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
    """The conformance outcome of a game record, replayed through this backend (as ``hearts replay``)."""
    from hearts_client.sim._build import replay_outcome

    return replay_outcome(Game, record)
