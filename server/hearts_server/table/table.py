"""The live referee of one table: the game loop over its seats' streams.

A :class:`Table` plays one or more games between the same seats. It owns each game's
:class:`State` and runs it with the one game driver (:func:`hearts_core.driver.drive`),
answering the driver's decisions by asking the seats (:mod:`.decisions`: deadlines, faults,
the default rule) and turning the driver's events into what each seat and spectator may see
(:mod:`.broadcast`; every seat message is built by :mod:`hearts_protocol.convert` from that
seat's own :class:`View`). Each finished game's record (:mod:`.gamelog`) is written durably
before anyone is told the game ended.

The servicer (``hearts_server.service``) decodes what a bot sends into an
:class:`~hearts_protocol.values.Answer` and calls :meth:`Table.answer`, or :meth:`Table.reject`
with a :class:`~hearts_protocol.values.RejectionCode`: the table never sees a protobuf message
from a seat, and builds none itself (:mod:`hearts_server.messages` does).
"""

from __future__ import annotations

import asyncio
import json
import secrets
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from hearts_core.cards import Card
from hearts_core.deal import deal_hand, seed_commitment
from hearts_core.driver import Event, GameOver, HandCompleted, Step, drive
from hearts_core.fallback import default_moon, default_pass, default_play
from hearts_core.record import GameRecord, write_text_durably
from hearts_core.state import Deal, Decision, DecisionKind, Moon, Pass, Play, State
from hearts_core.view import View, build_view
from hearts_protocol.values import Answer, RejectionCode, TableStatus
from hearts_server import messages as msg
from hearts_server.logs import get_logger
from hearts_server.table.broadcast import Broadcaster
from hearts_server.table.clock import Clock, LoopClock
from hearts_server.table.decisions import Decisions, Outcome, Rejected, Seat
from hearts_server.table.gamelog import FinishedGame, GameLog, SeatStats
from hearts_server.table.script import REFUSAL_CODES, NoteKind, ScriptNote, Scripts, TableScript
from hearts_server.table.settings import NOBODY_JOINED, TableSettings
from hearts_server.table.streams import Connection, FloodGate

log = get_logger(__name__)

T = TypeVar("T")

#: Builds the View a seat's message is made from (tests rebuild it from a re-dealt state).
ViewBuilder = Callable[[State, int], View]


def _record_text(record: GameRecord) -> str:
    """``record.to_text()``, by the pure-Python JSON encoder (the same text): it lets the event
    loop's thread run between its chunks, where the C encoder would hold the GIL for the whole
    of a long record (about 60 ms for 200 hands)."""
    return "".join(_ENCODER.iterencode(record.to_json()))


_ENCODER = json.JSONEncoder(separators=(",", ":"))


