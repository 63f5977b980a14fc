"""The stdin/stdout protocol, version 1: JSON lines between the stdio bridge and a bot process.

A bot that cannot (or would rather not) speak gRPC reads one JSON object per line on stdin and
writes one JSON object per line on stdout. The bridge (:mod:`hearts_client.stdio_bridge`) holds
the seat's gRPC stream and its token; this module only turns the referee's messages into lines
and the bot's lines into answers, with no I/O. docs/PROTOCOL.md ("stdin/stdout bots") documents
every message and field.

To the bot, every line has ``"type"`` and ``"v"`` (1) first:

- ``decide``: a decision is asked: ``id``, ``kind`` (``pass``/``play``/``moon``), ``legal``,
  ``time_left_ms``, ``time_bank_ms`` and the seat's whole ``view``. The bot answers one line.
- ``rejected``: an answer was not accepted (by the referee or by the bridge): ``id``, ``code``,
  ``reason``, ``time_left_ms``; the bot may answer again while time is left.
- ``hello``: the bridge's first line, before it joins the table (it joins once the bot has
  read it, so that the bot's start-up is not charged to its first decision); no answer.
- informational events the bot may ignore: ``game_started``, ``hand_started``,
  ``cards_received``, ``card_played``, ``trick_completed``, ``hand_completed``,
  ``seat_faulted`` and ``game_completed``.

From the bot: ``{"id": 7, "play": "QS"}``, ``{"id": 3, "pass": ["AS", "KS", "QS"]}`` or
``{"id": 9, "moon": "self_minus_26"}``; ``id`` is optional.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from cancellation_hearts.v1 import game_pb2 as pb
from cancellation_hearts.v1 import referee_service_pb2 as rpb
from hearts_core.rules import MoonChoice
from hearts_protocol import convert as wire

#: The version of the stdin/stdout protocol, sent in every line as ``"v"``.
STDIO_VERSION = 1
#: The longest line a bot may write, newline excluded (the referee's own cap on a message).
MAX_LINE_BYTES = 64 * 1024
#: Most cards a ``pass`` answer may list (three are needed; the referee judges the count).
_MAX_PASS_ENTRIES = 32
_MAX_REQUEST_ID = 2**64 - 1
#: Longer strings are no card code: refused by the bridge rather than carried to the referee.
_MAX_CODE_LENGTH = 8


class DecisionKind(enum.StrEnum):
    """What a ``decide`` line asks for, and the key of the answer."""

    PASS = "pass"
    PLAY = "play"
    MOON = "moon"


class MoonOption(enum.StrEnum):
    """The two answers to a ``moon`` decision."""

    SELF_MINUS_26 = "self_minus_26"
    OTHERS_PLUS_26 = "others_plus_26"


def _name(mapping: Mapping[Any, enum.StrEnum], value: int, unknown: str = "unknown") -> str:
    """A protobuf enum value's name in the lines: the core value it maps to
    (:mod:`hearts_protocol.convert`, whose values are the names the lines use), or ``unknown``."""
    core = mapping.get(value)
    return core.value if core is not None else unknown


class AnswerError(Exception):
    """A bot's line that is not an acceptable answer; told back to the bot as a ``rejected`` line.

    Args:
        code: The rejection code, from the referee's vocabulary (``MALFORMED``, ``WRONG_ANSWER``,
            ``STALE_REQUEST``, ``BAD_MOON_CHOICE``, ...).
        reason: A readable explanation for the bot's author.
    """

    def __init__(self, code: str, reason: str) -> None:
        super().__init__(f"{code}: {reason}")
        self.code = code
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Answer:
    """A bot's answer line, checked for form (the referee judges legality).

    Attributes:
        request_id: The ``id`` the bot echoed, or None when it gave none.
        kind: Which answer it is.
        cards: The card codes of a ``pass`` or ``play`` answer (one for ``play``).
        moon: The option of a ``moon`` answer.
    """

    request_id: int | None
    kind: DecisionKind
    cards: tuple[str, ...] = ()
    moon: MoonOption | None = None

    def to_pb(self, request_id: int) -> rpb.Decision:
        """The gRPC decision answering ``request_id``."""
        decision = rpb.Decision(request_id=request_id)
        if self.kind is DecisionKind.PASS:
            decision.pass_cards.cards.extend(self.cards)
        elif self.kind is DecisionKind.PLAY:
            decision.play_card.card = self.cards[0]
        else:
            assert self.moon is not None
            decision.choose_moon.choice = wire.MOON_TO_PB[MoonChoice(self.moon.value)]
        return decision


def decision_kind(request: rpb.DecisionRequest) -> DecisionKind:
    """The kind of a decision request.

    Raises:
        ValueError: for a kind this version does not know.
    """
    try:
        return DecisionKind(wire.DECISION_KIND_FROM_PB[request.kind].value)
    except KeyError:
        raise ValueError(f"unknown decision kind {request.kind}") from None


def parse_answer(line: bytes, expected: DecisionKind, request_id: int | None = None) -> Answer:
    """Reads a bot's answer line (without its newline) to the open request.

    Only the form is checked here: a JSON object with an optional whole ``id`` (which, when
    given, must be the open request's) and exactly one of ``pass``, ``play`` and ``moon`` (the
    one ``expected``), of the right type. Other keys are ignored, so that later versions may
    add some.

    Args:
        line: The line.
        expected: What the open request asks for.
        request_id: The open request's id (None: any id is taken).

    Raises:
        AnswerError: ``MALFORMED``, ``STALE_REQUEST``, ``WRONG_ANSWER`` or ``BAD_MOON_CHOICE``.
    """
    if len(line) > MAX_LINE_BYTES:
        raise AnswerError("MALFORMED", f"the line is longer than {MAX_LINE_BYTES} bytes")
    try:
        data = json.loads(line)
    except (ValueError, RecursionError):
        raise AnswerError("MALFORMED", "the line is not JSON") from None
    if not isinstance(data, dict):
        raise AnswerError("MALFORMED", 'an answer is a JSON object, e.g. {"play": "QS"}')
    given_id = data.get("id")
    if given_id is not None and (
        not isinstance(given_id, int) or isinstance(given_id, bool) or not 0 <= given_id <= _MAX_REQUEST_ID
    ):
        raise AnswerError("MALFORMED", '"id" must be the whole number of the decide line')
    if given_id is not None and request_id is not None and given_id != request_id:
        # First: a late answer to an earlier request is stale, whatever it answers.
        raise AnswerError(
            "STALE_REQUEST", f"request {given_id} is not open; the open request is {request_id}"
        )
    given = [kind for kind in DecisionKind if kind.value in data]
    if not given:
        raise AnswerError("MALFORMED", f'the answer has no "{expected.value}" key')
    if len(given) > 1:
        raise AnswerError("MALFORMED", "an answer has exactly one of pass, play and moon")
    if given[0] is not expected:
        raise AnswerError(
            "WRONG_ANSWER", f'this decision asks for "{expected.value}", not "{given[0].value}"'
        )
    value = data[expected.value]
    if expected is DecisionKind.PLAY:
        if not isinstance(value, str):
            raise AnswerError("MALFORMED", '"play" is one card code, e.g. "QS"')
        return Answer(given_id, expected, cards=_codes([value]))
    if expected is DecisionKind.PASS:
        if (
            not isinstance(value, list)
            or len(value) > _MAX_PASS_ENTRIES
            or not all(isinstance(c, str) for c in value)
        ):
            raise AnswerError("MALFORMED", '"pass" is a list of three card codes, e.g. ["AS", "KS", "QS"]')
        return Answer(given_id, expected, cards=_codes(value))
    try:
        return Answer(given_id, expected, moon=MoonOption(value))
    except ValueError:
        raise AnswerError("BAD_MOON_CHOICE", '"moon" is "self_minus_26" or "others_plus_26"') from None


def _codes(values: list[str]) -> tuple[str, ...]:
    """Card codes to pass on: the referee judges them, but only ASCII can travel (a JSON string
    may hold anything, lone surrogates included)."""
    for value in values:
        if not value.isascii() or len(value) > _MAX_CODE_LENGTH:
            raise AnswerError("UNKNOWN_CARD", f"{value!r} is not a card code (rank then suit, e.g. QS)")
    return tuple(values)


def encode(message: dict[str, Any]) -> bytes:
    """One line of the protocol: compact JSON, ASCII only, newline included."""
    return json.dumps(message, separators=(",", ":"), ensure_ascii=True).encode("ascii") + b"\n"


def _line(line_type: str, /, **fields: Any) -> dict[str, Any]:
    return {"type": line_type, "v": STDIO_VERSION, **fields}


def hello_message() -> dict[str, Any]:
    """The bridge's first line: it asks for no answer."""
    return _line("hello")


