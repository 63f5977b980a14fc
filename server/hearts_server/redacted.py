"""Per-seat redacted replays: the messages one seat received during a recorded game, in order.

``hearts replay --seat K FILE`` prints them. The game is the one driver
(:func:`hearts_core.driver.drive`) answered from the record, and every message is built by the
same function as the live referee's (:func:`hearts_server.messages.event_messages`, from the
seat's :class:`View`), so what is printed is what seat K was entitled to see and nothing else.
Three things are not reproduced from the record: request ids are renumbered 1, 2, ... within
the game (the live referee numbers requests across the whole table), the time fields of decision
requests are the game's decision limit and the seat's remaining bank computed from recorded
timings, and rejections and fault events are not replayed.

The ``perturb`` hook of :func:`seat_messages` lets the leak test rebuild every message from a
state whose hidden cards were re-dealt.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from google.protobuf.json_format import MessageToDict

from cancellation_hearts.v1 import game_pb2 as pb
from cancellation_hearts.v1 import referee_service_pb2 as rpb
from hearts_core.defaults import DEFAULT_DECISION_MS, DEFAULT_TIME_BANK_MS
from hearts_core.driver import CardPlayed, drive
from hearts_core.errors import HeartsError
from hearts_core.record import GameRecord
from hearts_core.replay import RecordEnds, as_record, record_answers, rules_of
from hearts_core.state import Decision, DecisionKind, State
from hearts_core.view import View, build_view
from hearts_server import messages as msg
from hearts_server.table.settings import seat_label

#: Returns the state a seat's message is built from (the identity, or a re-dealt copy in tests).
Perturb = Callable[[State, int], State]


def _same(state: State, seat: int) -> State:
    return state


def seat_messages(
    record: GameRecord | Mapping[str, Any], seat: int, perturb: Perturb = _same
) -> Iterator[rpb.PlayResponse]:
    """Yields the messages seat ``seat`` received in the game of ``record``, in order.

    A JSON object is read leniently first (:func:`hearts_core.replay.as_record`).

    Raises:
        ValueError: if ``seat`` is not a seat of the game, or the record is not a legal game
            (replay it without ``--seat`` to see the verdict).
    """
    record = as_record(record)
    try:
        rules = rules_of(record)
    except (HeartsError, ValueError) as exc:
        raise ValueError(f"the record is not a legal game: {exc}") from None
    n = rules.players
    if not 0 <= seat < n:
        raise ValueError(f"--seat must be 0..{n - 1} for a {n}-player game")
    named = record.bots is not None and len(record.bots) == n and not record.names_hidden
    names = record.bots if named and record.bots is not None else [seat_label(i) for i in range(n)]
    decision_ms = DEFAULT_DECISION_MS if record.decision_ms is None else record.decision_ms
    bank = float(DEFAULT_TIME_BANK_MS if record.time_bank_ms is None else record.time_bank_ms)
    decisions = record.decisions or ()
    by_referee = {(d.hand, d.play): True for d in decisions if d.kind == "play" and d.by_referee}
    spent = {(d.hand, d.kind, d.play): float(d.ms) for d in decisions if d.seat == seat}
    request_id = 0

    feed = msg.SeatFeed()

    def request(state: State, kind: DecisionKind, key: tuple[Any, ...]) -> list[rpb.PlayResponse]:
        nonlocal request_id, bank
        request_id += 1
        view = build_view(perturb(state, seat), seat)
        out = msg.decision_request(request_id, kind, view, int(min(decision_ms, bank)), int(bank))
        bank = max(0.0, bank - spent.get(key, 0.0))
        return feed.request(out)

    started = msg.game_started(
        record.game_id or "",
        rules,
        [str(names[i]) for i in range(n)],
        record.seed_commitment or "",
        decision_ms=decision_ms,
        time_bank_ms=int(bank),
        max_faults=record.max_faults or 0,
        game_number=record.game_number or 0,
        games_total=1,
    )
    yield from feed.event(msg.started_for(started, seat, ""))
    state = State(rules)
    view_of: Callable[[int], View] = lambda s: build_view(perturb(state, s), s)  # noqa: E731
    answers = record_answers(state, record.hands)
    game = drive(state)
    try:
        step = next(game)
        while True:
            if isinstance(step, Decision):
                if seat in step.seats:
                    play = len(state.plays) if step.kind is DecisionKind.PLAY else None
                    yield from request(state, step.kind, (step.hand_index, step.kind.value, play))
                step = game.send(answers(step))
                continue
            chosen = isinstance(step, CardPlayed) and by_referee.get(
                (step.hand_index, len(state.plays) - 1), False
            )
            public, per_seat = msg.event_messages(step, view_of, rules, chosen)
            event = per_seat(seat) if per_seat is not None else public
            if event is not None:
                yield from feed.event(event)
            step = next(game)
    except StopIteration:
        pass
    except RecordEnds:
        pass
    except (HeartsError, ValueError) as exc:
        raise ValueError(f"the record is not a legal game ({exc}); replay it without --seat") from None
    finally:
        game.close()
    if state.game_over:
        yield from feed.event(
            rpb.Event(
                game_completed=pb.GameCompleted(
                    game_id=record.game_id or "",
                    totals=state.totals,
                    winners=state.winners,
                    hands_played=len(state.results),
                    seed=record.seed or "",
                )
            )
        )


def redacted_replay(record: GameRecord | Mapping[str, Any], seat: int) -> Iterator[dict[str, Any]]:
    """:func:`seat_messages` as JSON-ready dicts (protobuf JSON mapping, field names as in .proto)."""
    for message in seat_messages(record, seat):
        yield MessageToDict(
            message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
        )
