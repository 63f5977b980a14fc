"""Game records: the conformance record format, written for every game the engine runs.

A record holds everything needed to replay a game move by move (see
``tests/conformance/README.md``). The referee adds what a replay ignores but a league
organiser wants: game id, bot names, the seed and its commitment, per-decision timing and
faults, and the result.

:class:`GameRecord` is the typed form, with :class:`HandRecord`, :class:`DecisionEntry`,
:class:`FaultEntry` and :class:`GameResult`; ``to_json``/``to_text`` write the format exactly (a
field a record does not carry is left out again) and :meth:`GameRecord.read` is the one reader of
it: every command, page and check that reads a record reads it there. Strict (the default) raises
one :class:`RecordFileError` naming the file, the field (its JSON path) and why; lenient (for
conformance vectors, which are illegal on purpose, and ``hearts replay``) returns the record and
a list of :class:`RecordProblem` instead, a value a replay refuses standing in for each value it
could not take, so that :func:`hearts_core.replay.replay` gives the vector's verdict. Files,
texts and bytes are read within bounds (:data:`MAX_RECORD_BYTES` and the list, text and number
limits below), so a hostile file is one error, never a traceback or a hung process.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar, overload

from hearts_core.cards import CARDS
from hearts_core.rules import MAX_PLAYERS, MIN_PLAYERS, MoonChoice, PassDirection
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
    """A file or text that cannot be read as a game record or a conformance vector.

    Attributes:
        source: What was read (a file's path, or a name such as ``the record of game t/3``), or
            None when the caller names it.
        field: The JSON path of the offending value (``hands[2].plays[7]``), or None when the
            whole file is at fault (not UTF-8, not JSON, too large, ...).
        reason: Why, in a few words (``must be a whole number, not str``).
    """

    def __init__(self, reason: str, *, source: str | None = None, field: str | None = None) -> None:
        self.source = source
        self.field = field
        self.reason = reason
        super().__init__(str(self))

    def __str__(self) -> str:
        return ": ".join(part for part in (self.source, self.field, self.reason) if part)

    def named(self, source: str) -> RecordFileError:
        """The same error, naming ``source`` (kept when it names one already)."""
        return self if self.source else RecordFileError(self.reason, source=source, field=self.field)


@dataclass(frozen=True, slots=True)
class RecordProblem:
    """One thing a lenient read found wrong.

    Attributes:
        field: The JSON path of the value (``hands[0].passes``).
        reason: Why it is wrong.
        judged: Whether a replay judges it: a wrong ``players`` or a wrong value in a hand
            (not a size limit) stands as a value the replay refuses for the same reason, so the
            replay's verdict reports it as the record's first illegal thing.
    """

    field: str
    reason: str
    judged: bool = False

    def __str__(self) -> str:
        return f"{self.field}: {self.reason}"


@dataclass(frozen=True, slots=True)
class LenientRead:
    """What :meth:`GameRecord.read` gives with ``lenient=True``: the record, ill-typed values
    replaced by values a replay refuses for the same reason, and every problem found."""

    record: GameRecord
    problems: tuple[RecordProblem, ...]


#: Bounds every record is read within (a referee's record is far below each: 200 hands of 11
#: seats with every decision logged is a few MB).
MAX_RECORD_BYTES = 64 * 2**20
MAX_HANDS = 100_000
MAX_LIST = 2_000_000
MAX_CARDS = 1_000
MAX_TEXT = 100_000
MAX_INT = 2**53

#: A card code no card has: a lenient read puts it where a value is not a card code at all, so
#: that a replay refuses it as it refuses an unknown code.
NOT_A_CARD = "?"

_KIND_NAMES = {
    int: "a whole number",
    float: "a number",
    str: "a string",
    list: "a list",
    bool: "true or false",
}


def _type_name(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "true/false", type(None): "null"}
    if isinstance(value, int) and not isinstance(value, bool):
        return "a whole number"
    if isinstance(value, float):
        return "a number"
    return names.get(type(value), type(value).__name__)


class _Reader:
    """Reads a record's JSON value field by field: strict raises at the first problem, lenient
    notes each one and goes on with a substitute."""

    def __init__(self, lenient: bool) -> None:
        self.lenient = lenient
        self.problems: list[RecordProblem] = []

    def fail(self, field: str, reason: str, substitute: T, *, limit: bool = False) -> T:
        """Raises (strict), or notes the problem and returns ``substitute`` (lenient).
        ``limit``: the value is over a size limit (no replay judges that)."""
        if not self.lenient:
            raise RecordFileError(reason, field=field)
        judged = not limit and (field == "players" or field.startswith("hands["))
        self.problems.append(RecordProblem(field, reason, judged))
        return substitute

    def int_(
        self, value: Any, field: str, substitute: T, low: int = 0, high: int = MAX_INT, keep: bool = True
    ) -> int | T:
        """A whole number in ``low..high``; one out of range is kept (``keep``: a replay judges it)
        or replaced by ``substitute``."""
        if not isinstance(value, int) or isinstance(value, bool):
            return self.fail(field, f"must be {_KIND_NAMES[int]}, not {_type_name(value)}", substitute)
        if not low <= value <= high:
            shown = str(value) if len(str(value)) <= 30 else f"a {len(str(value))}-digit number"
            return self.fail(field, f"must be {low} to {high}, not {shown}", value if keep else substitute)
        return value

    def float_(self, value: Any, field: str) -> float:
        """A finite number, kept as written (a whole number stays one, so it is written back alike)."""
        if not isinstance(value, int | float) or isinstance(value, bool):
            return self.fail(field, f"must be a number, not {_type_name(value)}", 0.0)
        if abs(value) > MAX_INT or not math.isfinite(value):
            return self.fail(field, f"must be a finite number below {MAX_INT}", 0.0)
        return value

    def str_(self, value: Any, field: str, substitute: str = "") -> str:
        if not isinstance(value, str):
            return self.fail(field, f"must be a string, not {_type_name(value)}", substitute)
        if len(value) > MAX_TEXT:
            return self.fail(
                field, f"must be at most {MAX_TEXT} characters, not {len(value)}", "", limit=True
            )
        return value

    def bool_(self, value: Any, field: str) -> bool:
        if not isinstance(value, bool):
            return self.fail(field, f"must be true or false, not {_type_name(value)}", False)
        return value

    def list_(self, value: Any, field: str, limit: int = MAX_LIST) -> list[Any] | None:
        """The list, or None (noted) when it is not one or holds more than ``limit`` entries."""
        if not isinstance(value, list):
            return self.fail(field, f"must be a list, not {_type_name(value)}", None)
        if len(value) > limit:
            return self.fail(field, f"must hold at most {limit} entries, not {len(value)}", None, limit=True)
        return value

    def object_(self, value: Any, field: str) -> dict[str, Any] | None:
        if not isinstance(value, dict):
            return self.fail(field, f"must be a JSON object, not {_type_name(value)}", None)
        return value

    def missing(self, field: str) -> None:
        self.fail(field, "is missing", None)

    def codes(self, value: Any, field: str, substitute: tuple[str, ...] = (NOT_A_CARD,)) -> tuple[str, ...]:
        """Card codes; each must be one (``QS``). A value that is not a list becomes ``substitute``."""
        items = self.list_(value, field, MAX_CARDS)
        if items is None:
            return substitute
        try:
            if _CARD_CODES.issuperset(items):  # every entry a card code (the set holds strings only)
                return tuple(items)
        except TypeError:  # an entry that is a list or an object
            pass
        out = []
        for i, code in enumerate(items):
            if not isinstance(code, str) or code not in _CARD_CODES:
                shown = repr(code)[:20] if isinstance(code, str) else _type_name(code)
                kept = code if isinstance(code, str) and len(code) <= MAX_TEXT else NOT_A_CARD
                code = self.fail(f"{field}[{i}]", f"is not a card code: {shown}", kept)
            out.append(code)
        return tuple(out)


_CARD_CODES = frozenset(str(card) for card in CARDS)
_DIRECTIONS = tuple(d.value for d in PassDirection)
_MOON_CHOICES = tuple(c.value for c in MoonChoice)


@dataclass(frozen=True, slots=True)
class HandRecord:
    """One hand as recorded: enough to replay it. A strict read checks that every card code is
    one and the rotation fields are of their kinds; whether the cards are legal is the replay's
    verdict."""

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
        """Reads hand ``index`` strictly. Raises RecordFileError naming the field."""
        return cls._read(_Reader(lenient=False), data, index, MAX_PLAYERS)

    @classmethod
    def _read(cls, r: _Reader, data: Any, index: int, players: int) -> HandRecord:
        where = f"hands[{index}]"
        hand = r.object_(data, where)
        if hand is None:  # nothing of it can be read: a replay refuses its rotation
            return cls(dealer=-1, pass_direction="", deal=(), kitty=(), passes=(), plays=())
        for key in ("dealer", "pass_direction", "deal", "passes", "plays"):
            if key not in hand:
                r.missing(f"{where}.{key}")
        dealer = r.int_(hand.get("dealer"), f"{where}.dealer", -1, 0, players - 1) if "dealer" in hand else -1
        direction = (
            r.str_(hand.get("pass_direction"), f"{where}.pass_direction") if "pass_direction" in hand else ""
        )
        if direction not in _DIRECTIONS and isinstance(hand.get("pass_direction"), str):
            r.fail(f"{where}.pass_direction", f"must be left or right, not {direction[:20]!r}", None)
        deal = r.list_(hand.get("deal"), f"{where}.deal", MAX_CARDS) if "deal" in hand else None
        passes = r.list_(hand.get("passes"), f"{where}.passes", MAX_CARDS) if "passes" in hand else None
        read_passes: tuple[tuple[str, ...], ...] = ()
        if passes is not None:
            # One pass that is not a list spoils the hand's passes: a replay refuses them as a whole.
            before = len(r.problems)
            read_passes = tuple(r.codes(p, f"{where}.passes[{i}]", ()) for i, p in enumerate(passes))
            if any(not isinstance(p, list) for p in passes) and len(r.problems) > before:
                read_passes = ()
        moon = hand.get("moon_choice")
        if moon is not None:
            moon = r.str_(moon, f"{where}.moon_choice", NOT_A_CARD)
            if moon not in _MOON_CHOICES and moon != NOT_A_CARD:
                r.fail(
                    f"{where}.moon_choice",
                    f"must be one of {', '.join(_MOON_CHOICES)}, not {moon[:30]!r}",
                    None,
                )
        return cls(
            dealer=dealer,
            pass_direction=direction,
            deal=tuple(r.codes(h, f"{where}.deal[{i}]") for i, h in enumerate(deal or ())),
            kitty=r.codes(hand["kitty"], f"{where}.kitty") if "kitty" in hand else (),
            passes=read_passes,
            plays=r.codes(hand["plays"], f"{where}.plays", ()) if "plays" in hand else (),
            moon_choice=moon,
        )

    @classmethod
    def of(cls, hand: HandResult) -> HandRecord:
        """The record of a finished hand."""
        return cls(
            dealer=hand.dealer,
            pass_direction=hand.pass_direction.value,
            deal=tuple(tuple(str(c) for c in h) for h in hand.deal),
            kitty=tuple(str(c) for c in hand.kitty),
            passes=tuple(tuple(str(c) for c in p) for p in hand.passes),
            plays=tuple(str(c) for c in hand.plays),
            moon_choice=None if hand.moon_choice is None else hand.moon_choice.value,
        )


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
        """Reads entry ``index`` strictly. Raises RecordFileError naming the field."""
        return cls._read(_Reader(lenient=False), data, index, MAX_PLAYERS)

    @classmethod
    def _read(cls, r: _Reader, data: Any, index: int, players: int) -> DecisionEntry:
        where = f"decisions[{index}]"
        entry = r.object_(data, where)
        if entry is None:
            return cls(seat=-1, hand=-1, kind="", at=0.0)
        f = _Fields(r, entry, where)
        return cls(
            seat=f.int_("seat", -1, players - 1),
            hand=f.int_("hand", -1),
            kind=f.str_("kind"),
            at=f.float_("at"),
            ms=f.float_("ms", 0.0),
            play=f.opt_int("play"),
            by_referee=f.opt_str("by_referee"),
            referee_ms=f.opt_float("referee_ms"),
            bot_error=f.bool_("bot_error"),
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
        """Reads entry ``index`` strictly. Raises RecordFileError naming the field."""
        return cls._read(_Reader(lenient=False), data, index, MAX_PLAYERS)

    @classmethod
    def _read(cls, r: _Reader, data: Any, index: int, players: int) -> FaultEntry:
        where = f"faults[{index}]"
        entry = r.object_(data, where)
        if entry is None:
            return cls(seat=-1, kind="", detail="")
        f = _Fields(r, entry, where)
        return cls(
            seat=f.int_("seat", -1, players - 1),
            kind=f.str_("kind"),
            detail=f.str_("detail"),
            hand=f.opt_int("hand"),
            play=f.opt_int("play"),
            retired=f.bool_("retired"),
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
        """Reads a result strictly. Raises RecordFileError naming the field."""
        return cls._read(_Reader(lenient=False), data)

    @classmethod
    def _read(cls, r: _Reader, data: Any) -> GameResult:
        result = r.object_(data, "result")
        if result is None:
            return cls((), (), (), (), ())

        def ints(key: str) -> tuple[int, ...]:
            if key not in result:
                r.missing(f"result.{key}")
                return ()
            values = r.list_(result[key], f"result.{key}", MAX_CARDS) or []
            return tuple(r.int_(v, f"result.{key}[{i}]", 0, -MAX_INT) for i, v in enumerate(values))

        return cls(
            ints("totals"),
            ints("winners"),
            ints("places"),
            ints("faults"),
            ints("retired"),
            ints("bot_errors") if "bot_errors" in result else None,
        )


class _Fields:
    """The fields of one JSON object of a record, read through a :class:`_Reader`."""

    def __init__(self, r: _Reader, data: dict[str, Any], where: str) -> None:
        self.r, self.data, self.where = r, data, f"{where}." if where else ""

    def _need(self, key: str) -> bool:
        if key in self.data:
            return True
        self.r.missing(f"{self.where}{key}")
        return False

    def int_(self, key: str, substitute: int = 0, high: int = MAX_INT) -> int:
        if not self._need(key):
            return substitute
        return self.r.int_(self.data[key], f"{self.where}{key}", substitute, 0, high)

    def opt_int(self, key: str) -> int | None:
        value = self.data.get(key)
        return None if value is None else self.r.int_(value, f"{self.where}{key}", 0)

    def str_(self, key: str) -> str:
        return self.r.str_(self.data[key], f"{self.where}{key}") if self._need(key) else ""

    def opt_str(self, key: str) -> str | None:
        value = self.data.get(key)
        return None if value is None else self.r.str_(value, f"{self.where}{key}")

    def float_(self, key: str, default: float | None = None) -> float:
        if self.data.get(key) is None and default is not None:
            return default
        return self.r.float_(self.data[key], f"{self.where}{key}") if self._need(key) else 0.0

    def opt_float(self, key: str) -> float | None:
        value = self.data.get(key)
        return None if value is None else self.r.float_(value, f"{self.where}{key}")

    def bool_(self, key: str) -> bool:
        value = self.data.get(key)
        return False if value is None else self.r.bool_(value, f"{self.where}{key}")


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
        bots: The bot name of each seat: the organiser's (the table's configuration), the one
            every result and standing goes by.
        declared_names: Per seat, the name its bot gave itself in its Join (``Join.bot_name``;
            empty when it gave none or never joined): self-declared, for the record only.
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
    declared_names: tuple[str, ...] | None = None
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
        if self.declared_names is not None:
            out["declared_names"] = list(self.declared_names)
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

    @overload
    @classmethod
    def from_json(cls, data: Any, *, lenient: Literal[False] = False) -> GameRecord: ...
    @overload
    @classmethod
    def from_json(cls, data: Any, *, lenient: Literal[True]) -> LenientRead: ...
    @classmethod
    def from_json(cls, data: Any, *, lenient: bool = False) -> GameRecord | LenientRead:
        """Reads a record from its JSON value (see :meth:`read`).

        Raises:
            RecordFileError: (strict) at the first missing field, wrong type or value out of
                range, naming the field.
        """
        r = _Reader(lenient)
        record = cls._read(r, data)
        return LenientRead(record, tuple(r.problems)) if lenient else record

    @overload
    @classmethod
    def read(
        cls, source: Path | str | bytes, *, lenient: Literal[False] = False, name: str | None = None
    ) -> GameRecord: ...
    @overload
    @classmethod
    def read(
        cls, source: Path | str | bytes, *, lenient: Literal[True], name: str | None = None
    ) -> LenientRead: ...
    @classmethod
    def read(
        cls, source: Path | str | bytes, *, lenient: bool = False, name: str | None = None
    ) -> GameRecord | LenientRead:
        """Reads a game record, or a conformance vector's ``record``, from a file or its text.

        The one reader of the record format: every command and page that reads a record reads
        it here. Strict (the default) is for records a referee wrote: every field is checked for
        its type and range. Lenient is for conformance vectors and ``hearts replay``, whose
        records are illegal on purpose: each problem is noted (see :class:`LenientRead`) and a
        value a replay refuses for the same reason stands in, so the replay names the verdict.

        Args:
            source: A file's path, the record's JSON text (``str``) or its bytes.
            lenient: Report problems in the fields instead of raising.
            name: What to call the source in errors (default: the path; ``the record``).

        Raises:
            RecordFileError: naming the source, the field (JSON path) and why, when the file
                cannot be read, is not UTF-8 JSON within :data:`MAX_RECORD_BYTES`, is not a
                record at all, or (strict) has a field wrong. Never another exception.
        """
        source_name = name or (str(source) if isinstance(source, Path) else "the record")
        try:
            data = _decode(source)
            if isinstance(data, dict) and isinstance(data.get("record"), dict):
                data = data["record"]
            if not isinstance(data, dict) or "players" not in data or not isinstance(data.get("hands"), list):
                raise RecordFileError(
                    "not a game record: expected a JSON object with 'players' and a 'hands' list "
                    "(or a conformance vector with a 'record')"
                )
            return cls.from_json(data, lenient=True) if lenient else cls.from_json(data)
        except RecordFileError as exc:
            raise exc.named(source_name) from None
        except RecursionError:
            raise RecordFileError("nested too deeply to be a game record", source=source_name) from None

    @classmethod
    def _read(cls, r: _Reader, data: Any) -> GameRecord:
        record = r.object_(data, "the record")
        if record is None:
            return cls(players=0, hands=())
        if "players" not in record:
            r.missing("players")
        players = r.int_(record.get("players"), "players", 0, MIN_PLAYERS, MAX_PLAYERS)
        seats = players if MIN_PLAYERS <= players <= MAX_PLAYERS else MAX_PLAYERS
        if "hands" not in record:
            r.missing("hands")
        hands = r.list_(record.get("hands", []), "hands", MAX_HANDS) or []
        f = _Fields(r, record, "")

        def ints(key: str, low: int = 0) -> int | None:
            value = record.get(key)
            return None if value is None else r.int_(value, key, None, low, keep=False)

        def entries(key: str) -> list[Any] | None:
            value = record.get(key)
            return None if value is None else r.list_(value, key)

        bots = entries("bots")
        declared = entries("declared_names")
        decisions = entries("decisions")
        faults = entries("faults")
        return cls(
            players=players,
            hands=tuple(HandRecord._read(r, h, i, seats) for i, h in enumerate(hands)),
            target_score=ints("target_score", 1),
            max_hands=ints("max_hands", 1),
            record_version=ints("record_version"),
            game_id=f.opt_str("game_id"),
            table_id=f.opt_str("table_id"),
            game_number=ints("game_number"),
            label=f.opt_str("label"),
            bots=None if bots is None else tuple(r.str_(b, f"bots[{i}]") for i, b in enumerate(bots)),
            declared_names=None
            if declared is None
            else tuple(r.str_(b, f"declared_names[{i}]") for i, b in enumerate(declared)),
            seed=f.opt_str("seed"),
            seed_commitment=f.opt_str("seed_commitment"),
            decision_ms=ints("decision_ms"),
            time_bank_ms=ints("time_bank_ms"),
            max_faults=ints("max_faults"),
            started_at=f.opt_float("started_at"),
            finished_at=f.opt_float("finished_at"),
            decisions=None
            if decisions is None
            else tuple(DecisionEntry._read(r, d, i, seats) for i, d in enumerate(decisions)),
            faults=None
            if faults is None
            else tuple(FaultEntry._read(r, x, i, seats) for i, x in enumerate(faults)),
            result=None if record.get("result") is None else GameResult._read(r, record["result"]),
            extra={k: v for k, v in record.items() if k not in _KNOWN},
        )


def _refuse_constant(name: str) -> Any:
    raise RecordFileError(f"not JSON: {name} is not a JSON number")


def _decode(source: Path | str | bytes) -> Any:
    """The JSON value of a record file, text or bytes. Raises RecordFileError saying why not."""
    if isinstance(source, Path):
        try:
            with source.open("rb") as fh:
                raw = fh.read(MAX_RECORD_BYTES + 1)
        except FileNotFoundError:
            raise RecordFileError("no such file") from None
        except IsADirectoryError:
            raise RecordFileError("is a directory, not a record file") from None
        except OSError as exc:
            raise RecordFileError(f"cannot be read: {exc.strerror or exc}") from None
        source = raw
    if len(source) > MAX_RECORD_BYTES:
        raise RecordFileError(f"larger than {MAX_RECORD_BYTES // 2**20} MiB: not a game record")
    if isinstance(source, bytes):
        try:
            text = source.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise RecordFileError(f"not UTF-8 text (byte {exc.start}): not a game record") from None
    else:
        text = source
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        cut = exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated")
        where = f"line {exc.lineno}, column {exc.colno}"
        raise RecordFileError(
            f"not JSON: {exc.msg} ({where}{'; the file ends too soon' if cut else ''})"
        ) from None
    except ValueError as exc:  # a number of more digits than Python converts
        if "digits" in str(exc):
            raise RecordFileError("not JSON a record holds: a number of more than 4300 digits") from None
        raise RecordFileError(f"not JSON a record holds: {' '.join(str(exc).split())[:120]}") from None


_KNOWN = frozenset(
    {
        "record_version",
        "players",
        "target_score",
        "max_hands",
        "hands",
        "bots",
        "declared_names",
        "decisions",
        "faults",
        "result",
    }
    | {key for key, _ in _OPTIONAL_FIELDS}
)


def places_of(totals: Sequence[int]) -> tuple[int, ...]:
    """Finishing places, 1 = lowest total; tied totals share the better place."""
    return tuple(1 + sum(1 for other in totals if other < t) for t in totals)


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