def decide_message(request: rpb.DecisionRequest, time_left_ms: int | None = None) -> dict[str, Any]:
    """The ``decide`` line of a decision request.

    Args:
        request: The referee's request.
        time_left_ms: The time left as the bridge counts it (default: the request's).

    Raises:
        ValueError: for a decision kind this version does not know.
    """
    return _line(
        "decide",
        id=request.request_id,
        kind=decision_kind(request).value,
        legal=list(request.legal_cards),
        time_left_ms=request.time_left_ms if time_left_ms is None else time_left_ms,
        time_bank_ms=request.time_bank_ms,
        view=view_json(request.view),
    )


def rejected_message(request_id: int | None, code: str, reason: str, time_left_ms: int) -> dict[str, Any]:
    """The ``rejected`` line: an answer was refused; ``time_left_ms`` is 0 once it is too late."""
    return _line("rejected", id=request_id, code=code, reason=reason, time_left_ms=max(0, time_left_ms))


def _optional(message: Any, name: str) -> int | None:
    return int(getattr(message, name)) if message.HasField(name) else None


def trick_json(trick: pb.Trick) -> dict[str, Any]:
    """A trick: leader, cards with their seats and cancellations, winner (or null), flags."""
    return {
        "leader": trick.leader,
        "cards": list(trick.cards),
        "seats": list(trick.seats),
        "cancelled": list(trick.cancelled),
        "winner": _optional(trick, "winner"),
        "complete": trick.complete,
        "set_aside": trick.set_aside,
    }


