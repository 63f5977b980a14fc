"""Deadlines and faults: asking a seat for a decision, checking its answer, deciding for it.

Each decision may take at most the table's ``decision_ms``; the time a seat spends is also taken
from its per-game time bank, and a request's deadline is the smaller of the two. A seat that is
slow, silent, disconnected, retired or released is decided for by the default rule of
:mod:`hearts_core.fallback`, and (but for a released seat) a fault is recorded. The clock is a
dependency (:mod:`hearts_server.table.clock`).
"""

from __future__ import annotations

import asyncio
import collections
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from hearts_core.cards import Card
from hearts_core.errors import HeartsError
from hearts_core.record import DecisionEntry, FaultEntry
from hearts_core.rules import MoonChoice
from hearts_core.state import DecisionKind, Phase, State
from hearts_core.view import View
from hearts_protocol.values import Answer, RejectionCode
from hearts_protocol.values import FaultKind as FaultKind  # why the referee decided for a seat
from hearts_server import messages as msg
from hearts_server.logs import get_logger
from hearts_server.table.broadcast import Broadcaster
from hearts_server.table.clock import Clock
from hearts_server.table.gamelog import GameLog
from hearts_server.table.script import SCRIPTED
from hearts_server.table.settings import TableSettings
from hearts_server.table.streams import Connection, FloodGate

log = get_logger(__name__)

T = TypeVar("T")

#: How long after a disconnection decisions still wait (each at most its deadline) for the bot.
RECONNECT_GRACE_S = 5.0


#: ``by_referee`` of a decision made for a seat retired after too many faults ...
RETIRED = "retired"
#: ... and for a seat the organiser released (nobody plays it; not a fault).
RELEASED = "released"

#: What a wait that ran out returns instead of an answer.
_NOT_ANSWERED = object()


class Rejected(Exception):
    """An answer the referee does not accept; sent back as a Rejection."""

    def __init__(self, code: RejectionCode, reason: str, request_id: int = 0) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason
        self.request_id = request_id


@dataclass(slots=True)
class Pending(Generic[T]):
    """An open decision request."""

    request_id: int
    kind: DecisionKind
    validate: Callable[[Answer], T]
    future: asyncio.Future[T]
    started: float
    budget_ms: float
    #: Set with the answer: the seat's SDK chose it for the bot (``Decision.bot_error``).
    bot_error: bool = False


@dataclass(slots=True)
class Seat:
    """A seat at the table, its bot's connection and its standing in the current game."""

    index: int
    name: str
    token: str
    flood: FloodGate
    connection: Connection | None = None
    ever_joined: bool = False
    #: The name the seat's bot gave itself in its latest Join (``Join.bot_name``, cleaned), or
    #: "": self-declared, logged and recorded beside the organiser's ``name``, never instead.
    declared_name: str = ""
    #: How many of the table's finished games this seat has been told the end of.
    results_seen: int = 0
    released: bool = False
    disconnected_at: float | None = None
    faults: int = 0
    retired: bool = False
    bank_ms: float = 0.0
    answered: int = 0
    by_referee: int = 0
    bot_errors: int = 0
    pending: Pending[object] | None = None
    #: The organiser's seed for this seat's bot (GameStarted.bot_seed; set with BindSeat).
    bot_seed: str = ""
    feed: msg.SeatFeed = field(default_factory=msg.SeatFeed)

    def new_game(self, time_bank_ms: int) -> None:
        """Resets what is counted per game."""
        self.faults = 0
        self.retired = False
        self.bank_ms = float(time_bank_ms)
        self.answered = 0
        self.by_referee = 0
        self.bot_errors = 0


@dataclass(frozen=True, slots=True)
class Outcome(Generic[T]):
    """A decision made: the answer, and why the referee made it (None: the seat answered)."""

    answer: T
    by_referee: str | None


#: Decisions the referee makes at once (for absent, retired or released seats) per turn of the
#: event loop, server-wide: however many tables nobody plays, they cost each turn only this much
#: (about 60 µs each), and the tables whose bots answer are served between them.
INSTANT_PER_TURN = 8


