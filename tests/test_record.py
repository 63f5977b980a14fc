"""The typed game record reads and writes the record format exactly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hearts_client.bots import make_bot
from hearts_core.local import play_game
from hearts_core.record import GameRecord, RecordFileError, state_to_record
from hearts_core.rules import Rules
from tests.conftest import VECTORS


def test_every_well_typed_vector_record_round_trips_exactly(vectors: list[Path]) -> None:
    read = 0
    for path in vectors:
        record = json.loads(path.read_text())["record"]
        try:
            typed = GameRecord.from_json(record)
        except RecordFileError:
            continue  # illegal on purpose in its types (a replay verdict, not a record)
        read += 1
        assert typed.to_json() == record, path.name
        assert json.loads(typed.to_text()) == record, path.name
    assert read >= len(VECTORS) * 3 // 4


def test_a_played_game_round_trips() -> None:
    rules = Rules(players=7, target_score=60)
    state = play_game(rules, "typed", [make_bot("heuristic", str(i)) for i in range(7)])
    record = state_to_record(state, game_id="g", bots=[f"b{i}" for i in range(7)], seed="s")
    assert GameRecord.from_json(record).to_json() == record


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"players": "8"}, "players"),
        ({"players": True}, "players"),
        ({"hands": {}}, "hands"),
        ({"decisions": [{"seat": 0}]}, "decisions[0]"),
        ({"faults": [{"seat": 0, "kind": 3, "detail": ""}]}, "faults[0].kind"),
        ({"result": {"totals": [1.5]}}, "result"),
    ],
)
def test_wrong_types_are_refused_naming_the_field(change: dict[str, object], field: str) -> None:
    rules = Rules(players=6, target_score=30)
    record = state_to_record(play_game(rules, "x", [make_bot("random", str(i)) for i in range(6)]))
    record.update(change)
    with pytest.raises(RecordFileError, match=field.replace("[", r"\[").replace("]", r"\]")):
        GameRecord.from_json(record)
