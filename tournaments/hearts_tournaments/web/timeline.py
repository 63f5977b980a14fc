"""A game record turned into what the replay viewer draws: hands, tricks, points, per hand.

Two builders, one shape (:class:`Timeline`):

* :func:`full_timeline` replays the record through the engine's :class:`State`: every seat's
  cards, every pass, the kitty. Shown only for released games (see :mod:`.source`).
* :func:`seat_timeline` is built from the messages seat K received, exactly as
  ``hearts replay --seat K`` rebuilds them (:func:`hearts_server.redacted.seat_messages`), so
  it holds that seat's cards and passes and the public facts, nothing else: the other seats'
  hands and passes are ``None`` and never reach the browser.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from cancellation_hearts.v1 import game_pb2 as pb
from cancellation_hearts.v1 import referee_service_pb2 as rpb
from hearts_core.cards import Card
from hearts_core.errors import HeartsError
from hearts_core.record import GameRecord
from hearts_core.replay import rules_of
from hearts_core.rules import DEFAULT_MOON_CHOICE, PassDirection
from hearts_core.state import Phase, State
from hearts_server.redacted import seat_messages


class TimelineError(Exception):
    """A record that cannot be replayed into a timeline (the message says why)."""


@dataclass(frozen=True, slots=True)
class TrickLine:
    """One trick: plays as ``(seat, card, cancelled, by_referee)``, its winner or set-aside,
    and each seat's collected points after it (kitty excluded: hidden until the hand ends)."""

    leader: int
    plays: tuple[tuple[int, str, bool, bool], ...]
    winner: int | None
    set_aside: bool
    taken: tuple[int, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "leader": self.leader,
            "plays": [list(p) for p in self.plays],
            "winner": self.winner,
            "set_aside": self.set_aside,
            "taken": list(self.taken),
        }


@dataclass(frozen=True, slots=True)
class HandLine:
    """One hand. ``dealt``, ``passed`` and ``received`` hold ``None`` for a seat not shown."""

    index: int
    dealer: int
    pass_direction: str
    pass_to: tuple[int, ...]
    dealt: tuple[tuple[str, ...] | None, ...]
    passed: tuple[tuple[str, ...] | None, ...]
    received: tuple[tuple[str, ...] | None, ...]
    kitty_size: int
    tricks: tuple[TrickLine, ...]
    points: tuple[int, ...]
    scores: tuple[int, ...]
    totals: tuple[int, ...]
    kitty: tuple[str, ...]
    kitty_taker: int | None
    moon: int | None
    uncollected: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        def cards(rows: Sequence[tuple[str, ...] | None]) -> list[list[str] | None]:
            return [None if r is None else list(r) for r in rows]

        return {
            "index": self.index,
            "dealer": self.dealer,
            "pass_direction": self.pass_direction,
            "pass_to": list(self.pass_to),
            "dealt": cards(self.dealt),
            "passed": cards(self.passed),
            "received": cards(self.received),
            "kitty_size": self.kitty_size,
            "tricks": [t.to_json() for t in self.tricks],
            "points": list(self.points),
            "scores": list(self.scores),
            "totals": list(self.totals),
            "kitty": list(self.kitty),
            "kitty_taker": self.kitty_taker,
            "moon": self.moon,
            "uncollected": list(self.uncollected),
        }


@dataclass(frozen=True, slots=True)
class Timeline:
    """A whole game as the viewer draws it; ``view_seat`` is None for the full view."""

    game_id: str
    players: int
    seats: tuple[str, ...]
    target_score: int
    view_seat: int | None
    hands: tuple[HandLine, ...]
    totals: tuple[int, ...]
    winners: tuple[int, ...]
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "game_id": self.game_id,
            "players": self.players,
            "seats": list(self.seats),
            "target_score": self.target_score,
            "view_seat": self.view_seat,
            "hands": [h.to_json() for h in self.hands],
            "totals": list(self.totals),
            "winners": list(self.winners),
        }


def _sorted(cards: Sequence[Card]) -> tuple[str, ...]:
    return tuple(str(c) for c in sorted(cards))


def _trick_lines(
    players: int, tricks: Sequence[tuple[int, Sequence[str], Sequence[bool], int | None]]
) -> list[TrickLine]:
    """Tricks as ``(leader, cards in order, by_referee per card, winner)`` into TrickLines."""
    taken = [0] * players
    waiting: list[Card] = []
    out = []
    for leader, cards, by_referee, winner in tricks:
        counts = Counter(cards)
        parsed = [Card.parse(c) for c in cards]
        waiting.extend(parsed)
        if winner is not None:
            taken[winner] += sum(c.points for c in waiting)
            waiting = []
        plays = tuple(
            ((leader + i) % players, code, counts[code] > 1, by_referee[i]) for i, code in enumerate(cards)
        )
        out.append(TrickLine(leader, plays, winner, winner is None, tuple(taken)))
    return out


def _names(record: GameRecord, players: int) -> tuple[str, ...]:
    if record.bots is not None and len(record.bots) == players:
        return record.bots
    return tuple(f"seat {i}" for i in range(players))


def full_timeline(record: GameRecord) -> Timeline:
    """Every seat's cards, passes and plays of a finished game.

    Raises:
        TimelineError: if the record does not replay as a legal game.
    """
    try:
        return _full(record)
    except (HeartsError, ValueError, IndexError) as exc:
        raise TimelineError(f"the record does not replay: {exc}") from None