class Pacer:
    """Lets at most ``per_turn`` waiters go on per turn of the event loop, in arrival order."""

    def __init__(self, loop: asyncio.AbstractEventLoop, per_turn: int = INSTANT_PER_TURN) -> None:
        self.loop = loop
        self.per_turn = per_turn
        self.waiting: collections.deque[asyncio.Future[None]] = collections.deque()
        self.scheduled = False

    async def turn(self) -> None:
        """Waits for this caller's turn."""
        future: asyncio.Future[None] = self.loop.create_future()
        self.waiting.append(future)
        if not self.scheduled:
            self.scheduled = True
            self.loop.call_soon(self._release)
        await future

    def _release(self) -> None:
        released = 0
        while self.waiting and released < self.per_turn:
            future = self.waiting.popleft()
            if not future.done():  # a cancelled table's waiter is skipped
                future.set_result(None)
                released += 1
        if self.waiting:
            self.loop.call_soon(self._release)
        else:
            self.scheduled = False


_pacers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Pacer] = weakref.WeakKeyDictionary()


async def pace() -> None:
    """Waits for the turn of one decision the referee makes at once (:class:`Pacer`, one per
    event loop: every table of a server shares it)."""
    loop = asyncio.get_running_loop()
    pacer = _pacers.get(loop)
    if pacer is None:
        pacer = _pacers[loop] = Pacer(loop)
    await pacer.turn()


