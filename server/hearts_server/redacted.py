"""Per-seat redacted replays: the messages one seat received during a recorded game, in order.

``hearts replay --seat K FILE`` prints them. They are built exactly as the live referee builds
them (:mod:`hearts_server.messages` from the seat's :class:`View`), so what is printed is what
seat K was entitled to see and nothing else. Two things are not reproduced from the record:
request ids are renumbered 1, 2, ... within the game, and the time fields of decision requests
are the game's decision limit and the seat's remaining bank computed from recorded timings.

The ``perturb`` hook of :func:`seat_messages` lets the leak test rebuild every message from a
state whose hidden cards were re-dealt.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from google.protobuf.json_format import MessageToDict

from cancellation_hearts.v1 import game_pb2 as pb
from cancellation_hearts.v1 import referee_service_pb2 as rpb
from hearts_core.cards import Card
from hearts_core.errors import HeartsError
from hearts_core.replay import rules_of
from hearts_core.rules import DEFAULT_MOON_CHOICE
from hearts_core.state import Phase, State
from hearts_core.view import build_view
from hearts_protocol import convert as wire
from hearts_server import messages as msg

#: Returns the state a seat's message is built from (the identity, or a re-dealt copy in tests).
Perturb = Callable[[State, int], State]


def _same(state: State, seat: int) -> State:
    return state


def seat_messages(record: dict[str, Any], seat: int, perturb: Perturb = _same) -> Iterator[rpb.PlayResponse]:
    """Yields the messages seat ``seat`` received in the game of ``record``, in order.

    Raises:
        ValueError: if ``seat`` is not a seat of the game, or the record is not a legal game
            (replay it without ``--seat`` to see the verdict).
    """
    try:
        rules = rules_of(record)
    except HeartsError as exc:
        raise ValueError(f"the record is not a legal game: {exc}") from None
    n = rules.players
    if not 0 <= seat < n:
        raise ValueError(f"--seat must be 0..{n - 1} for a {n}-player game")
    names = record.get("bots") or [f"seat-{i}" for i in range(n)]
    decision_ms = int(record.get("decision_ms", 1000))
    bank = float(record.get("time_bank_ms", 60_000))
    by_referee = {
        (d.get("hand"), d.get("play")): True
        for d in record.get("decisions", [])
        if d.get("kind") == "play" and d.get("by_referee")
    }
    spent = {
        (d.get("hand"), d.get("kind"), d.get("play")): float(d.get("ms", 0))
        for d in record.get("decisions", [])
        if d.get("seat") == seat
    }
    request_id = 0

    feed = msg.SeatFeed()

    def request(
        state: State, kind: rpb.DecisionKind.ValueType, key: tuple[Any, ...]
    ) -> list[rpb.PlayResponse]:
        nonlocal request_id, bank
        request_id += 1
        view = build_view(perturb(state, seat), seat)
        out = msg.decision_request(request_id, kind, view, int(min(decision_ms, bank)), int(bank))
        bank = max(0.0, bank - spent.get(key, 0.0))
        return feed.request(out)

    yield from feed.event(
        rpb.Event(
            game_started=pb.GameStarted(
                game_id=str(record.get("game_id", "")),
                protocol_version=msg.PROTOCOL_VERSION,
                players=n,
                your_seat=seat,
                seats=[pb.SeatInfo(seat=i, bot_name=str(names[i])) for i in range(n)],
                target_score=rules.target_score,
                max_hands=rules.max_hands,
                first_dealer=rules.first_dealer,
                seed_commitment=str(record.get("seed_commitment", "")),
                decision_time_ms=decision_ms,
                time_bank_ms=int(bank),
                max_faults=int(record.get("max_faults", 0)),
                game_number=int(record.get("game_number", 0)),
                games_total=1,
            )
        )
    )
    state = State(rules)
    try:
        for index, hand in enumerate(record["hands"]):
            deal = [[Card.parse(c) for c in h] for h in hand["deal"]]
            state.start_hand(deal, [Card.parse(c) for c in hand["kitty"]])
            started = wire.hand_started(build_view(perturb(state, seat), seat))
            yield from feed.event(rpb.Event(hand_started=started))
            yield from request(state, rpb.DECISION_KIND_PASS, (index, "pass", None))
            for s, cards in enumerate(hand["passes"]):
                state.pass_cards(s, [Card.parse(c) for c in cards])
            received = wire.cards_received(build_view(perturb(state, seat), seat))
            yield from feed.event(rpb.Event(cards_received=received))
            for play, code in enumerate(hand["plays"]):
                if state.phase is not Phase.PLAYING:
                    raise HeartsError("extra plays", hand=index, play=play)
                if state.to_play == seat:
                    yield from request(state, rpb.DECISION_KIND_PLAY, (index, "play", play))
                player, trick_index = state.to_play, state.trick_index
                card = Card.parse(code)
                state.play(card)
                played = wire.card_played(
                    index, trick_index, player, card, by_referee.get((index, play), False)
                )
                yield from feed.event(rpb.Event(card_played=played))
                if len(state.tricks) > trick_index:
                    trick = state.trick_views[trick_index]
                    completed = wire.trick_completed(index, trick_index, trick, n)
                    yield from feed.event(rpb.Event(trick_completed=completed))
            if state.phase is Phase.MOON_CHOICE:
                if state.moon_shooter == seat:
                    yield from request(state, rpb.DECISION_KIND_MOON, (index, "moon", None))
                state.choose_moon(hand.get("moon_choice", DEFAULT_MOON_CHOICE.value))
            if state.phase in (Phase.PASSING, Phase.PLAYING):
                raise HeartsError("incomplete hand", hand=index)
            result = state.results[-1]
            summary = wire.hand_completed(result.summary, state.totals, result.moon_choice)
            yield from feed.event(rpb.Event(hand_completed=summary))
    except (HeartsError, KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"the record is not a legal game ({exc}); replay it without --seat") from None
    if state.game_over:
        yield from feed.event(
            rpb.Event(
                game_completed=pb.GameCompleted(
                    game_id=str(record.get("game_id", "")),
                    totals=state.totals,
                    winners=state.winners,
                    hands_played=len(state.results),
                    seed=str(record.get("seed", "")),
                )
            )
        )


def redacted_replay(record: dict[str, Any], seat: int) -> Iterator[dict[str, Any]]:
    """:func:`seat_messages` as JSON-ready dicts (protobuf JSON mapping, field names as in .proto)."""
    for message in seat_messages(record, seat):
        yield MessageToDict(
            message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
        )
