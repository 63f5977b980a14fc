"""Game records: the conformance record format, written for every game the engine runs.

A record holds everything needed to replay a game move by move (see
``tests/conformance/README.md``). The referee adds what a replay ignores but a league
organiser wants: game id, bot names, the seed and its commitment, per-decision timing and
faults, and the result.

:class:`GameRecord` is the typed form, with :class:`HandRecord`, :class:`DecisionEntry`,
:class:`FaultEntry` and :class:`GameResult`; ``to_json``/``from_json`` read and write the
format exactly (a field a record does not carry is left out again). :func:`hearts_core.replay.replay`
still takes the raw JSON object, because conformance vectors are illegal on purpose in ways
(wrong types, missing fields) a typed record refuses.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from hearts_core.state import HandResult, State, Trick

T = TypeVar("T")

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


# ---------------------------------------------------------------------------- the typed record
def _get(data: Mapping[str, Any], key: str, kind: type[T] | tuple[type, ...], where: str) -> T:
    if key not in data:
        raise RecordFileError(f"{where}{key} is missing")
    value = data[key]
    # bool is an int in Python; a record never means one for the other.
    if not isinstance(value, kind) or (isinstance(value, bool) and kind in (int, float, (int, float))):
        raise RecordFileError(f"{where}{key} must be {_kind_name(kind)}, not {type(value).__name__}")
    return value  # type: ignore[return-value]


def _opt(data: Mapping[str, Any], key: str, kind: type[T] | tuple[type, ...], where: str) -> T | None:
    if key not in data or data[key] is None:
        return None
    return _get(data, key, kind, where)


def _kind_name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    names = {int: "a whole number", float: "a number", str: "a string", list: "a list", bool: "true or false"}
    return " or ".join(names.get(k, k.__name__) for k in kinds)


def _codes(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(c, str) for c in value):
        raise RecordFileError(f"{where} must be a list of card codes")
    return tuple(value)


@dataclass(frozen=True, slots=True)
class HandRecord:
    """One hand as recorded: enough to replay it (card codes as written, not checked here)."""

    dealer: int
    pass_direction: str
    deal: tuple[tuple[str, ...], ...]
    kitty: tuple[str, ...]
    passes: tuple[tuple[str, ...], ...]
    plays: tuple[str, ...]
    moon_choice: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The record format's JSON object."""
        out: dict[str, Any] = {
            "dealer": self.dealer,
            "pass_direction": self.pass_direction,
            "deal": [list(h) for h in self.deal],
            "kitty": list(self.kitty),
            "passes": [list(p) for p in self.passes],
            "plays": list(self.plays),
        }
        if self.moon_choice is not None:
            out["moon_choice"] = self.moon_choice
        return out

    @classmethod
    def from_json(cls, data: Any, index: int) -> HandRecord:
        """Reads one hand. Raises RecordFileError on a wrong type."""
        where = f"hands[{index}]."
        if not isinstance(data, dict):
            raise RecordFileError(f"hands[{index}] must be a JSON object")
        deal, passes = _get(data, "deal", list, where), _get(data, "passes", list, where)
        return cls(
            dealer=_get(data, "dealer", int, where),
            pass_direction=_get(data, "pass_direction", str, where),
            deal=tuple(_codes(h, f"{where}deal[{i}]") for i, h in enumerate(deal)),
            kitty=_codes(data.get("kitty", []), f"{where}kitty"),
            passes=tuple(_codes(p, f"{where}passes[{i}]") for i, p in enumerate(passes)),
            plays=_codes(_get(data, "plays", list, where), f"{where}plays"),
            moon_choice=_opt(data, "moon_choice", str, where),
        )

    @classmethod
    def of(cls, hand: HandResult) -> HandRecord:
        """The record of a finished hand."""
        return cls.from_json(hand_to_record(hand), hand.index)


