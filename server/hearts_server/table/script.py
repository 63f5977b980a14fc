"""Scripted games, for the bot test kit only: chosen deals and passes, a legal answer refused on
purpose, a stream closed on purpose, and a note of what each seat did.

A referee looks every game up by its deal seed in the scripts it was made with
(``make_server(scripts=...)``): only the Python process that starts a referee can hand it one.
Nothing reaches a script over the wire (no ``TableConfig`` field, no admin call) or from a file
(no key of a tournament's or a league's config), so a tournament's, a league's or a remote
organiser's game always deals from its seed. A scripted game's record keeps the deals it
played: ``hearts replay`` finds that they are not its seed's and says so, so a scripted game
never passes for a real one.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from hearts_core.cards import Card
from hearts_core.state import DecisionKind
from hearts_protocol.values import RejectionCode

#: ``by_referee`` of a decision the script made for a seat (a scripted pass; not a fault).
SCRIPTED = "scripted"

#: The code a refused legal answer is rejected with: the one a referee sends for the commonest
#: illegal answer of that kind (a rule code: the request stays open, as for any illegal answer).
REFUSAL_CODES: Mapping[DecisionKind, RejectionCode] = {
    DecisionKind.PASS: RejectionCode.PASS_NOT_IN_HAND,
    DecisionKind.PLAY: RejectionCode.NOT_IN_HAND,
    DecisionKind.MOON: RejectionCode.BAD_MOON_CHOICE,
}


@dataclass(frozen=True, slots=True)
class ScriptedHand:
    """One hand dealt as chosen.

    Attributes:
        deal: Each seat's cards, as dealt.
        kitty: The kitty.
        passes: Every seat's three passed cards, passed by the referee for it (no seat is asked
            to pass; the record notes each pass ``by_referee: "scripted"``), or None: every
            seat passes its own.
    """

    deal: tuple[tuple[Card, ...], ...]
    kitty: tuple[Card, ...]
    passes: tuple[tuple[Card, ...], ...] | None = None


class NoteKind(enum.StrEnum):
    """What a :class:`ScriptNote` tells."""

    #: A stream attached to the seat (its first join, or a reconnection).
    JOINED = "joined"
    #: The referee sent the seat a rejection (of an illegal answer, or a refused legal one).
    REJECTED = "rejected"
    #: The script refused a legal answer of the seat (its rejection follows).
    REFUSED = "refused"
    #: The script closed the seat's stream.
    CUT = "cut"


@dataclass(frozen=True, slots=True)
class ScriptNote:
    """Something a seat did or met, noted for whoever scripted the game.

    Attributes:
        kind: What happened.
        seat: The seat.
        at: Seconds since the table was created, on the referee's clock.
        request_id: The request it concerns (a rejection's, a refusal's), or 0.
        code: A rejection's code.
        reason: A rejection's reason.
        reconnect: For ``JOINED``: the seat had joined before.
    """

    kind: NoteKind
    seat: int
    at: float
    request_id: int = 0
    code: str = ""
    reason: str = ""
    reconnect: bool = False


@dataclass(frozen=True, slots=True)
class TableScript:
    """What the referee does on purpose in one game.

    Attributes:
        hands: Hand ``k``'s deal (and passes), for the first hands of the game; later hands
            are dealt from the seed.
        refuse: ``(seat, n)``: the first legal answer to the seat's ``n``-th request of the
            game (counting from 1) is rejected with :data:`REFUSAL_CODES` and
            ``refusal_reason``; the request stays open, as after an illegal answer.
        cut: ``(seat, n)``: once the seat has answered its ``n``-th request, its stream is closed
            with ``UNAVAILABLE`` and ``cut_reason``, as a lost connection ends it.
        refusal_reason: The reason a refused answer is given.
        cut_reason: The reason a closed stream is given.
        note: Called with every :class:`ScriptNote` of the game.
    """

    hands: tuple[ScriptedHand, ...] = ()
    refuse: frozenset[tuple[int, int]] = frozenset()
    cut: frozenset[tuple[int, int]] = frozenset()
    refusal_reason: str = "this answer is refused on purpose: answer the request again"
    cut_reason: str = "the stream was closed on purpose: reconnect with the same token"
    note: Callable[[ScriptNote], None] | None = None

    def hand(self, index: int) -> ScriptedHand | None:
        """The scripted hand ``index``, or None (dealt from the seed)."""
        return self.hands[index] if index < len(self.hands) else None


#: A referee's scripts, by the deal seed of the game they script.
Scripts = Mapping[str, TableScript]