def view_json(view: pb.View) -> dict[str, Any]:
    """A seat's View with the same fields as the protobuf View (docs/PROTOCOL.md lists them)."""
    return {
        "seat": view.seat,
        "players": view.players,
        "target_score": view.target_score,
        "phase": _name(wire.PHASE_FROM_PB, view.phase),
        "hand_index": view.hand_index,
        "dealer": view.dealer,
        "pass_direction": _name(wire.DIRECTION_FROM_PB, view.pass_direction),
        "hand": list(view.hand),
        "passed": list(view.passed),
        "passed_to": view.passed_to,
        "received": list(view.received),
        "received_from": view.received_from,
        "tricks": [trick_json(t) for t in view.tricks],
        "current_trick": trick_json(view.current_trick) if view.HasField("current_trick") else None,
        "to_play": _optional(view, "to_play"),
        "hearts_broken": view.hearts_broken,
        "hand_sizes": list(view.hand_sizes),
        "kitty_size": view.kitty_size,
        "kitty_taker": _optional(view, "kitty_taker"),
        "taken_points": list(view.taken_points),
        "set_aside": list(view.set_aside),
        "totals": list(view.totals),
        "moon_shooter": _optional(view, "moon_shooter"),
    }


def event_message(event: rpb.Event) -> dict[str, Any] | None:
    """The informational line of an event, or None for an event this version does not know."""
    which = event.WhichOneof("event")
    if which == "game_started":
        e = event.game_started
        # A warm bot's per-game seed (GameStarted.bot_seed), only when the organiser gave one.
        seeded = {"bot_seed": e.bot_seed} if e.bot_seed else {}
        return _line(
            "game_started",
            game_id=e.game_id,
            players=e.players,
            seat=_optional(e, "your_seat"),
            bot_names=[s.bot_name for s in sorted(e.seats, key=lambda s: s.seat)],
            target_score=e.target_score,
            max_hands=e.max_hands,
            first_dealer=e.first_dealer,
            decision_time_ms=e.decision_time_ms,
            time_bank_ms=e.time_bank_ms,
            max_faults=e.max_faults,
            game_number=e.game_number,
            games_total=e.games_total,
            seed_commitment=e.seed_commitment,
            **seeded,
        )
    if which == "hand_started":
        h = event.hand_started
        return _line(
            "hand_started",
            hand_index=h.hand_index,
            dealer=h.dealer,
            pass_direction=_name(wire.DIRECTION_FROM_PB, h.pass_direction),
            hand=list(h.hand),
            kitty_size=h.kitty_size,
        )
    if which == "cards_received":
        r = event.cards_received
        return _line("cards_received", cards=list(r.cards), from_seat=r.from_seat, hand=list(r.hand))
    if which == "card_played":
        c = event.card_played
        return _line(
            "card_played",
            hand_index=c.hand_index,
            trick_index=c.trick_index,
            seat=c.seat,
            card=c.card,
            by_referee=c.by_referee,
        )
    if which == "trick_completed":
        t = event.trick_completed
        return _line(
            "trick_completed",
            hand_index=t.hand_index,
            trick_index=t.trick_index,
            trick=trick_json(t.trick),
            next_leader=t.next_leader,
        )
    if which == "hand_completed":
        d = event.hand_completed
        return _line(
            "hand_completed",
            hand_index=d.hand_index,
            points=list(d.points),
            scores=list(d.scores),
            totals=list(d.totals),
            kitty=list(d.kitty),
            kitty_taker=_optional(d, "kitty_taker"),
            moon_shooter=_optional(d, "moon_shooter"),
            moon_choice=wire.MOON_FROM_PB[d.moon_choice].value
            if d.moon_choice in wire.MOON_FROM_PB
            else None,
            uncollected=list(d.uncollected),
        )
    if which == "seat_faulted":
        f = event.seat_faulted
        return _line(
            "seat_faulted",
            seat=f.seat,
            kind=_name(wire.FAULT_FROM_PB, f.kind),
            detail=f.detail,
            faults=f.faults,
            retired=f.retired,
        )
    if which == "game_completed":
        g = event.game_completed
        return _line(
            "game_completed",
            game_id=g.game_id,
            totals=list(g.totals),
            winners=list(g.winners),
            hands_played=g.hands_played,
            results=[
                {
                    "seat": r.seat,
                    "bot_name": r.bot_name,
                    "total": r.total,
                    "place": r.place,
                    "faults": r.faults,
                    "retired": r.retired,
                }
                for r in g.results
            ],
            seed=g.seed,
        )
    return None


def events_of(response: rpb.PlayResponse) -> Iterator[rpb.Event]:
    """The events a referee message carries: one, a batch, those a decision request carries
    (``DecisionRequest.events``, to handle before the request), or none."""
    which = response.WhichOneof("message")
    if which == "event":
        yield response.event
    elif which == "events":
        yield from response.events.events
    elif which == "decision_request":
        yield from response.decision_request.events