@dataclass(frozen=True, slots=True)
class DecisionEntry:
    """One decision the referee asked for.

    Attributes:
        seat: Who decided.
        hand: The hand's index.
        kind: ``pass``, ``play`` or ``moon``.
        at: When it fell due, in ms since the game started (the referee's clock).
        ms: How long the seat took (the referee's clock, from the request's write).
        play: For a play, its index within the hand.
        by_referee: Why the referee decided instead (a fault kind, ``retired`` or
            ``released``), or None when the seat answered itself.
        referee_ms: The referee's own time between the decision falling due and the request's
            write (not charged to the seat).
        bot_error: The seat answered, but its SDK chose the answer for the bot (the bot raised
            or answered nonsense: ``Decision.bot_error``). Written only when true.
    """

    seat: int
    hand: int
    kind: str
    at: float
    ms: float = 0.0
    play: int | None = None
    by_referee: str | None = None
    referee_ms: float | None = None
    bot_error: bool = False

    def to_json(self) -> dict[str, Any]:
        """The record format's JSON object."""
        out: dict[str, Any] = {"seat": self.seat, "hand": self.hand, "kind": self.kind, "at": self.at}
        if self.play is not None:
            out["play"] = self.play
        out["ms"] = self.ms
        if self.by_referee is not None:
            out["by_referee"] = self.by_referee
        if self.referee_ms is not None:
            out["referee_ms"] = self.referee_ms
        if self.bot_error:
            out["bot_error"] = True
        return out

    @classmethod
    def from_json(cls, data: Any, index: int) -> DecisionEntry:
        """Reads one entry. Raises RecordFileError on a wrong type."""
        where = f"decisions[{index}]."
        if not isinstance(data, dict):
            raise RecordFileError(f"decisions[{index}] must be a JSON object")
        return cls(
            seat=_get(data, "seat", int, where),
            hand=_get(data, "hand", int, where),
            kind=_get(data, "kind", str, where),
            at=float(_get(data, "at", (int, float), where)),
            ms=float(_opt(data, "ms", (int, float), where) or 0.0),
            play=_opt(data, "play", int, where),
            by_referee=_opt(data, "by_referee", str, where),
            referee_ms=_opt(data, "referee_ms", (int, float), where),
            bot_error=bool(_opt(data, "bot_error", bool, where)),
        )


@dataclass(frozen=True, slots=True)
class FaultEntry:
    """A fault: the referee decided for a seat that did not answer in time (or at all)."""

    seat: int
    kind: str
    detail: str
    hand: int | None = None
    play: int | None = None
    retired: bool = False

    def to_json(self) -> dict[str, Any]:
        """The record format's JSON object."""
        out: dict[str, Any] = {"seat": self.seat, "kind": self.kind, "detail": self.detail}
        if self.hand is not None:
            out["hand"] = self.hand
        if self.play is not None:
            out["play"] = self.play
        if self.retired:
            out["retired"] = True
        return out

    @classmethod
    def from_json(cls, data: Any, index: int) -> FaultEntry:
        """Reads one entry. Raises RecordFileError on a wrong type."""
        where = f"faults[{index}]."
        if not isinstance(data, dict):
            raise RecordFileError(f"faults[{index}] must be a JSON object")
        return cls(
            seat=_get(data, "seat", int, where),
            kind=_get(data, "kind", str, where),
            detail=_get(data, "detail", str, where),
            hand=_opt(data, "hand", int, where),
            play=_opt(data, "play", int, where),
            retired=bool(_opt(data, "retired", bool, where)),
        )


@dataclass(frozen=True, slots=True)
class GameResult:
    """How a game ended, per seat.

    ``bot_errors`` counts, per seat, the answers its SDK made for the bot (``bot_error``
    decisions); it is written only when a seat has any, and read as None when absent.
    """

    totals: tuple[int, ...]
    winners: tuple[int, ...]
    places: tuple[int, ...]
    faults: tuple[int, ...]
    retired: tuple[int, ...]
    bot_errors: tuple[int, ...] | None = None

    def to_json(self) -> dict[str, Any]:
        """The record format's JSON object."""
        out: dict[str, Any] = {
            "totals": list(self.totals),
            "winners": list(self.winners),
            "places": list(self.places),
            "faults": list(self.faults),
            "retired": list(self.retired),
        }
        if self.bot_errors is not None and any(self.bot_errors):
            out["bot_errors"] = list(self.bot_errors)
        return out

    @classmethod
    def from_json(cls, data: Any) -> GameResult:
        """Reads a result. Raises RecordFileError on a wrong type."""
        if not isinstance(data, dict):
            raise RecordFileError("result must be a JSON object")

        def ints(key: str) -> tuple[int, ...]:
            values = _get(data, key, list, "result.")
            if not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
                raise RecordFileError(f"result.{key} must be a list of whole numbers")
            return tuple(values)

        return cls(
            ints("totals"),
            ints("winners"),
            ints("places"),
            ints("faults"),
            ints("retired"),
            ints("bot_errors") if "bot_errors" in data else None,
        )


#: Top-level fields of a referee's record beyond the conformance ones, in the order written.
_OPTIONAL_FIELDS: tuple[tuple[str, type | tuple[type, ...]], ...] = (
    ("game_id", str),
    ("table_id", str),
    ("game_number", int),
    ("label", str),
    ("seed", str),
    ("seed_commitment", str),
    ("decision_ms", int),
    ("time_bank_ms", int),
    ("max_faults", int),
    ("started_at", (int, float)),
    ("finished_at", (int, float)),
)


