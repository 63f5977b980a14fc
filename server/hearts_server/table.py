"""The live referee of one table: seats, streams, deadlines, faults and records.

A :class:`Table` plays one or more games between the same seats. It owns each game's
:class:`State`; seats only ever receive messages built by :mod:`hearts_server.messages` from
their own :class:`View`. Everything a bot sends is checked against the true state, and a bot
that is slow, silent, disconnected, flooding or wrong never holds the others up for more than
one decision limit: the referee decides for it by the default rule of
:mod:`hearts_server.fallback` and records a fault.

Timing: each decision may take at most ``decision_ms``; the time a seat spends is also taken
from its per-game time bank, and a request's deadline is the smaller of the two. The referee's
own clock (``loop.time()``) decides.
"""

from __future__ import annotations

import asyncio
import enum
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from google.protobuf.message import DecodeError

from cancellation_hearts.v1 import game_pb2 as pb
from cancellation_hearts.v1 import referee_service_pb2 as rpb
from hearts_server import messages as msg
from hearts_server.cards import Card
from hearts_server.deal import deal_hand, derive_seed, new_seed, seed_commitment
from hearts_server.errors import BadMoonChoice, HeartsError
from hearts_server.fallback import default_moon, default_pass, default_play
from hearts_server.logs import get_logger
from hearts_server.record import record_json, state_to_record, write_text_durably
from hearts_server.rules import MoonChoice, Rules
from hearts_server.state import Phase, State
from hearts_server.view import build_view

log = get_logger(__name__)

DEFAULT_DECISION_MS = 1000
DEFAULT_TIME_BANK_MS = 60_000
DEFAULT_MAX_FAULTS = 5
DEFAULT_JOIN_TIMEOUT_MS = 60_000
#: How long after a disconnection decisions still wait (each at most its deadline) for the bot.
RECONNECT_GRACE_S = 5.0
#: Rejected messages a seat may send: a burst of this many ...
FLOOD_BURST = 100
#: ... refilled at this many per second. Past it the stream is closed (accepted answers are free).
FLOOD_RATE = 50.0


class TableStatus(enum.StrEnum):
    """Where a table stands."""

    WAITING = "waiting"
    PLAYING = "playing"
    DONE = "done"
    ABORTED = "aborted"


class FaultKind(enum.StrEnum):
    """Why the referee decided for a seat."""

    TIMEOUT = "timeout"
    DISCONNECTED = "disconnected"
    TIME_BANK_EXHAUSTED = "time_bank_exhausted"
    FLOOD = "flood"


FAULT_TO_PB = {
    FaultKind.TIMEOUT: pb.FAULT_KIND_TIMEOUT,
    FaultKind.DISCONNECTED: pb.FAULT_KIND_DISCONNECTED,
    FaultKind.TIME_BANK_EXHAUSTED: pb.FAULT_KIND_TIME_BANK_EXHAUSTED,
    FaultKind.FLOOD: pb.FAULT_KIND_FLOOD,
}


