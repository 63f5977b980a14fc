"""Card vocabulary: suits, ranks, cards and a two-deck card set.

A card is a small integer ``suit * 13 + (rank - 2)`` wrapped in :class:`Card` so that its
``str()`` is its code (``QS``) and it parses back (``Card.parse("QS")``). Cards therefore sort
by suit (C, D, H, S) and then rank (2..A), the order the conformance format uses.

:class:`CardSet` holds up to two copies of each of the 52 cards as two 52-bit integers, "held
at least once" and "held twice", the way python-chess wraps a bitboard in ``SquareSet``.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator
from typing import Final


class Suit(enum.IntEnum):
    """A suit, in the order used for sorting cards: clubs, diamonds, hearts, spades."""

    CLUBS = 0
    DIAMONDS = 1
    HEARTS = 2
    SPADES = 3

    @property
    def letter(self) -> str:
        """The one-letter code of the suit (``C``, ``D``, ``H``, ``S``)."""
        return "CDHS"[self]

    @classmethod
    def parse(cls, letter: str) -> Suit:
        """Parses a one-letter suit code.

        Raises:
            ValueError: if ``letter`` is not one of ``C D H S``.
        """
        index = "CDHS".find(letter)
        if index < 0 or len(letter) != 1:
            raise ValueError(f"unknown suit {letter!r}: expected one of C, D, H, S")
        return cls(index)

    def __str__(self) -> str:
        return self.letter


class Rank(enum.IntEnum):
    """A rank; the value is the rank's strength, 2 (low) to 14 (ace, high)."""

    TWO = 2
    THREE = 3
    FOUR = 4
    FIVE = 5
    SIX = 6
    SEVEN = 7
    EIGHT = 8
    NINE = 9
    TEN = 10
    JACK = 11
    QUEEN = 12
    KING = 13
    ACE = 14

    @property
    def letter(self) -> str:
        """The one-character code of the rank (``2``..``9``, ``T``, ``J``, ``Q``, ``K``, ``A``)."""
        return _RANK_LETTERS[self - 2]

    @classmethod
    def parse(cls, letter: str) -> Rank:
        """Parses a one-character rank code.

        Raises:
            ValueError: if ``letter`` is not a rank code.
        """
        index = _RANK_LETTERS.find(letter)
        if index < 0 or len(letter) != 1:
            raise ValueError(f"unknown rank {letter!r}: expected one of {' '.join(_RANK_LETTERS)}")
        return cls(index + 2)

    def __str__(self) -> str:
        return self.letter


_RANK_LETTERS: Final = "23456789TJQKA"