class Table:
    """One table: its seats, its games, and the asyncio task that referees them.

    Args:
        table_id: The table's id.
        settings: How it plays.
        record_dir: Where each finished game's record is written, or None to keep it in memory.
        clock: The referee's clock (the event loop's by default).
        view_builder: How a seat's View is built (``build_view``; the leak test re-deals hidden
            cards here).
        scripts: The scripted games of the bot test kit's referee, by deal seed
            (:mod:`.script`); None everywhere else.
    """

    def __init__(
        self,
        table_id: str,
        settings: TableSettings,
        record_dir: Path | None,
        clock: Clock | None = None,
        view_builder: ViewBuilder = build_view,
        scripts: Scripts | None = None,
    ) -> None:
        self.table_id = table_id
        self.settings = settings
        self.rules = settings.rules
        self.record_dir = record_dir
        self.clock: Clock = clock or LoopClock()
        self.view_builder = view_builder
        self.scripts = scripts
        #: The current game's script (None: it plays as every game does).
        self.script = self._script_of(0)
        #: Per seat, the requests it was sent this game (a script names them by number).
        self._asked: list[int] = [0] * settings.rules.players
        #: When the table started waiting for its seats (the referee's clock; set by run()).
        self._created = 0.0
        self.seats = [
            Seat(index=i, name=name, token=secrets.token_hex(24), flood=FloodGate(0.0))  # hex: never "-..."
            for i, name in enumerate(settings.bot_names)
        ]
        self.status = TableStatus.WAITING
        #: The credential to watch the table while it is live (public once it has ended).
        self.spectator_token = secrets.token_hex(24)
        #: Why the table stopped early (cancelled, a record could not be written), or "".
        self.stop_reason = ""
        #: The gRPC status the seats' streams end with when the table stops early.
        self.stop_code = "CANCELLED"
        self.finished: list[FinishedGame] = []
        self.done = asyncio.Event()
        self.broadcaster = Broadcaster(self.seats)
        self.decisions = Decisions(settings, self.seats, self.clock, self.broadcaster)
        self.state: State | None = None
        self.game_id = ""
        self.game_number = 0
        self._all_joined = asyncio.Event()
        self._game_started: msg.StartMessage | None = None
        self._hand_events: list[msg.HandMessage] = []
        #: Whether the referee chose the card of the last play (shown on its CardPlayed event).
        self._play_by_referee = False
        self._log = log.bind(table_id=table_id)

    @property
    def public_log(self) -> list[bytes]:
        """What a spectator joining now is sent first, serialized: the earlier games' results and
        every public event of the current game (:class:`~.broadcast.Broadcaster`)."""
        return self.broadcaster.public_log

    @property
    def watchers(self) -> list[asyncio.Queue[msg.EventMessage | None]]:
        """The spectators' queues."""
        return self.broadcaster.watchers

    # ------------------------------------------------------------------ connections
    def attach(self, seat_index: int, events_in_request: bool = False, declared_name: str = "") -> Connection:
        """Attaches a new stream to a seat and brings it up to date.

        ``events_in_request``: the stream's Join asked for held events inside its decision
        requests (one message per decision). ``declared_name``: the name its bot gave itself in
        the Join (cleaned), logged and recorded as self-declared (the seat keeps its name).

        A seat has one stream: a newer one (its bot reconnected, perhaps after its side of the
        old connection died silently) replaces the older one at once, which ends with ABORTED.
        Games that ended while the seat had no stream are announced first (their GameCompleted).
        """
        seat = self.seats[seat_index]
        if seat.connection is not None:
            old = seat.connection
            self.detach(seat_index, old)
            old.close("replaced by a newer stream with this seat's token", "ABORTED")
        conn = Connection(events_in_request)
        seat.connection = conn
        # The seat's flood allowance (seat.flood) is the seat's, not the stream's: a bot that
        # reconnects after its stream was closed for a flood gets no fresh burst.
        seat.feed.held.clear()  # a (re)joining seat is brought up to date by a snapshot
        reconnect = seat.ever_joined
        seat.ever_joined = True
        seat.declared_name = declared_name
        self._log.info(
            "seat_connected", seat=seat_index, bot=seat.name, declared_name=declared_name, reconnect=reconnect
        )
        self._note(NoteKind.JOINED, seat_index, reconnect=reconnect)
        for game in self.finished[seat.results_seen :]:
            conn.send(msg.alone(msg.completed(game.result)))
        seat.results_seen = len(self.finished)
        if self.state is not None and self._game_started is not None and not self.done.is_set():
            self._send_catch_up(seat)
        self._check_all_joined()
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
        seat.disconnected_at = self.clock.now()
        self._log.info("seat_disconnected", seat=seat_index, bot=seat.name)

    def release(self, seat_index: int, faulted: bool = False) -> None:
        """Gives a seat to the referee's default play: nobody is coming for it.

        The table stops waiting for it to join, and every decision of it is made at once by the
        default rule, recorded as ``by_referee: "released"`` (not a fault). With ``faulted``
        (its bot died) each decision is a DISCONNECTED fault instead, until the seat is retired,
        exactly as for a bot that joined and left.
        """
        seat = self.seats[seat_index]
        if faulted:
            seat.ever_joined = True
            seat.disconnected_at = float("-inf")  # long gone: no reconnection grace
        else:
            seat.released = True
        self._log.info("seat_released", seat=seat_index, bot=seat.name, faulted=faulted)
        self._check_all_joined()

    def _check_all_joined(self) -> None:
        if all(s.ever_joined or s.released for s in self.seats):
            self._all_joined.set()

    def _send_catch_up(self, seat: Seat) -> None:
        state = self.state
        assert state is not None and self._game_started is not None and seat.connection is not None
        started = msg.started_for(self._game_started, seat.index, seat.bot_seed)
        seat.connection.send(msg.alone(started))
        view = self.view_builder(state, seat.index)
        seat.connection.send(msg.snapshot(view, self._hand_events))
        self.decisions.resend(seat, view)

    # ------------------------------------------------------------------ what bots send
    def answer(self, seat_index: int, answer: Answer) -> bool:
        """Takes a seat's answer. Returns False when the stream must be closed (a flood).

        An accepted answer is always welcome; a rejected one draws on the seat's flood
        allowance (see :meth:`reject`).
        """
        seat = self.seats[seat_index]
        try:
            self.decisions.answer(seat, answer)
        except Rejected as exc:
            return self._reject(seat, exc)
        return True

    def reject(self, seat_index: int, code: RejectionCode, reason: str) -> bool:
        """Rejects something a seat sent that is not an answer (malformed, unexpected).

        Returns False when the seat's flood allowance is used up and the stream must be closed.
        """
        return self._reject(self.seats[seat_index], Rejected(code, reason))

    def _reject(self, seat: Seat, rejected: Rejected) -> bool:
        self._note(
            NoteKind.REJECTED,
            seat.index,
            request_id=rejected.request_id,
            code=str(rejected.code),
            reason=rejected.reason,
        )
        return self.decisions.reject(seat, rejected)

    # ------------------------------------------------------------------ a scripted game
    def _script_of(self, number: int) -> TableScript | None:
        if not self.scripts:
            return None
        return self.scripts.get(self.settings.game_seed(number))

    def _note(self, kind: NoteKind, seat: int, **detail: Any) -> None:
        """Tells the script's note-taker (if any) what a seat did or met."""
        script = self.script
        if script is not None and script.note is not None:
            script.note(ScriptNote(kind, seat, round(self.clock.now() - self._created, 3), **detail))

    # ------------------------------------------------------------------ the game
    async def run(self) -> None:
        """Waits for the seats, plays every game, and closes the streams.

        A table at which no seat was joined by a bot or released by the organiser when its join
        timeout ends is abandoned: it ends there (ABORTED, :data:`NOBODY_JOINED`), having played
        nothing. Without this the referee would play every seat of every game itself, which
        costs a core and a game's memory per table for hours; with it a table nobody comes to
        costs its waiting object until the join timeout. A seat that joined once (and left), or
        that the organiser released, is the organiser's table: it is played as before.
        """
        self._created = self.clock.now()
        try:
            try:
                await self.clock.wait_for(
                    self._all_joined.wait(), self.settings.policy.join_timeout_ms / 1000
                )
            except TimeoutError:
                missing = [s.index for s in self.seats if not s.ever_joined and not s.released]
                self._log.warning("join_timeout", missing_seats=missing)
                if len(missing) == len(self.seats):
                    self.stop_reason = (
                        f"{NOBODY_JOINED} table {self.table_id} within its join timeout of "
                        f"{self.settings.policy.join_timeout_ms} ms: it ended without playing"
                    )
                    self.stop_code = "FAILED_PRECONDITION"
                    self.status = TableStatus.ABORTED
                    return
            self.status = TableStatus.PLAYING
            for number in range(self.settings.games):
                await self._play_game(number)
                if self.stop_reason:
                    break
            self.status = TableStatus.ABORTED if self.stop_reason else TableStatus.DONE
        except asyncio.CancelledError:
            self.status = TableStatus.ABORTED
            self.stop_reason = self.stop_reason or "the table was stopped by the organiser or the server"
            raise
        except Exception:
            self.status = TableStatus.ABORTED
            self.stop_reason = "the referee failed"
            self._log.exception("table_failed")
            raise
        finally:
            if self.stop_reason:
                self.broadcaster.close(self.stop_reason, self.stop_code)
            else:
                self.broadcaster.close()
            # Only what a live call needs stays: results, the public log (spectators), seats.
            self.state = None
            self._hand_events = []
            self._game_started = None
            self.decisions.state = None
            self.decisions.log = GameLog()
            self.done.set()

    async def _play_game(self, number: int) -> None:
        settings = self.settings
        rules = self.rules
        seed = settings.game_seed(number)
        self.game_number = number
        self.script = self._script_of(number)
        self._asked = [0] * rules.players
        self.game_id = f"{self.table_id}-{number}" if settings.games > 1 else self.table_id
        state = State(rules)
        self.state = state
        self._hand_events = []
        game_log = self._log.bind(game_id=self.game_id)
        self.decisions.new_game(state, game_log)
        for seat in self.seats:
            seat.new_game(settings.policy.time_bank_ms)
        started_at = time.time()
        commitment = seed_commitment(seed)
        base = msg.game_started(
            self.game_id,
            rules,
            [s.name for s in self.seats],
            commitment,
            decision_ms=settings.policy.decision_ms,
            time_bank_ms=settings.policy.time_bank_ms,
            max_faults=settings.policy.max_faults,
            game_number=number,
            games_total=settings.games,
        )
        self._game_started = base

        def started_for(seat: int) -> msg.EventMessage:
            return msg.started_for(base, seat, self.seats[seat].bot_seed)

        game_log.info("game_started", seed_commitment=commitment)
        self.broadcaster.new_game()
        self.broadcaster.publish(msg.started(base), started_for)

        game = drive(state)
        step: Step = next(game)
        while True:
            if isinstance(step, Decision):
                answer = await self._answer(state, step, seed)
                step = game.send(answer)
                continue
            self._on_event(state, step)
            if isinstance(step, GameOver):
                break
            step = next(game)
        game.close()
        await self._finish(state, seed, commitment, started_at, game_log)

    async def _answer(self, state: State, decision: Decision, seed: str) -> Deal | list[Pass] | Play | Moon:
        """Gets the answer to one of the driver's decisions: the deal, or the seats' decisions."""
        kind = decision.kind
        scripted = self.script.hand(decision.hand_index) if self.script is not None else None
        if kind is DecisionKind.DEAL:
            if scripted is not None:
                return Deal(scripted.deal, scripted.kitty)
            return Deal(*deal_hand(self.rules, seed, decision.hand_index))
        if kind is DecisionKind.PASS and scripted is not None and scripted.passes is not None:
            for seat_index in decision.seats:
                self.decisions.scripted(self.seats[seat_index], kind)
            return [Pass(s, list(scripted.passes[s])) for s in decision.seats]
        if kind is DecisionKind.PASS:
            outcomes = await asyncio.gather(*(self._ask_pass(state, s) for s in decision.seats))
            return [Pass(s, o.answer) for s, o in zip(decision.seats, outcomes, strict=True)]
        seat = self.seats[decision.seat]
        if kind is DecisionKind.PLAY:
            played = await self._ask(
                state,
                seat,
                DecisionKind.PLAY,
                self.decisions.validate_play(seat.index),
                lambda: default_play(state.legal_plays()),
            )
            self._play_by_referee = played.by_referee is not None
            return Play(seat.index, played.answer)
        chosen = await self._ask(state, seat, DecisionKind.MOON, self.decisions.validate_moon, default_moon)
        return Moon(seat.index, chosen.answer)

    async def _ask_pass(self, state: State, seat_index: int) -> Outcome[list[Card]]:
        seat = self.seats[seat_index]
        return await self._ask(
            state,
            seat,
            DecisionKind.PASS,
            self.decisions.validate_pass(seat_index),
            lambda: list(default_pass(state.hands[seat_index])),
        )

    async def _ask(
        self,
        state: State,
        seat: Seat,
        kind: DecisionKind,
        validate: Callable[[Answer], T],
        fallback: Callable[[], T],
    ) -> Outcome[T]:
        self._asked[seat.index] += 1
        asked = (seat.index, self._asked[seat.index])
        script = self.script
        if script is not None and asked in script.refuse:
            validate = self._refusing(seat, kind, validate, script)
        outcome = await self.decisions.decide(
            seat, kind, lambda: self.view_builder(state, seat.index), validate, fallback
        )
        cutting = script is not None and asked in script.cut and outcome.by_referee is None
        if cutting and script is not None and seat.connection is not None:
            self._note(NoteKind.CUT, seat.index, reason=script.cut_reason)
            seat.connection.close(script.cut_reason, "UNAVAILABLE")
        return outcome

    def _refusing(
        self, seat: Seat, kind: DecisionKind, validate: Callable[[Answer], T], script: TableScript
    ) -> Callable[[Answer], T]:
        """``validate``, but the first legal answer is rejected (the script refuses it)."""
        refused = False

        def once(answer: Answer) -> T:
            nonlocal refused
            checked = validate(answer)  # an illegal answer is rejected as always
            if not refused:
                refused = True
                self._note(NoteKind.REFUSED, seat.index, request_id=answer.request_id)
                raise Rejected(REFUSAL_CODES[kind], script.refusal_reason)
            return checked

        return once

    def _on_event(self, state: State, event: Event) -> None:
        """Turns one of the driver's events into the messages seats and spectators receive."""
        public, per_seat = msg.event_messages(
            event, lambda seat: self.view_builder(state, seat), self.rules, self._play_by_referee
        )
        if isinstance(event, HandCompleted) and public is not None:
            self._hand_events.append(public.hand_completed)
        self.broadcaster.publish(public, per_seat)

    async def _finish(
        self, state: State, seed: str, commitment: str, started_at: float, game_log: Any
    ) -> None:
        settings = self.settings
        record = self.decisions.log.record(
            state,
            game_id=self.game_id,
            table_id=self.table_id,
            game_number=self.game_number,
            label=settings.label,
            bots=tuple(settings.bot_names),
            declared_names=tuple(s.declared_name for s in self.seats),
            seed=seed,
            seed_commitment=commitment,
            decision_ms=settings.policy.decision_ms,
            time_bank_ms=settings.policy.time_bank_ms,
            max_faults=settings.policy.max_faults,
            started_at=started_at,
            finished_at=time.time(),
            seat_faults=tuple(s.faults for s in self.seats),
            retired=tuple(s.index for s in self.seats if s.retired),
            bot_errors=tuple(s.bot_errors for s in self.seats),
        )
        # Off the event loop: the JSON of a long game takes a while (about 0.1 s for 200 hands),
        # and every other table's decisions would wait for it.
        text = await asyncio.to_thread(_record_text, record)
        path = self.record_dir / f"{self.game_id}.json" if self.record_dir is not None else None
        record_error = ""
        if path is not None:
            # Durable before anyone is told the game is over: a killed server never loses it.
            try:
                await asyncio.to_thread(write_text_durably, path, text)
            except OSError as exc:
                # A full disk (or a folder gone): the result and record stay in memory, the
                # organiser sees record_error, the table stops after this game and the seats'
                # streams end with UNAVAILABLE saying why. Nothing is lost but the file.
                record_error = f"the record could not be written to {path}: {exc.strerror or exc}"
                self._log.error("record_write_failed", game_id=self.game_id, error=record_error)
                self.stop_reason = f"the referee stopped the table: {record_error}"
                self.stop_code = "UNAVAILABLE"
        stats = tuple(
            SeatStats(s.answered, s.by_referee, s.faults, s.retired, s.released, s.bot_errors)
            for s in self.seats
        )
        # The seed is revealed here only if asked: a seat must not learn the seed of a deal that
        # is played again later (the next rotation of a duplicate tournament).
        revealed = seed if self.settings.reveal_seed else ""
        result = msg.game_completed(self.game_id, state, [s.name for s in self.seats], stats, revealed)
        # Written to disk: only the path is kept (the record is read back when asked for).
        kept = text if path is None or record_error else None
        self.finished.append(
            FinishedGame(self.game_id, result, kept, path if not record_error else None, stats, record_error)
        )
        self._log.info("game_completed", game_id=self.game_id, totals=state.totals, winners=state.winners)
        self.broadcaster.publish(msg.completed(result))
        for seat in self.seats:
            if seat.connection is not None:
                seat.results_seen = len(self.finished)