@dataclass(frozen=True, slots=True)
class TableSettings:
    """How a table plays.

    Attributes:
        rules: The rules of every game.
        bot_names: The name shown for each seat.
        games: Games played in a row.
        seed: The first game's deal seed, chosen by the organiser; game ``k`` > 0 uses
            ``derive_seed(seed, "game", k)``. Empty (and no ``game_seeds``): every game gets a
            fresh :func:`new_seed`, independent of the others.
        game_seeds: Each game's deal seed (exactly ``games`` of them); overrides ``seed``.
        reveal_seed: Whether GameCompleted tells the seats the seed (else only the record does).
        decision_ms: Limit for any single decision.
        time_bank_ms: Total thinking time per seat per game.
        max_faults: Faults that retire a seat for the rest of a game.
        join_timeout_ms: How long to wait for every seat before starting anyway.
        label: Free text stored in the records (e.g. a tournament's game key).
    """

    rules: Rules
    bot_names: tuple[str, ...]
    games: int = 1
    seed: str = ""
    decision_ms: int = DEFAULT_DECISION_MS
    time_bank_ms: int = DEFAULT_TIME_BANK_MS
    max_faults: int = DEFAULT_MAX_FAULTS
    join_timeout_ms: int = DEFAULT_JOIN_TIMEOUT_MS
    label: str = ""
    game_seeds: tuple[str, ...] = ()
    reveal_seed: bool = False

    def __post_init__(self) -> None:
        if len(self.bot_names) != self.rules.players:
            raise ValueError(f"{self.rules.players} bot names needed, {len(self.bot_names)} given")
        if self.games < 1:
            raise ValueError("a table plays at least one game")
        if self.decision_ms < 1 or self.time_bank_ms < 0 or self.max_faults < 1:
            raise ValueError("decision_ms and max_faults must be positive, time_bank_ms not negative")
        if self.game_seeds:
            if len(self.game_seeds) != self.games or not all(self.game_seeds):
                raise ValueError(f"game_seeds needs exactly {self.games} non-empty seeds, one per game")
        elif self.seed:
            if self.reveal_seed and self.games > 1:
                raise ValueError(
                    "reveal_seed with a chosen seed and several games would reveal the later games' "
                    "deals: give game_seeds (one per game) instead"
                )
        else:
            # No seed chosen: each game's is drawn now, independently, so that revealing one
            # (in its record or its GameCompleted) tells nothing about the next.
            object.__setattr__(self, "game_seeds", tuple(new_seed() for _ in range(self.games)))

    def game_seed(self, game_number: int) -> str:
        """The deal seed of game ``game_number`` of the table."""
        if self.game_seeds:
            return self.game_seeds[game_number]
        return self.seed if game_number == 0 else derive_seed(self.seed, "game", game_number)


class Rejected(Exception):
    """An answer the referee does not accept; sent back as a Rejection."""

    def __init__(self, code: str, reason: str, request_id: int = 0) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason
        self.request_id = request_id


class AlreadyConnected(Exception):
    """A second live stream for the same seat."""


class Connection:
    """One live stream of a seat: the messages waiting to be written to it."""

    def __init__(self) -> None:
        # Serialized PlayResponse messages: a broadcast is serialized once for every seat.
        self.outbox: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.close_reason: str | None = None

    def send(self, message: rpb.PlayResponse | bytes) -> None:
        """Queues a message (or its serialized form) for the stream."""
        self.outbox.put_nowait(message if isinstance(message, bytes) else message.SerializeToString())

    def close(self, reason: str | None = None) -> None:
        """Ends the stream: OK if ``reason`` is None, else RESOURCE_EXHAUSTED with the reason."""
        if self.close_reason is None:
            self.close_reason = reason
        self.outbox.put_nowait(None)


@dataclass(slots=True)
class Pending:
    """An open decision request."""

    request_id: int
    kind: rpb.DecisionKind.ValueType
    validate: Callable[[rpb.Decision], Any]
    future: asyncio.Future[Any]
    started: float
    budget_ms: float


@dataclass(slots=True)
class Seat:
    """A seat at the table and its bot's connection."""

    index: int
    name: str
    token: str
    connection: Connection | None = None
    ever_joined: bool = False
    disconnected_at: float | None = None
    faults: int = 0
    retired: bool = False
    bank_ms: float = 0.0
    pending: Pending | None = None
    tokens: float = FLOOD_BURST
    refilled: float = field(default_factory=time.monotonic)
    feed: msg.SeatFeed = field(default_factory=msg.SeatFeed)


@dataclass(slots=True)
class FinishedGame:
    """A finished game: its result message and its record (also as JSON text, serialized once)."""

    game_id: str
    result: pb.GameCompleted
    record: dict[str, Any]
    record_json: str
    path: Path | None


def places(totals: Sequence[int]) -> list[int]:
    """Finishing places, 1 = lowest total; tied totals share the better place."""
    return [1 + sum(1 for other in totals if other < t) for t in totals]


