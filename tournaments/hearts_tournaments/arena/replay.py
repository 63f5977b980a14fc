"""``hearts replay``: one game record file replayed, as the lines the command prints.

Everything a file prints is built before anything is printed: a file that turns out bad half-way
gives one error and no output, and the caller goes on with the next file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path


class ReplayError(Exception):
    """The file cannot be replayed: missing, not JSON, not a game record. One line, the path first."""


@dataclass(frozen=True, slots=True)
class Replayed:
    """What replaying one file gives.

    Attributes:
        lines: The JSON lines to print: the outcome (conformance format), or with a seat, what
            that seat saw, in order.
        problems: What does not hold in a record that replays (its revealed seed against its
            commitment or its deals); empty when all holds, and always empty for a seat's view.
    """

    lines: tuple[str, ...]
    problems: tuple[str, ...]


def replay_file(path: Path, seat: int | None = None) -> Replayed:
    """Replays the game record (or conformance vector) at ``path``.

    Args:
        path: The record file.
        seat: Show what seat ``seat`` saw instead of the outcome.

    Raises:
        ReplayError: The file is missing, unreadable, not JSON or not a valid game record (one
            line naming the file, the field and why), or ``seat`` is not a seat of the game.
    """
    from hearts_core.record import RecordFileError
    from hearts_core.replay import read_for_replay, replay, verify_seed

    try:
        record = read_for_replay(path)
    except RecordFileError as exc:  # names the file, the field and why
        raise ReplayError(str(exc)) from None
    try:
        if seat is not None:
            from hearts_server.redacted import redacted_replay

            lines = tuple(_line(line) for line in redacted_replay(record, seat))
            problems: tuple[str, ...] = ()
        else:
            lines = (_line(replay(record)),)
            problems = tuple(verify_seed(record))
    except ValueError as exc:  # --seat: not a seat, or the record is not a legal game
        raise ReplayError(f"{path}: {_short(exc)}") from None
    return Replayed(lines, problems)


def _line(value: object) -> str:
    return json.dumps(value, separators=(",", ":"))


def _short(exc: BaseException) -> str:
    """An exception as one short line."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 200 else text[:197] + "..."