@dataclass(frozen=True, slots=True)
class GameRecord:
    """A game record, typed. Fields a record may lack are None (or empty) and are not written.

    Attributes:
        players: The table size.
        hands: The hands played.
        target_score, max_hands: The rules (None when the record leaves them to the defaults).
        record_version: The format's version (None in conformance vectors).
        bots: The bot name of each seat.
        decisions, faults: The referee's log of decisions and faults.
        result: The result, once the game is over.
        other fields: as named; see the conformance README and docs/PROTOCOL.md.
    """

    players: int
    hands: tuple[HandRecord, ...]
    target_score: int | None = None
    max_hands: int | None = None
    record_version: int | None = None
    game_id: str | None = None
    table_id: str | None = None
    game_number: int | None = None
    label: str | None = None
    bots: tuple[str, ...] | None = None
    seed: str | None = None
    seed_commitment: str | None = None
    decision_ms: int | None = None
    time_bank_ms: int | None = None
    max_faults: int | None = None
    started_at: float | None = None
    finished_at: float | None = None
    decisions: tuple[DecisionEntry, ...] | None = None
    faults: tuple[FaultEntry, ...] | None = None
    result: GameResult | None = None
    #: Fields this version does not know, kept so that a record is written back unchanged.
    extra: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The record format's JSON object (fields that are None are left out)."""
        out: dict[str, Any] = {}
        if self.record_version is not None:
            out["record_version"] = self.record_version
        out["players"] = self.players
        for key in ("target_score", "max_hands"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        out["hands"] = [h.to_json() for h in self.hands]
        for key, _ in _OPTIONAL_FIELDS[:4]:
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        if self.bots is not None:
            out["bots"] = list(self.bots)
        for key, _ in _OPTIONAL_FIELDS[4:]:
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        if self.decisions is not None:
            out["decisions"] = [d.to_json() for d in self.decisions]
        if self.faults is not None:
            out["faults"] = [f.to_json() for f in self.faults]
        if self.result is not None:
            out["result"] = self.result.to_json()
        out.update(self.extra)
        return out

    def to_text(self) -> str:
        """The record's JSON text, as written to disk and returned by the admin API."""
        return record_json(self.to_json())

    @classmethod
    def from_json(cls, data: Any) -> GameRecord:
        """Reads a record (the JSON object).

        Raises:
            RecordFileError: on a missing field or a wrong type, naming the field.
        """
        if not isinstance(data, dict):
            raise RecordFileError("a game record must be a JSON object")
        try:
            hands = _get(data, "hands", list, "")
            bots = _opt(data, "bots", list, "")
            if bots is not None and not all(isinstance(b, str) for b in bots):
                raise RecordFileError("bots must be a list of strings")
            decisions = _opt(data, "decisions", list, "")
            faults = _opt(data, "faults", list, "")
            known: dict[str, Any] = {
                key: _opt(data, key, kind, "") for key, kind in _OPTIONAL_FIELDS if key in data
            }
            for key in ("started_at", "finished_at"):
                if known.get(key) is not None:
                    known[key] = float(known[key])
            result = data.get("result")
            return cls(
                players=_get(data, "players", int, ""),
                hands=tuple(HandRecord.from_json(h, i) for i, h in enumerate(hands)),
                target_score=_opt(data, "target_score", int, ""),
                max_hands=_opt(data, "max_hands", int, ""),
                record_version=_opt(data, "record_version", int, ""),
                bots=tuple(bots) if bots is not None else None,
                decisions=(
                    tuple(DecisionEntry.from_json(d, i) for i, d in enumerate(decisions))
                    if decisions is not None
                    else None
                ),
                faults=tuple(FaultEntry.from_json(f, i) for i, f in enumerate(faults))
                if faults is not None
                else None,
                result=GameResult.from_json(result) if result is not None else None,
                extra={k: v for k, v in data.items() if k not in _KNOWN},
                **known,
            )
        except KeyError as exc:
            raise RecordFileError(f"the record has no {exc.args[0]!r}") from None


_KNOWN = frozenset(
    {
        "record_version",
        "players",
        "target_score",
        "max_hands",
        "hands",
        "bots",
        "decisions",
        "faults",
        "result",
    }
    | {key for key, _ in _OPTIONAL_FIELDS}
)


def places_of(totals: Sequence[int]) -> tuple[int, ...]:
    """Finishing places, 1 = lowest total; tied totals share the better place."""
    return tuple(1 + sum(1 for other in totals if other < t) for t in totals)


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