class Decisions:
    """Asks seats for decisions and takes their answers, for one table.

    Args:
        settings: The table's settings (limits).
        seats: The table's seats.
        clock: The referee's clock.
        broadcaster: Sends requests, rejections and fault events.
    """

    def __init__(
        self, settings: TableSettings, seats: Sequence[Seat], clock: Clock, broadcaster: Broadcaster
    ) -> None:
        self.settings = settings
        self.seats = seats
        self.clock = clock
        self.broadcaster = broadcaster
        self.log = GameLog()
        self.state: State | None = None
        self._game_clock = 0.0
        self._next_request_id = 0
        self._log: Any = log

    @property
    def last_request_id(self) -> int:
        """The id of the latest request of this table (0: none yet)."""
        return self._next_request_id

    def skip_request_ids(self, floor: int) -> None:
        """Makes every later request id greater than ``floor``.

        A session's stream (:mod:`hearts_server.sessions`) comes to this table from another one:
        its ids go on increasing, and no answer to the other table's requests can match here.
        """
        self._next_request_id = max(self._next_request_id, floor)

    def new_game(self, state: State, bound_log: Any) -> None:
        """Starts the bookkeeping of a new game (``bound_log``: the table's logger)."""
        self.state = state
        self.log = GameLog()
        self._game_clock = self.clock.now()
        self._log = bound_log

    # -------------------------------------------------------------- asking
    async def decide(
        self,
        seat: Seat,
        kind: DecisionKind,
        view: Callable[[], View],
        validate: Callable[[Answer], T],
        fallback: Callable[[], T],
    ) -> Outcome[T]:
        """Asks ``seat`` to decide; the referee decides by ``fallback`` when the seat cannot."""
        state = self.state
        assert state is not None
        due = self.clock.now()
        slot = self.log.reserve()
        hand, play = state.hand_index, (len(state.plays) if kind is DecisionKind.PLAY else None)
        at = round((due - self._game_clock) * 1000, 3)

        def done(
            answer: T,
            by_referee: str | None,
            ms: float,
            referee_ms: float | None = None,
            bot_error: bool = False,
        ) -> Outcome[T]:
            self.log.fill(
                slot,
                DecisionEntry(
                    seat=seat.index,
                    hand=hand,
                    kind=kind.value,
                    at=at,
                    ms=round(ms, 3),
                    play=play,
                    by_referee=by_referee,
                    referee_ms=referee_ms,
                    bot_error=bot_error,
                ),
            )
            if by_referee is None:
                seat.answered += 1
                if bot_error:
                    seat.bot_errors += 1
            else:
                seat.by_referee += 1
            return Outcome(answer, by_referee)

        instant = self._instant(seat)
        if instant is not None:
            # Decided at once, without a seat to wait for: wait for this decision's turn among
            # every such decision of the server (a few per turn of the event loop), else tables
            # nobody plays would hold the event loop and every other table's decisions wait.
            await pace()
            return done(fallback(), instant, 0)
        budget = min(float(self.settings.policy.decision_ms), seat.bank_ms)
        self._next_request_id += 1
        request_id = self._next_request_id
        request = msg.decision_request(request_id, kind, view(), int(budget), int(seat.bank_ms))
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        # The seat's time starts once its request is written to its stream (the servicer reports
        # the write); the referee's own work before that is recorded apart (referee_ms) and not
        # charged to the seat. With no stream to write to, it starts when the request is queued.
        started = self.clock.now()
        pending: Pending[T] = Pending(request_id, kind, validate, future, started, budget)
        seat.pending = pending  # type: ignore[assignment]
        conn = seat.connection
        self.broadcaster.send(seat, seat.feed.request(request, conn is not None and conn.events_in_request))

        def written() -> None:
            if seat.pending is pending:
                pending.started = self.clock.now()

        if seat.connection is not None:
            seat.connection.on_written(written)
        answer: object
        try:
            answer = await self.clock.wait_for(asyncio.shield(future), budget / 1000)
        except TimeoutError:
            answer = await self._wait_rest(pending, future, budget)
        finally:
            seat.pending = None
        started = pending.started
        referee_ms = round((started - due) * 1000, 3)
        if answer is _NOT_ANSWERED:
            seat.bank_ms = max(0.0, seat.bank_ms - budget)
            if seat.connection is None:
                fault, detail = FaultKind.DISCONNECTED, f"not reconnected within {int(budget)} ms"
            else:
                fault, detail = FaultKind.TIMEOUT, f"no legal answer within {int(budget)} ms"
            self.fault(seat, fault, detail)
            return done(fallback(), fault.value, budget, referee_ms)
        spent = min(budget, (self.clock.now() - started) * 1000)
        seat.bank_ms = max(0.0, seat.bank_ms - spent)
        if pending.bot_error:
            self._log.warning("seat_bot_error", seat=seat.index, bot=seat.name, request_id=request_id)
        return done(answer, None, spent, referee_ms, pending.bot_error)  # type: ignore[arg-type]

    def _instant(self, seat: Seat) -> str | None:
        """Why the referee decides for ``seat`` at once (faulting it where that is a fault), or
        None when the seat is asked."""
        if seat.released:
            return RELEASED
        if seat.retired:
            return RETIRED
        if min(float(self.settings.policy.decision_ms), seat.bank_ms) < 1:
            self.fault(seat, FaultKind.TIME_BANK_EXHAUSTED, "the seat's time bank is used up")
            return FaultKind.TIME_BANK_EXHAUSTED.value
        if seat.connection is None and not self._may_reconnect(seat):
            self.fault(seat, FaultKind.DISCONNECTED, "the seat was not connected")
            return FaultKind.DISCONNECTED.value
        return None

    async def _wait_rest(self, pending: Pending[T], future: asyncio.Future[T], budget: float) -> object:
        """After the first wait ran out: waits what is left of the budget since the request was
        written (when it was written later than queued); the answer, or _NOT_ANSWERED."""
        while True:
            left = budget / 1000 - (self.clock.now() - pending.started)
            if left <= 0.0005:
                return _NOT_ANSWERED
            try:
                return await self.clock.wait_for(asyncio.shield(future), left)
            except TimeoutError:
                continue

    def _may_reconnect(self, seat: Seat) -> bool:
        """Whether a disconnected seat lost its stream recently enough to wait for it.

        Within RECONNECT_GRACE_S of a disconnection a decision is sent on reconnection and waits
        its usual deadline; after that the referee decides for the seat at once.
        """
        return (
            seat.disconnected_at is not None and self.clock.now() - seat.disconnected_at < RECONNECT_GRACE_S
        )

    def resend(self, seat: Seat, view: View) -> None:
        """Sends a reconnected seat its open request again, with the time it has left."""
        pending = seat.pending
        if pending is None or pending.future.done() or seat.connection is None:
            return
        spent = (self.clock.now() - pending.started) * 1000
        seat.connection.send(
            msg.decision_request(
                pending.request_id, pending.kind, view, int(pending.budget_ms - spent), int(seat.bank_ms)
            )
        )

    def scripted(self, seat: Seat, kind: DecisionKind) -> None:
        """Records a decision the game's script made for ``seat`` (:mod:`.script`; not a fault)."""
        state = self.state
        assert state is not None
        at = round((self.clock.now() - self._game_clock) * 1000, 3)
        slot = self.log.reserve()
        self.log.fill(slot, DecisionEntry(seat.index, state.hand_index, kind.value, at, by_referee=SCRIPTED))
        seat.by_referee += 1

    # -------------------------------------------------------------- faults
    def fault(self, seat: Seat, kind: FaultKind, detail: str) -> None:
        """Records a fault (retiring the seat at ``max_faults``) and announces it."""
        state = self.state
        seat.faults += 1
        newly_retired = not seat.retired and seat.faults >= self.settings.policy.max_faults
        if newly_retired:
            seat.retired = True
        hand = play = None
        if state is not None:
            hand = state.hand_index
            if state.phase is Phase.PLAYING:
                play = len(state.plays)
        self.log.fault(FaultEntry(seat.index, kind.value, detail, hand, play, newly_retired))
        self._log.warning(
            "seat_fault", seat=seat.index, bot=seat.name, kind=kind.value, detail=detail, retired=seat.retired
        )
        self.broadcaster.publish(msg.seat_faulted(seat.index, kind, detail, seat.faults, newly_retired))

    # -------------------------------------------------------------- answers
    def answer(self, seat: Seat, answer: Answer) -> None:
        """Applies a seat's answer to its open request.

        Raises:
            Rejected: with the code and reason to send back.
        """
        pending = seat.pending
        if pending is None or pending.future.done():
            raise Rejected(
                RejectionCode.NOT_YOUR_TURN, "no decision is open for this seat", answer.request_id
            )
        if answer.request_id != pending.request_id:
            raise Rejected(
                RejectionCode.STALE_REQUEST,
                f"request {answer.request_id} is not open; the open request is {pending.request_id}",
                answer.request_id,
            )
        try:
            checked = pending.validate(answer)
        except Rejected as exc:
            exc.request_id = answer.request_id
            raise
        pending.bot_error = answer.bot_error
        pending.future.set_result(checked)

    def reject(self, seat: Seat, rejected: Rejected) -> bool:
        """Sends a rejection, drawing on the seat's flood allowance; False when it is exhausted.

        A seat that exhausts it is faulted and its stream closed with RESOURCE_EXHAUSTED.
        """
        conn = seat.connection
        if conn is None:
            return False
        if not seat.flood.allow(self.clock.now()):
            self.fault(seat, FaultKind.FLOOD, "too many rejected messages")
            conn.close(
                "too many rejected messages: the stream was closed; reconnect and answer only requests"
            )
            return False
        conn.send(msg.rejection(rejected.request_id, rejected.code, rejected.reason))
        return True

    # -------------------------------------------------------------- validators
    def validate_pass(self, seat: int) -> Callable[[Answer], list[Card]]:
        """Checks a pass answer against the true state."""

        def validate(answer: Answer) -> list[Card]:
            if answer.kind is not DecisionKind.PASS:
                raise Rejected(RejectionCode.WRONG_ANSWER, "this request asks for pass_cards")
            cards = parse_cards(answer.cards)
            assert self.state is not None
            try:
                self.state.check_pass(seat, cards)
            except HeartsError as exc:
                raise rule_broken(exc) from None
            return cards

        return validate

    def validate_play(self, seat: int) -> Callable[[Answer], Card]:
        """Checks a play answer against the true state."""

        def validate(answer: Answer) -> Card:
            if answer.kind is not DecisionKind.PLAY:
                raise Rejected(RejectionCode.WRONG_ANSWER, "this request asks for play_card")
            (card,) = parse_cards(answer.cards[:1] or ("",))  # none given: UNKNOWN_CARD, as on the wire
            assert self.state is not None
            try:
                self.state.check_play(card, seat)
            except HeartsError as exc:
                raise rule_broken(exc) from None
            return card

        return validate

    @staticmethod
    def validate_moon(answer: Answer) -> MoonChoice:
        """Checks a moon answer."""
        if answer.kind is not DecisionKind.MOON:
            raise Rejected(RejectionCode.WRONG_ANSWER, "this request asks for choose_moon")
        if answer.moon is None:
            raise Rejected(
                RejectionCode.BAD_MOON_CHOICE,
                "choose MOON_CHOICE_SELF_MINUS_26 or MOON_CHOICE_OTHERS_PLUS_26",
            )
        return answer.moon


def rule_broken(error: HeartsError) -> Rejected:
    """The rejection of an answer the rules forbid: the rule's own conformance code.

    Raises:
        ValueError: for a rule error that no answer of a seat can cause (it is not a
            rejection code of the protocol).
    """
    return Rejected(RejectionCode(error.code), error.message)


def parse_cards(codes: Sequence[str]) -> list[Card]:
    """Card codes from an answer.

    Raises:
        Rejected: UNKNOWN_CARD for a code that is not a card.
    """
    try:
        return [Card.parse(code) for code in codes]
    except ValueError as exc:
        raise Rejected(RejectionCode.UNKNOWN_CARD, str(exc)) from None