def _full(record: GameRecord) -> Timeline:
    rules = rules_of(record)
    n = rules.players
    referee_plays = {(d.hand, d.play) for d in record.decisions or () if d.kind == "play" and d.by_referee}
    state = State(rules)
    hands = []
    for index, hand in enumerate(record.hands):
        deal = [[Card.parse(c) for c in h] for h in hand.deal]
        state.start_hand(deal, [Card.parse(c) for c in hand.kitty])
        passes = [[Card.parse(c) for c in p] for p in hand.passes]
        for seat, cards in enumerate(passes):
            state.pass_cards(seat, cards)
        received = [_sorted(state.received(s)) for s in range(n)]
        for code in hand.plays:
            state.play(Card.parse(code))
        if state.phase is Phase.MOON_CHOICE:
            state.choose_moon(hand.moon_choice or DEFAULT_MOON_CHOICE.value)
        result = state.results[index]
        tricks = []
        play = 0
        for trick in result.tricks:
            codes = [str(c) for c in trick.cards]
            flags = [(index, play + i) in referee_plays for i in range(len(codes))]
            play += len(codes)
            tricks.append((trick.leader, codes, flags, trick.winner))
        direction = PassDirection.for_hand(index)
        totals_after = [sum(r.scores[s] for r in state.results[: index + 1]) for s in range(n)]
        summary = result.summary
        hands.append(
            HandLine(
                index=index,
                dealer=result.dealer,
                pass_direction=direction.value,
                pass_to=tuple(direction.target(s, n) for s in range(n)),
                dealt=tuple(_sorted(h) for h in deal),
                passed=tuple(_sorted(p) for p in passes),
                received=tuple(received),
                kitty_size=rules.kitty_size,
                tricks=tuple(_trick_lines(n, tricks)),
                points=tuple(summary.points),
                scores=tuple(summary.scores),
                totals=tuple(totals_after),
                kitty=_sorted(summary.kitty),
                kitty_taker=summary.kitty_taker,
                moon=summary.moon,
                uncollected=_sorted(summary.uncollected),
            )
        )
    return Timeline(
        game_id=record.game_id or "",
        players=n,
        seats=_names(record, n),
        target_score=rules.target_score,
        view_seat=None,
        hands=tuple(hands),
        totals=tuple(state.totals),
        winners=tuple(state.winners) if state.game_over else (),
    )


def _events(message: rpb.PlayResponse) -> list[rpb.Event]:
    kind = message.WhichOneof("message")
    if kind == "event":
        return [message.event]
    if kind == "events":
        return list(message.events.events)
    return []


def seat_timeline(record: GameRecord, seat: int) -> Timeline:
    """What seat ``seat`` saw of a finished game, from its own message stream.

    Raises:
        TimelineError: if ``seat`` is not a seat of the game or the record does not replay.
    """
    try:
        messages = list(seat_messages(record, seat))
    except ValueError as exc:
        raise TimelineError(str(exc)) from None
    started: pb.GameStarted | None = None
    hands: list[HandLine] = []
    dealt: tuple[str, ...] = ()
    received: tuple[str, ...] = ()
    passed: tuple[str, ...] = ()
    header: pb.HandStarted | None = None
    tricks: list[tuple[int, list[str], list[bool], int | None]] = []
    referee: list[bool] = []
    totals: tuple[int, ...] = ()
    winners: tuple[int, ...] = ()
    for message in messages:
        for event in _events(message):
            kind = event.WhichOneof("event")
            if kind == "game_started":
                started = event.game_started
            elif kind == "hand_started":
                header = event.hand_started
                dealt = tuple(sorted(header.hand, key=Card.parse))
                tricks, referee, received, passed = [], [], (), ()
            elif kind == "cards_received":
                got = event.cards_received
                received = tuple(sorted(got.cards, key=Card.parse))
                left = Counter(dealt) + Counter(got.cards) - Counter(got.hand)
                passed = tuple(sorted(left.elements(), key=Card.parse))
            elif kind == "card_played":
                referee.append(event.card_played.by_referee)
            elif kind == "trick_completed":
                trick = event.trick_completed.trick
                flags, referee = referee[: len(trick.cards)], referee[len(trick.cards) :]
                winner = trick.winner if trick.HasField("winner") else None
                tricks.append((trick.leader, list(trick.cards), flags, winner))
            elif kind == "hand_completed" and started is not None and header is not None:
                done = event.hand_completed
                n = started.players
                direction = PassDirection.for_hand(done.hand_index)
                own: list[tuple[str, ...] | None] = [None] * n
                hands.append(
                    HandLine(
                        index=done.hand_index,
                        dealer=header.dealer,
                        pass_direction=direction.value,
                        pass_to=tuple(direction.target(s, n) for s in range(n)),
                        dealt=tuple(dealt if s == seat else own[s] for s in range(n)),
                        passed=tuple(passed if s == seat else own[s] for s in range(n)),
                        received=tuple(received if s == seat else own[s] for s in range(n)),
                        kitty_size=header.kitty_size,
                        tricks=tuple(_trick_lines(n, tricks)),
                        points=tuple(done.points),
                        scores=tuple(done.scores),
                        totals=tuple(done.totals),
                        kitty=tuple(sorted(done.kitty, key=Card.parse)),
                        kitty_taker=done.kitty_taker if done.HasField("kitty_taker") else None,
                        moon=done.moon_shooter if done.HasField("moon_shooter") else None,
                        uncollected=tuple(sorted(done.uncollected, key=Card.parse)),
                    )
                )
                totals = tuple(done.totals)
            elif kind == "game_completed":
                totals = tuple(event.game_completed.totals)
                winners = tuple(event.game_completed.winners)
    if started is None:
        raise TimelineError("the record holds no game")
    return Timeline(
        game_id=started.game_id,
        players=started.players,
        seats=tuple(s.bot_name for s in started.seats),
        target_score=started.target_score,
        view_seat=seat,
        hands=tuple(hands),
        totals=totals,
        winners=winners,
    )