class Table:
    """One table: its seats, its games, and the asyncio task that referees them.

    Args:
        table_id: The table's id.
        settings: How it plays.
        record_dir: Where each finished game's record is written, or None to keep it in memory.
    """

    def __init__(self, table_id: str, settings: TableSettings, record_dir: Path | None) -> None:
        self.table_id = table_id
        self.settings = settings
        self.rules = settings.rules
        self.record_dir = record_dir
        self.seats = [
            Seat(index=i, name=name, token=secrets.token_hex(24))  # hex: never starts with "-"
            for i, name in enumerate(settings.bot_names)
        ]
        self.status = TableStatus.WAITING
        self.finished: list[FinishedGame] = []
        self.done = asyncio.Event()
        self.public_log: list[rpb.Event] = []
        self.watchers: list[asyncio.Queue[rpb.Event | None]] = []
        self.state: State | None = None
        self.game_id = ""
        self.game_number = 0
        self._all_joined = asyncio.Event()
        self._next_request_id = 0
        self._decisions: list[dict[str, Any]] = []
        self._game_clock = 0.0
        self._faults: list[dict[str, Any]] = []
        self._game_started: pb.GameStarted | None = None
        self._hand_events: list[pb.HandCompleted] = []
        self._log = log.bind(table_id=table_id)

    # ------------------------------------------------------------------ connections
    def attach(self, seat_index: int) -> Connection:
        """Attaches a new stream to a seat and brings it up to date.

        Raises:
            AlreadyConnected: if the seat already has a live stream.
        """
        seat = self.seats[seat_index]
        if seat.connection is not None:
            raise AlreadyConnected(f"seat {seat_index} already has a live stream")
        conn = Connection()
        seat.connection = conn
        seat.feed.held.clear()  # a (re)joining seat is brought up to date by a snapshot
        reconnect = seat.ever_joined
        seat.ever_joined = True
        self._log.info("seat_connected", seat=seat_index, bot=seat.name, reconnect=reconnect)
        if self.state is not None and self._game_started is not None:
            self._send_catch_up(seat)
        if all(s.ever_joined for s in self.seats):
            self._all_joined.set()
        return conn

    def detach(self, seat_index: int, conn: Connection) -> None:
        """Detaches a stream that ended.

        An open decision keeps its deadline: a bot that reconnects in time gets the request
        again and may still answer it.
        """
        seat = self.seats[seat_index]
        if seat.connection is not conn:
            return
        seat.connection = None
        seat.disconnected_at = time.monotonic()
        self._log.info("seat_disconnected", seat=seat_index, bot=seat.name)

    def _send_catch_up(self, seat: Seat) -> None:
        state = self.state
        assert state is not None and self._game_started is not None and seat.connection is not None
        started = pb.GameStarted()
        started.CopyFrom(self._game_started)
        started.your_seat = seat.index
        seat.connection.send(rpb.PlayResponse(event=rpb.Event(game_started=started)))
        view = build_view(state, seat.index)
        seat.connection.send(
            rpb.PlayResponse(snapshot=rpb.Snapshot(view=msg.view_pb(view), hands=self._hand_events))
        )
        pending = seat.pending
        if pending is not None and not pending.future.done():
            loop = asyncio.get_running_loop()
            spent = (loop.time() - pending.started) * 1000
            seat.connection.send(
                msg.decision_request(
                    pending.request_id,
                    pending.kind,
                    view,
                    int(pending.budget_ms - spent),
                    int(seat.bank_ms),
                )
            )

    def on_message(self, seat_index: int, raw: bytes) -> bool:
        """Handles one message a seat sent. Returns False when the stream must be closed.

        An accepted answer is always welcome. Anything rejected draws on the seat's flood
        allowance (a burst of FLOOD_BURST, refilled at FLOOD_RATE per second); a seat that
        exhausts it is faulted and its stream closed with RESOURCE_EXHAUSTED.
        """
        seat = self.seats[seat_index]
        conn = seat.connection
        if conn is None:
            return False
        try:
            self._accept(seat, raw)
        except Rejected as exc:
            now = time.monotonic()
            seat.tokens = min(FLOOD_BURST, seat.tokens + (now - seat.refilled) * FLOOD_RATE)
            seat.refilled = now
            if seat.tokens < 1:
                self._record_fault(seat, FaultKind.FLOOD, "too many rejected messages")
                conn.close(
                    "too many rejected messages: the stream was closed; reconnect and answer only requests"
                )
                return False
            seat.tokens -= 1
            conn.send(msg.rejection(exc.request_id, exc.code, exc.reason))
        return True

    def _accept(self, seat: Seat, raw: bytes) -> None:
        """Applies a seat's answer to its open request.

        Raises:
            Rejected: with the code and reason to send back.
        """
        try:
            request = rpb.PlayRequest.FromString(raw)
        except DecodeError:
            raise Rejected("MALFORMED", "the message is not a valid PlayRequest") from None
        if request.WhichOneof("message") != "decision":
            raise Rejected("UNEXPECTED", "only decisions are expected after the join")
        decision = request.decision
        pending = seat.pending
        if pending is None or pending.future.done():
            raise Rejected("NOT_YOUR_TURN", "no decision is open for this seat", decision.request_id)
        if decision.request_id != pending.request_id:
            raise Rejected(
                "STALE_REQUEST",
                f"request {decision.request_id} is not open; the open request is {pending.request_id}",
                decision.request_id,
            )
        try:
            answer = pending.validate(decision)
        except Rejected as exc:
            exc.request_id = decision.request_id
            raise
        pending.future.set_result(answer)

    # ------------------------------------------------------------------ sending
    def _send(self, seat: Seat, messages: list[rpb.PlayResponse]) -> None:
        if seat.connection is not None:
            for message in messages:
                seat.connection.send(message)

    def _publish(self, public: rpb.Event, per_seat: Callable[[int], rpb.Event] | None = None) -> None:
        """Sends an event to every seat (``per_seat`` when seats differ) and to spectators."""
        for seat in self.seats:
            self._send(seat, seat.feed.event(per_seat(seat.index) if per_seat else public))
        self.public_log.append(public)
        for queue in self.watchers:
            queue.put_nowait(public)

    # ------------------------------------------------------------------ decisions
    async def _decide(
        self,
        seat: Seat,
        kind: rpb.DecisionKind.ValueType,
        validate: Callable[[rpb.Decision], Any],
        fallback: Callable[[], Any],
    ) -> tuple[Any, bool]:
        """Asks a seat to decide. Returns the answer and whether the referee decided instead."""
        state = self.state
        assert state is not None
        loop = asyncio.get_running_loop()
        entry: dict[str, Any] = {
            "seat": seat.index,
            "hand": state.hand_index,
            "kind": _KIND_NAMES[kind],
            # When the decision fell due, in ms since the game started (the referee's clock).
            "at": round((loop.time() - self._game_clock) * 1000, 3),
        }
        if kind == rpb.DECISION_KIND_PLAY:
            entry["play"] = len(state.plays)
        self._decisions.append(entry)
        if seat.retired:
            entry.update(ms=0, by_referee="retired")
            return fallback(), True
        budget = min(float(self.settings.decision_ms), seat.bank_ms)
        if budget < 1:
            self._record_fault(seat, FaultKind.TIME_BANK_EXHAUSTED, "the seat's time bank is used up")
            entry.update(ms=0, by_referee=FaultKind.TIME_BANK_EXHAUSTED.value)
            return fallback(), True
        if seat.connection is None and not self._may_reconnect(seat):
            self._record_fault(seat, FaultKind.DISCONNECTED, "the seat was not connected")
            entry.update(ms=0, by_referee=FaultKind.DISCONNECTED.value)
            return fallback(), True
        self._next_request_id += 1
        pending = Pending(
            request_id=self._next_request_id,
            kind=kind,
            validate=validate,
            future=loop.create_future(),
            started=loop.time(),
            budget_ms=budget,
        )
        seat.pending = pending
        view = build_view(state, seat.index)
        request = msg.decision_request(pending.request_id, kind, view, int(budget), int(seat.bank_ms))
        self._send(seat, seat.feed.request(request))
        try:
            answer = await asyncio.wait_for(pending.future, budget / 1000)
        except TimeoutError:
            seat.bank_ms = max(0.0, seat.bank_ms - budget)
            if seat.connection is None:
                fault, detail = FaultKind.DISCONNECTED, f"not reconnected within {int(budget)} ms"
            else:
                fault, detail = FaultKind.TIMEOUT, f"no legal answer within {int(budget)} ms"
            entry.update(ms=round(budget, 3), by_referee=fault.value)
            self._record_fault(seat, fault, detail)
            return fallback(), True
        finally:
            seat.pending = None
        spent = (loop.time() - pending.started) * 1000
        seat.bank_ms = max(0.0, seat.bank_ms - spent)
        entry["ms"] = round(spent, 3)
        return answer, False

    @staticmethod
    def _may_reconnect(seat: Seat) -> bool:
        """Whether a disconnected seat lost its stream recently enough to wait for it.

        Within RECONNECT_GRACE_S of a disconnection a decision is sent on reconnection and waits
        its usual deadline; after that the referee decides for the seat at once.
        """
        return (
            seat.disconnected_at is not None and time.monotonic() - seat.disconnected_at < RECONNECT_GRACE_S
        )

    def _record_fault(self, seat: Seat, kind: FaultKind, detail: str) -> None:
        state = self.state
        seat.faults += 1
        newly_retired = not seat.retired and seat.faults >= self.settings.max_faults
        if newly_retired:
            seat.retired = True
        fault: dict[str, Any] = {"seat": seat.index, "kind": kind.value, "detail": detail}
        if state is not None:
            fault["hand"] = state.hand_index
            if state.phase is Phase.PLAYING:
                fault["play"] = len(state.plays)
        if newly_retired:
            fault["retired"] = True
        self._faults.append(fault)
        self._log.warning(
            "seat_fault", seat=seat.index, bot=seat.name, kind=kind.value, detail=detail, retired=seat.retired
        )
        self._publish(
            rpb.Event(
                seat_faulted=pb.SeatFaulted(
                    seat=seat.index,
                    kind=FAULT_TO_PB[kind],
                    detail=detail,
                    faults=seat.faults,
                    retired=newly_retired,
                )
            )
        )

    def _validate_pass(self, seat: int) -> Callable[[rpb.Decision], list[Card]]:
        def validate(decision: rpb.Decision) -> list[Card]:
            if decision.WhichOneof("answer") != "pass_cards":
                raise Rejected("WRONG_ANSWER", "this request asks for pass_cards")
            cards = _parse_cards(decision.pass_cards.cards)
            state = self.state
            assert state is not None
            try:
                state.check_pass(seat, cards)
            except HeartsError as exc:
                raise Rejected(exc.code, exc.message) from None
            return cards

        return validate

    def _validate_play(self, seat: int) -> Callable[[rpb.Decision], Card]:
        def validate(decision: rpb.Decision) -> Card:
            if decision.WhichOneof("answer") != "play_card":
                raise Rejected("WRONG_ANSWER", "this request asks for play_card")
            (card,) = _parse_cards([decision.play_card.card])
            state = self.state
            assert state is not None
            try:
                state.check_play(card, seat)
            except HeartsError as exc:
                raise Rejected(exc.code, exc.message) from None
            return card

        return validate

    @staticmethod
    def _validate_moon(decision: rpb.Decision) -> MoonChoice:
        if decision.WhichOneof("answer") != "choose_moon":
            raise Rejected("WRONG_ANSWER", "this request asks for choose_moon")
        choice = msg.MOON_FROM_PB.get(decision.choose_moon.choice)
        if choice is None:
            raise Rejected(
                BadMoonChoice.code, "choose MOON_CHOICE_SELF_MINUS_26 or MOON_CHOICE_OTHERS_PLUS_26"
            )
        return choice

    # ------------------------------------------------------------------ the game
    async def run(self) -> None:
        """Waits for the seats, plays every game, and closes the streams."""
        try:
            try:
                await asyncio.wait_for(self._all_joined.wait(), self.settings.join_timeout_ms / 1000)
            except TimeoutError:
                missing = [s.index for s in self.seats if not s.ever_joined]
                self._log.warning("join_timeout", missing_seats=missing)
            self.status = TableStatus.PLAYING
            for number in range(self.settings.games):
                await self._play_game(number)
            self.status = TableStatus.DONE
        except asyncio.CancelledError:
            self.status = TableStatus.ABORTED
            raise
        except Exception:
            self.status = TableStatus.ABORTED
            self._log.exception("table_failed")
            raise
        finally:
            for seat in self.seats:
                if seat.connection is not None:
                    seat.connection.close()
            for queue in self.watchers:
                queue.put_nowait(None)
            self.done.set()

    async def _play_game(self, number: int) -> None:
        settings = self.settings
        rules = self.rules
        seed = settings.game_seed(number)
        self.game_number = number
        self.game_id = f"{self.table_id}-{number}" if settings.games > 1 else self.table_id
        state = State(rules)
        self.state = state
        self._decisions = []
        self._faults = []
        self._hand_events = []
        for seat in self.seats:
            seat.faults = 0
            seat.retired = False
            seat.bank_ms = float(settings.time_bank_ms)
        started_at = time.time()
        self._game_clock = asyncio.get_running_loop().time()
        commitment = seed_commitment(seed)
        self._game_started = pb.GameStarted(
            game_id=self.game_id,
            protocol_version=msg.PROTOCOL_VERSION,
            players=rules.players,
            seats=[pb.SeatInfo(seat=s.index, bot_name=s.name) for s in self.seats],
            target_score=rules.target_score,
            max_hands=rules.max_hands,
            first_dealer=rules.first_dealer,
            seed_commitment=commitment,
            decision_time_ms=settings.decision_ms,
            time_bank_ms=settings.time_bank_ms,
            max_faults=settings.max_faults,
            game_number=number,
            games_total=settings.games,
        )
        base = self._game_started

        def started_for(seat: int) -> rpb.Event:
            personal = pb.GameStarted()
            personal.CopyFrom(base)
            personal.your_seat = seat
            return rpb.Event(game_started=personal)

        self._log.info("game_started", game_id=self.game_id, seed_commitment=commitment)
        self._publish(rpb.Event(game_started=base), started_for)
        while not state.game_over:
            await self._play_hand(state, seed)
        record = self._record(state, seed, commitment, started_at)
        text = record_json(record)
        path = self.record_dir / f"{self.game_id}.json" if self.record_dir is not None else None
        if path is not None:
            # Durable before anyone is told the game is over: a killed server never loses it.
            await asyncio.to_thread(write_text_durably, path, text)
        result = self._result_pb(state, seed)
        self.finished.append(FinishedGame(self.game_id, result, record, text, path))
        self._log.info("game_completed", game_id=self.game_id, totals=state.totals, winners=state.winners)
        self._publish(rpb.Event(game_completed=result))

    async def _play_hand(self, state: State, seed: str) -> None:
        n = self.rules.players
        deal, kitty = deal_hand(self.rules, seed, state.hand_index + 1)
        state.start_hand(deal, kitty)
        spectator = msg.hand_started(build_view(state, 0), spectator=True)
        self._publish(
            rpb.Event(hand_started=spectator),
            lambda s: rpb.Event(hand_started=msg.hand_started(build_view(state, s))),
        )
        hand = state.hand_index

        async def decide_pass(seat: Seat) -> list[Card]:
            answer, _ = await self._decide(
                seat,
                rpb.DECISION_KIND_PASS,
                self._validate_pass(seat.index),
                lambda: default_pass(state.hands[seat.index]),
            )
            return list(answer)

        passes = await asyncio.gather(*(decide_pass(s) for s in self.seats))
        for index, cards in enumerate(passes):
            state.pass_cards(index, cards)
        for seat in self.seats:
            received = msg.cards_received(build_view(state, seat.index))
            self._send(seat, seat.feed.event(rpb.Event(cards_received=received)))

        while state.phase is Phase.PLAYING:
            seat = self.seats[state.to_play]
            trick_index = state.trick_index
            card, by_referee = await self._decide(
                seat,
                rpb.DECISION_KIND_PLAY,
                self._validate_play(seat.index),
                lambda: default_play(state.legal_plays()),
            )
            state.play(card)
            self._publish(
                rpb.Event(card_played=msg.card_played(hand, trick_index, seat.index, card, by_referee))
            )
            if len(state.tricks) > trick_index:
                # A completed trick is public: who played what and who won it.
                trick = state.trick_views[trick_index]
                self._publish(rpb.Event(trick_completed=msg.trick_completed(hand, trick_index, trick, n)))

        if state.phase is Phase.MOON_CHOICE:
            shooter = state.moon_shooter
            assert shooter is not None
            choice, _ = await self._decide(
                self.seats[shooter], rpb.DECISION_KIND_MOON, self._validate_moon, default_moon
            )
            state.choose_moon(choice)
        result = state.results[-1]
        completed = msg.hand_completed(result.summary, state.totals, result.moon_choice)
        self._hand_events.append(completed)
        self._publish(rpb.Event(hand_completed=completed))

    # ------------------------------------------------------------------ results
    def _result_pb(self, state: State, seed: str) -> pb.GameCompleted:
        finish = places(state.totals)
        return pb.GameCompleted(
            game_id=self.game_id,
            totals=state.totals,
            winners=state.winners,
            hands_played=len(state.results),
            results=[
                pb.SeatResult(
                    seat=s.index,
                    bot_name=s.name,
                    total=state.totals[s.index],
                    place=finish[s.index],
                    faults=s.faults,
                    retired=s.retired,
                )
                for s in self.seats
            ],
            # Revealed here only if asked: a seat must not learn the seed of a deal that is
            # played again later (the next rotation of a duplicate tournament).
            seed=seed if self.settings.reveal_seed else "",
        )

    def _record(self, state: State, seed: str, commitment: str, started_at: float) -> dict[str, Any]:
        settings = self.settings
        finish = places(state.totals)
        return state_to_record(
            state,
            first_dealer=self.rules.first_dealer,
            game_id=self.game_id,
            table_id=self.table_id,
            game_number=self.game_number,
            label=settings.label,
            bots=list(settings.bot_names),
            seed=seed,
            seed_commitment=commitment,
            decision_ms=settings.decision_ms,
            time_bank_ms=settings.time_bank_ms,
            max_faults=settings.max_faults,
            started_at=started_at,
            finished_at=time.time(),
            decisions=self._decisions,
            faults=self._faults,
            result={
                "totals": list(state.totals),
                "winners": list(state.winners),
                "places": finish,
                "faults": [s.faults for s in self.seats],
                "retired": [s.index for s in self.seats if s.retired],
            },
        )


_KIND_NAMES = {
    rpb.DECISION_KIND_PASS: "pass",
    rpb.DECISION_KIND_PLAY: "play",
    rpb.DECISION_KIND_MOON: "moon",
}


def _parse_cards(codes: Sequence[str]) -> list[Card]:
    try:
        return [Card.parse(code) for code in codes]
    except ValueError as exc:
        raise Rejected("UNKNOWN_CARD", str(exc)) from None
