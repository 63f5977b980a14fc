"""What a verdict shows: the request the bot failed on, as it saw it, and the lines of its log."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hearts_core.driver import drive
from hearts_core.errors import HeartsError
from hearts_core.record import DecisionEntry, GameRecord
from hearts_core.replay import RecordEnds, record_answers, rules_of
from hearts_core.state import Decision, State
from hearts_core.view import build_view
from hearts_tournaments.arena.failures import QUOTE_CHARS, first_error_line

#: Lines of a bot's log a verdict shows (after its first error line).
LOG_LINES = 12
#: Bytes read from the end of a log.
_TAIL_BYTES = 16 * 1024


def log_lines(path: Path | None) -> tuple[str, ...]:
    """The bot's log as a verdict shows it: its first error line, then its last lines."""
    if path is None:
        return ()
    try:
        with path.open("rb") as handle:
            handle.seek(0, 2)
            size = handle.tell()
            handle.seek(max(0, size - _TAIL_BYTES))
            tail = handle.read().decode("utf-8", "replace")
    except OSError:
        return ()
    lines = [line.rstrip()[:QUOTE_CHARS] for line in tail.splitlines() if line.strip()]
    if size > _TAIL_BYTES:
        lines = lines[1:]  # the first may be cut
    last = lines[-LOG_LINES:]
    first = first_error_line(path)
    if first is not None and first not in last:
        return (f"(first error) {first}", "...", *last)
    return tuple(last)


def request_at(record: GameRecord, entry: DecisionEntry) -> dict[str, Any] | None:
    """The request of ``entry`` as its seat saw it: the hand, the kind, its cards, the trick so far
    and the legal cards (replayed from the record), or None if the record does not reach it."""
    state = State(rules_of(record))
    answers = record_answers(state, record.hands)
    game = drive(state)
    try:
        step = next(game)
        while True:
            if isinstance(step, Decision):
                if _is(step, entry, state):
                    return _shown(state, entry)
                step = game.send(answers(step))
            else:
                step = next(game)
    except (HeartsError, RecordEnds, StopIteration):
        return None
    finally:
        game.close()


def _is(step: Decision, entry: DecisionEntry, state: State) -> bool:
    if step.hand_index != entry.hand or step.kind.value != entry.kind or entry.seat not in step.seats:
        return False
    return entry.play is None or len(state.plays) == entry.play


def _shown(state: State, entry: DecisionEntry) -> dict[str, Any]:
    view = build_view(state, entry.seat)
    shown: dict[str, Any] = {
        "hand": entry.hand,
        "kind": entry.kind,
        "seat": entry.seat,
        "cards": " ".join(map(str, view.hand)),
    }
    if entry.play is not None:
        shown["play"] = entry.play
        shown["trick"] = len(view.tricks) + 1
        current = view.current.cards if view.current is not None else ()
        shown["so_far"] = " ".join(map(str, current))
        shown["legal"] = " ".join(map(str, view.legal))
        if view.set_aside:
            shown["set_aside"] = " ".join(map(str, view.set_aside))
    shown["decided"] = entry.by_referee or ("by its SDK (bot_error)" if entry.bot_error else "by the bot")
    return shown
