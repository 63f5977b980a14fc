"""Game records: the conformance record format, written for every game the engine runs.

A record holds everything needed to replay a game move by move (see
``shared/conformance/README.md``). The referee adds what a replay ignores but a league
organiser wants: game id, bot names, the seed and its commitment, per-decision timing and
faults, and the result.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from hearts_core.state import HandResult, State, Trick

#: Bumped when a field changes meaning; readers accept records without it (conformance vectors).
RECORD_VERSION = 1


def hand_to_record(hand: HandResult) -> dict[str, Any]:
    """One finished hand in the record format."""
    out: dict[str, Any] = {
        "dealer": hand.dealer,
        "pass_direction": hand.pass_direction.value,
        "deal": [[str(c) for c in h] for h in hand.deal],
        "kitty": [str(c) for c in hand.kitty],
        "passes": [[str(c) for c in p] for p in hand.passes],
        "plays": [str(c) for c in hand.plays],
    }
    if hand.moon_choice is not None:
        out["moon_choice"] = hand.moon_choice.value
    return out


def trick_to_json(trick: Trick) -> dict[str, Any]:
    """A trick in the outcome format: leader, cards in playing order, winner or null."""
    return {"leader": trick.leader, "cards": [str(c) for c in trick.cards], "winner": trick.winner}


def hand_outcome(hand: HandResult) -> dict[str, Any]:
    """One finished hand in the conformance ``expected`` format."""
    return {
        "tricks": [trick_to_json(t) for t in hand.tricks],
        "points": list(hand.points),
        "scores": list(hand.scores),
        "moon": hand.moon,
        "uncollected": [str(c) for c in hand.uncollected],
    }


def outcome_of(state: State) -> dict[str, Any]:
    """The conformance outcome of a game played without error so far."""
    return {
        "hands": [hand_outcome(h) for h in state.results],
        "totals": list(state.totals),
        "game_over": state.game_over,
        "winners": list(state.winners) if state.game_over else [],
        "error": None,
    }


def state_to_record(state: State, **extra: Any) -> dict[str, Any]:
    """The game record of every finished hand of ``state``, plus ``extra`` top-level fields."""
    rules = state.rules
    record: dict[str, Any] = {
        "record_version": RECORD_VERSION,
        "players": rules.players,
        "target_score": rules.target_score,
        "max_hands": rules.max_hands,
        "hands": [hand_to_record(h) for h in state.results],
    }
    record.update(extra)
    return record


class RecordFileError(Exception):
    """A file that cannot be read as a game record or a conformance vector."""


def load_record(path: Path) -> dict[str, Any]:
    """Reads a game record, or a conformance vector file (whose ``record`` is used).

    Raises:
        RecordFileError: if the file is missing, not JSON or not a record, with a clear reason.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RecordFileError("no such file") from None
    except IsADirectoryError:
        raise RecordFileError("is a directory, not a record file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise RecordFileError(f"cannot be read: {exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RecordFileError(f"not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    if isinstance(data, dict) and isinstance(data.get("record"), dict):
        data = data["record"]
    if not isinstance(data, dict) or "players" not in data or not isinstance(data.get("hands"), list):
        raise RecordFileError(
            "not a game record: expected a JSON object with 'players' and a 'hands' list "
            "(or a conformance vector with a 'record')"
        )
    return data


def record_json(record: dict[str, Any]) -> str:
    """A record's JSON text, as written to disk and returned by the admin API."""
    return json.dumps(record, separators=(",", ":"))


def write_json_durably(path: Path, data: Any) -> None:
    """Writes ``data`` as JSON durably (see :func:`write_text_durably`)."""
    write_text_durably(path, json.dumps(data, separators=(",", ":")))


def write_text_durably(path: Path, text: str) -> None:
    """Writes ``text`` (plus a newline) so that a crash leaves either the old file or the new one.

    Writes a temporary file in the same folder, fsyncs it, renames it over ``path`` and fsyncs
    the folder, so a finished game's record survives a kill at any instant.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