class Card(int):
    """One of the 52 distinct cards, as the integer ``suit * 13 + (rank - 2)``.

    Use :data:`CARDS` (indexed by that integer) or :meth:`parse` to obtain one;
    every card is a shared instance.
    """

    __slots__ = ()

    @property
    def suit(self) -> Suit:
        """The card's suit."""
        return _SUITS[self // 13]

    @property
    def rank(self) -> Rank:
        """The card's rank."""
        return _RANKS[self % 13]

    @property
    def points(self) -> int:
        """Penalty points: 1 for a heart, 13 for the Black Maria, else 0."""
        return _POINTS[self]

    @property
    def bit(self) -> int:
        """The card's bit in a 52-bit card mask."""
        return 1 << self

    @staticmethod
    def parse(code: str) -> Card:
        """Parses a card code such as ``QS`` or ``TH``.

        Raises:
            ValueError: if ``code`` is not a valid two-character card code.
        """
        card = _BY_CODE.get(code) if isinstance(code, str) else None
        if card is None:
            raise ValueError(f"unknown card code {code!r}: expected rank (2-9 T J Q K A) + suit (C D H S)")
        return card

    def __str__(self) -> str:
        return _CODES[self]

    def __repr__(self) -> str:
        return f"Card.parse({_CODES[self]!r})"

    def __format__(self, spec: str) -> str:
        return format(_CODES[self], spec)


def parse_cards(codes: Iterable[str]) -> tuple[Card, ...]:
    """Parses card codes, in order (one dictionary lookup each).

    Raises:
        ValueError: at the first code that is not a valid two-character card code.
    """
    try:
        return tuple(map(_BY_CODE.__getitem__, codes))
    except (KeyError, TypeError):
        return tuple(Card.parse(code) for code in codes)  # raises for the bad one


_SUITS: Final = tuple(Suit)
_RANKS: Final = tuple(Rank)
_CODES: Final = tuple(r.letter + s.letter for s in Suit for r in Rank)
CARDS: Final[tuple[Card, ...]] = tuple(Card(i) for i in range(52))
_BY_CODE: Final = {str(c): c for c in CARDS}
BLACK_MARIA: Final = Card.parse("QS")
_POINTS: Final = tuple(13 if c == BLACK_MARIA else (1 if c.suit is Suit.HEARTS else 0) for c in CARDS)

#: All 52 bits set.
FULL_MASK: Final = (1 << 52) - 1
#: The 13 bits of each suit, indexed by :class:`Suit`.
SUIT_MASKS: Final[tuple[int, ...]] = tuple(0x1FFF << (13 * s) for s in Suit)
HEARTS_MASK: Final = SUIT_MASKS[Suit.HEARTS]
#: Cards worth points: the hearts and the Black Maria.
POINT_MASK: Final = HEARTS_MASK | BLACK_MARIA.bit


def cards_of_mask(mask: int) -> tuple[Card, ...]:
    """The cards whose bits are set in a 52-bit mask, in card order."""
    out: list[Card] = []
    for suit in range(4):
        sub = (mask >> (13 * suit)) & 0x1FFF
        if sub:
            out.extend(suit_cards(suit, sub))
    return tuple(out)


#: The cards of every (suit, 13-bit rank pattern), built on first use: turning a bitmask into the
#: tuple of legal cards is one lookup on the engine's hot path, and building all 32,768 entries
#: up front would cost every process (each bot is one) 80 ms at import.
_SUIT_CARDS: dict[int, tuple[Card, ...]] = {}


def suit_cards(suit: int, pattern: int) -> tuple[Card, ...]:
    """The cards of ``suit`` whose rank bits are set in the 13-bit ``pattern``."""
    key = suit << 13 | pattern
    cards = _SUIT_CARDS.get(key)
    if cards is None:
        base = suit * 13
        cards = _SUIT_CARDS[key] = tuple(CARDS[base + r] for r in range(13) if pattern >> r & 1)
    return cards


class CardSet:
    """A multiset of cards from two decks: each card is held zero, one or two times.

    Stored as two 52-bit masks, ``once`` (held at least once) and ``twice`` (held twice).
    Iteration yields cards in card order, a card held twice appearing twice.
    """

    __slots__ = ("once", "twice")

    def __init__(self, cards: Iterable[Card] = ()) -> None:
        once = twice = 0
        for card in cards:
            bit = 1 << card
            if twice & bit:
                raise ValueError(f"a third copy of {card} does not exist")
            if once & bit:
                twice |= bit
            else:
                once |= bit
        self.once = once
        self.twice = twice

    @classmethod
    def from_masks(cls, once: int, twice: int) -> CardSet:
        """Builds a set from its two masks (``twice`` must be a subset of ``once``)."""
        out = cls()
        out.once = once
        out.twice = twice
        return out

    @classmethod
    def parse(cls, codes: Iterable[str]) -> CardSet:
        """Builds a set from card codes.

        Raises:
            ValueError: on an unknown code or a third copy of a card.
        """
        return cls(Card.parse(code) for code in codes)

    @classmethod
    def full(cls) -> CardSet:
        """Both decks: every card twice."""
        return cls.from_masks(FULL_MASK, FULL_MASK)

    def copy(self) -> CardSet:
        """An independent copy."""
        return CardSet.from_masks(self.once, self.twice)

    def add(self, card: Card) -> None:
        """Adds one copy of ``card``.

        Raises:
            ValueError: if both copies are already held.
        """
        bit = 1 << card
        if self.twice & bit:
            raise ValueError(f"a third copy of {card} does not exist")
        if self.once & bit:
            self.twice |= bit
        else:
            self.once |= bit

    def remove(self, card: Card) -> None:
        """Removes one copy of ``card``.

        Raises:
            KeyError: if ``card`` is not held.
        """
        bit = 1 << card
        if self.twice & bit:
            self.twice ^= bit
        elif self.once & bit:
            self.once ^= bit
        else:
            raise KeyError(str(card))

    def count(self, card: Card) -> int:
        """How many copies of ``card`` are held: 0, 1 or 2."""
        bit = 1 << card
        return (1 if self.once & bit else 0) + (1 if self.twice & bit else 0)

    @property
    def points(self) -> int:
        """The penalty points of all cards held (1 per heart, 13 per Black Maria)."""
        hearts = (self.once & HEARTS_MASK).bit_count() + (self.twice & HEARTS_MASK).bit_count()
        return hearts + 13 * self.count(BLACK_MARIA)

    def __len__(self) -> int:
        return self.once.bit_count() + self.twice.bit_count()

    def __bool__(self) -> bool:
        return self.once != 0

    def __contains__(self, card: object) -> bool:
        return isinstance(card, int) and 0 <= card < 52 and bool(self.once >> card & 1)

    def __iter__(self) -> Iterator[Card]:
        return iter(self.cards())

    def cards(self) -> tuple[Card, ...]:
        """The cards in card order, a card held twice appearing twice."""
        once, twice = self.once, self.twice
        if not twice:
            return cards_of_mask(once)
        out: list[Card] = []
        for card in cards_of_mask(once):
            out.append(card)
            if twice >> card & 1:
                out.append(card)
        return tuple(out)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CardSet):
            return NotImplemented
        return self.once == other.once and self.twice == other.twice

    def __hash__(self) -> int:
        return hash((self.once, self.twice))

    def __or__(self, other: CardSet) -> CardSet:
        out = self.copy()
        for card in other:
            out.add(card)
        return out

    def __sub__(self, other: CardSet) -> CardSet:
        out = self.copy()
        for card in other:
            if card in out:
                out.remove(card)
        return out

    def codes(self) -> list[str]:
        """The card codes, in card order, repeated cards repeated."""
        return [_CODES[c] for c in self.cards()]

    def __str__(self) -> str:
        return " ".join(self.codes())

    def __repr__(self) -> str:
        return f"CardSet.parse({self.codes()!r})"
