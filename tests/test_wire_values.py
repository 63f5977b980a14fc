"""The protobuf edge: the table takes typed answers, and every protobuf enum map lives in hearts_protocol.

The referee's table (``hearts_server/table``) neither imports the generated code nor is handed a
protobuf message: the servicer turns each Decision into an :class:`~hearts_protocol.values.Answer`
(:func:`hearts_protocol.convert.answer_from_pb`). Each core enum is mapped to its protobuf enum
once, in :mod:`hearts_protocol.convert`, and completely.
"""

from __future__ import annotations

import ast
import enum
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from cancellation_hearts.v1 import admin_service_pb2 as apb
from cancellation_hearts.v1 import game_pb2 as pb
from cancellation_hearts.v1 import referee_service_pb2 as rpb
from hearts_core.rules import MoonChoice, PassDirection
from hearts_core.state import DecisionKind, Phase
from hearts_protocol import convert as wire
from hearts_protocol.values import Answer, FaultKind, RejectionCode, TableStatus
from tests.conftest import ROOT

TABLE = ROOT / "server" / "hearts_server" / "table"
REGISTRY = ROOT / "server" / "hearts_server" / "registry.py"
#: Where code that is not the protocol package lives (the generated code aside).
ABOVE_THE_PROTOCOL = [
    ROOT / "server" / "hearts_server",
    ROOT / "clients" / "python" / "hearts_client",
    ROOT / "tournaments" / "hearts_tournaments",
]


def python_files(*folders: Path) -> Iterator[Path]:
    for folder in folders:
        yield from sorted(folder.rglob("*.py"))


def protobuf_imports(path: Path) -> list[str]:
    """The modules of generated or protobuf code that a file imports (anywhere in it)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module is not None:
            names = [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        found += [n for n in names if n.startswith(("cancellation_hearts", "google.protobuf")) or "_pb2" in n]
    return found


def test_the_table_and_the_registry_import_no_protobuf_code() -> None:
    """The servicers (service.py) convert at the edge; what they call is handed core values."""
    offenders = {str(p.relative_to(ROOT)): protobuf_imports(p) for p in [*python_files(TABLE), REGISTRY]}
    assert {p: i for p, i in offenders.items() if i} == {}


def enum_maps(path: Path) -> list[int]:
    """Lines of dict literals with a protobuf enum value (``pb.PHASE_PLAYING``) as a key or value."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    pb_aliases = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        and node.module is not None
        and "cancellation_hearts" in node.module
        for alias in node.names
        if alias.name.endswith("_pb2")
    }

    def is_enum_value(node: ast.expr | None) -> bool:
        return (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in pb_aliases
            and node.attr.isupper()
        )

    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Dict) and any(is_enum_value(n) for n in [*node.keys, *node.values])
    ]


def test_every_protobuf_enum_map_is_in_the_protocol_package() -> None:
    found = {str(p.relative_to(ROOT)): enum_maps(p) for p in python_files(*ABOVE_THE_PROTOCOL)}
    assert {p: lines for p, lines in found.items() if lines} == {}


def pb_values(enum_type: Any) -> set[int]:
    """Every value of a protobuf enum but its ``..._UNSPECIFIED`` zero."""
    return {v.number for v in enum_type.DESCRIPTOR.values if v.number != 0}


@pytest.mark.parametrize(
    ("to_pb", "from_pb", "core", "pb_enum"),
    [
        (wire.PHASE_TO_PB, wire.PHASE_FROM_PB, Phase, pb.Phase),
        (wire.DIRECTION_TO_PB, wire.DIRECTION_FROM_PB, PassDirection, pb.PassDirection),
        (wire.MOON_TO_PB, wire.MOON_FROM_PB, MoonChoice, pb.MoonChoice),
        (wire.FAULT_TO_PB, wire.FAULT_FROM_PB, FaultKind, pb.FaultKind),
        (wire.REJECTION_TO_PB, wire.REJECTION_FROM_PB, RejectionCode, rpb.RejectionCode),
        (wire.TABLE_STATUS_TO_PB, wire.TABLE_STATUS_FROM_PB, TableStatus, apb.TableStatus),
    ],
    ids=["phase", "direction", "moon", "fault", "rejection", "table_status"],
)
def test_each_enum_map_covers_both_enums_and_inverts(
    to_pb: Mapping[Any, int], from_pb: Mapping[int, Any], core: type[enum.Enum], pb_enum: Any
) -> None:
    assert set(to_pb) == set(core)
    assert set(to_pb.values()) == pb_values(pb_enum)
    assert {v: k for k, v in to_pb.items()} == dict(from_pb)


def test_the_decision_kinds_a_seat_is_asked_for_map_to_the_protocol() -> None:
    assert set(wire.DECISION_KIND_TO_PB) == set(DecisionKind) - {DecisionKind.DEAL}
    assert set(wire.DECISION_KIND_TO_PB.values()) == pb_values(rpb.DecisionKind)
    assert {v: k for k, v in wire.DECISION_KIND_TO_PB.items()} == wire.DECISION_KIND_FROM_PB


def test_each_rejection_code_is_its_protobuf_enum_by_name() -> None:
    for code, value in wire.REJECTION_TO_PB.items():
        assert rpb.RejectionCode.Name(value) == f"REJECTION_CODE_{code.value}"


def test_the_rejection_codes_of_the_rules_are_the_conformance_codes() -> None:
    from hearts_core import errors

    rule_codes = {
        cls.code
        for cls in vars(errors).values()
        if isinstance(cls, type) and issubclass(cls, errors.HeartsError) and cls is not errors.HeartsError
    }
    rules_in_protocol = {c.value for c in RejectionCode} & rule_codes
    assert rules_in_protocol == {
        "NOT_IN_HAND",
        "MUST_FOLLOW_SUIT",
        "HEARTS_NOT_BROKEN",
        "FIRST_LEAD_RESTRICTED",
        "BAD_PASS_COUNT",
        "PASS_NOT_IN_HAND",
        "BAD_MOON_CHOICE",
    }


@pytest.mark.parametrize(
    ("decision", "answer"),
    [
        (
            rpb.Decision(request_id=7, pass_cards=rpb.PassCards(cards=["AS", "KS", "QS"])),
            Answer(7, DecisionKind.PASS, ("AS", "KS", "QS")),
        ),
        (
            rpb.Decision(request_id=8, play_card=rpb.PlayCard(card="TS"), bot_error=True),
            Answer(8, DecisionKind.PLAY, ("TS",), bot_error=True),
        ),
        (
            rpb.Decision(request_id=9, choose_moon=rpb.ChooseMoon(choice=pb.MOON_CHOICE_OTHERS_PLUS_26)),
            Answer(9, DecisionKind.MOON, moon=MoonChoice.OTHERS_PLUS_26),
        ),
        (rpb.Decision(request_id=10), Answer(10, None)),
    ],
    ids=["pass", "play", "moon", "empty"],
)
def test_a_decision_becomes_an_answer_and_back(decision: rpb.Decision, answer: Answer) -> None:
    assert wire.answer_from_pb(decision) == answer
    assert wire.answer_pb(answer).SerializeToString() == decision.SerializeToString()


def test_an_unknown_moon_option_is_an_answer_without_a_choice() -> None:
    """Not rejected at the edge: the table rejects it (BAD_MOON_CHOICE) after the turn checks."""
    unknown = rpb.Decision(request_id=3, choose_moon=rpb.ChooseMoon(choice=99))  # type: ignore[arg-type]
    assert wire.answer_from_pb(unknown) == Answer(3, DecisionKind.MOON, moon=None)
    unset = rpb.Decision(request_id=3, choose_moon=rpb.ChooseMoon())
    assert wire.answer_from_pb(unset) == Answer(3, DecisionKind.MOON, moon=None)
