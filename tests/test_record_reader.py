"""The one validating record reader (:meth:`GameRecord.read`): strict names the file, the field
and why; lenient reports instead of raising; every vector and every written record reads back
byte for byte and replays as before."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hearts_client.bots import make_bot
from hearts_core.deal import seed_commitment
from hearts_core.local import play_game
from hearts_core.record import (
    MAX_RECORD_BYTES,
    GameRecord,
    HandRecord,
    RecordFileError,
    hand_to_record,
    record_json,
    state_to_record,
)
from hearts_core.replay import read_for_replay, replay
from hearts_core.rules import Rules
from tests.conftest import VECTORS
from tests.helpers.cli import hearts
from tests.helpers.hostile_records import HOSTILE


def _played(players: int = 6, seed: str = "r") -> dict[str, Any]:
    rules = Rules(players=players, target_score=40)
    state = play_game(rules, seed, [make_bot("random", f"{seed}/{i}") for i in range(players)])
    return state_to_record(state, bots=[f"b{i}" for i in range(players)], seed=seed)


@pytest.mark.parametrize(("name", "content", "said"), HOSTILE, ids=[h[0] for h in HOSTILE])
def test_a_hostile_file_is_one_error_naming_the_file_the_field_and_why(
    tmp_path: Path, name: str, content: bytes, said: str
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    for lenient in (False, True):
        with pytest.raises(RecordFileError) as caught:
            record = read_for_replay(path) if lenient else GameRecord.read(path)
            del record
        assert str(caught.value).startswith(f"{path}: "), caught.value
        assert said in str(caught.value)
        assert "\n" not in str(caught.value) and len(str(caught.value)) < 300
    # From text and bytes alike, named as the caller says.
    if name != "non_utf8.json":
        with pytest.raises(RecordFileError, match=f"^game x: .*{re.escape(said[:12])}"):
            GameRecord.read(content.decode(), name="game x")
    with pytest.raises(RecordFileError, match=r"^the record: "):
        GameRecord.read(content)


@pytest.mark.parametrize(
    ("change", "field", "why"),
    [
        ({"players": "8"}, "players", "must be a whole number, not a string"),
        ({"players": 12}, "players", "must be 6 to 11, not 12"),
        ({"players": True}, "players", "must be a whole number, not true/false"),
        ({"target_score": 0}, "target_score", "must be 1 to"),
        ({"bots": ["a", 3]}, "bots[1]", "must be a string"),
        ({"result": {"totals": [1.5]}}, "result.totals[0]", "must be a whole number"),
    ],
)
def test_strict_names_the_json_path(change: dict[str, Any], field: str, why: str) -> None:
    record = _played()
    record.update(change)
    with pytest.raises(RecordFileError) as caught:
        GameRecord.read(record_json(record), name="game g")
    assert caught.value.source == "game g" and caught.value.field == field, caught.value
    assert why in caught.value.reason


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda h: h.update(dealer=10**30), "hands[1].dealer"),
        (lambda h: h.update(pass_direction="up"), "hands[1].pass_direction"),
        (lambda h: h["plays"].__setitem__(3, "1X"), "hands[1].plays[3]"),
        (lambda h: h["deal"].__setitem__(2, "AS"), "hands[1].deal[2]"),
        (lambda h: h.pop("plays"), "hands[1].plays"),
    ],
)
def test_a_bad_hand_is_refused_strictly_and_judged_by_the_replay_when_lenient(
    mutate: Any, field: str
) -> None:
    record = _played()
    assert len(record["hands"]) >= 2
    mutate(record["hands"][1])
    with pytest.raises(RecordFileError, match=field.replace("[", r"\[").replace("]", r"\]")):
        GameRecord.from_json(record)
    read = GameRecord.from_json(record, lenient=True)
    assert [p.field for p in read.problems] == [field]
    assert all(p.judged for p in read.problems)
    outcome = replay(read.record)
    assert outcome["error"] is not None and outcome["error"]["hand"] == 1, outcome["error"]
    assert len(outcome["hands"]) == 1


def test_lenient_reports_every_problem_instead_of_raising() -> None:
    read = GameRecord.from_json(
        {"players": "six", "hands": [None, {"dealer": "x"}], "decisions": [{"seat": -1}], "seed": 5},
        lenient=True,
    )
    fields = [p.field for p in read.problems]
    assert fields[:2] == ["players", "hands[0]"] and "hands[1].dealer" in fields
    assert "decisions[0].seat" in fields and "decisions[0].kind" in fields and "seed" in fields
    judged = {p.field for p in read.problems if p.judged}
    assert "seed" not in judged and "players" in judged
    assert replay(read.record)["error"] == {"code": "BAD_PLAYER_COUNT"}
    # Anything JSON can hold reads leniently without an exception.
    hand = {"dealer": 0, "pass_direction": "left", "deal": [[[1]], [{}]], "passes": [[["x"]]], "plays": [[]]}
    for value in (
        None,
        3,
        "x",
        [1, 2],
        {"hands": "no"},
        {"players": 6, "hands": [[[]]]},
        {"players": 6, "hands": [hand]},
    ):
        assert isinstance(GameRecord.from_json(value, lenient=True).record, GameRecord)


def test_a_file_over_the_size_limit_is_refused_before_parsing(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    with path.open("wb") as fh:
        fh.write(b'{"players": 6, "hands": [], "x": "')
        fh.truncate(MAX_RECORD_BYTES + 10)
    with pytest.raises(RecordFileError, match=f"^{path}: larger than 64 MiB"):
        GameRecord.read(path, lenient=True)


def test_missing_directory_and_unreadable_files_are_one_error(tmp_path: Path) -> None:
    with pytest.raises(RecordFileError, match="no such file"):
        GameRecord.read(tmp_path / "nope.json")
    with pytest.raises(RecordFileError, match="is a directory"):
        GameRecord.read(tmp_path)
    with pytest.raises(RecordFileError, match="not a game record"):
        GameRecord.read(b"[1, 2]", lenient=True)


@pytest.mark.parametrize("path", VECTORS, ids=[p.stem for p in VECTORS])
def test_every_vector_reads_back_byte_for_byte_and_replays_as_expected(path: Path) -> None:
    vector = json.loads(path.read_text())
    read = GameRecord.read(path, lenient=True)
    if not read.problems:
        assert read.record.to_text() == record_json(vector["record"])
        assert GameRecord.read(path) == read.record
    else:  # illegal on purpose in its fields: strict refuses it, naming the same field
        assert all(p.judged for p in read.problems), read.problems
        with pytest.raises(RecordFileError, match=re.escape(read.problems[0].field)):
            GameRecord.read(path)
    assert replay(read.record) == vector["expected"]
    assert replay(vector["record"]) == vector["expected"]


def test_hearts_play_writes_the_record_it_always_wrote(tmp_path: Path) -> None:
    path = tmp_path / "game.json"
    done = hearts(
        "play", "--players", "7", "--seed", "w", "--bots", "heuristic,random", "--record", str(path), "-q"
    )
    assert done.returncode == 0, done.stderr
    rules = Rules(players=7)
    seats = [("heuristic", "random")[i % 2] for i in range(7)]
    state = play_game(rules, "w", [make_bot(name, f"w/{i}") for i, name in enumerate(seats)])
    before = state_to_record(state, bots=seats, seed="w", seed_commitment=seed_commitment("w"))
    assert path.read_text() == record_json(before) + "\n"
    assert GameRecord.read(path).to_text() + "\n" == path.read_text()


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats()
    | st.text(max_size=4)
    | st.sampled_from(["AS", "2C", "left", "right", "self_minus_26"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=25,
)
KEYS = ["players", "hands", "dealer", "pass_direction", "deal", "kitty", "passes", "plays", "moon_choice",
        "decisions", "faults", "result", "bots", "seed", "seat", "kind", "at", "totals", "target_score",
        "max_hands", "seed_commitment"]  # fmt: skip
RECORDISH = st.recursive(
    st.dictionaries(st.sampled_from(KEYS), JSON, max_size=6),
    lambda inner: st.dictionaries(st.sampled_from(KEYS), inner | st.lists(inner, max_size=3), max_size=6),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(data=RECORDISH | JSON)
def test_property_any_json_reads_leniently_and_strict_raises_only_the_record_error(data: Any) -> None:
    read = GameRecord.from_json(data, lenient=True)
    outcome = replay(read.record)
    assert set(outcome) == {"hands", "totals", "game_over", "winners", "error"}
    try:
        GameRecord.from_json(data)
    except RecordFileError as exc:
        assert exc.field is not None and read.problems
    else:
        assert not read.problems


def test_a_typed_hand_is_the_hand_the_record_format_writes() -> None:
    rules = Rules(players=9, target_score=60)
    state = play_game(rules, "of", [make_bot("random", f"of/{i}") for i in range(9)])
    assert state.results
    for hand in state.results:
        assert HandRecord.of(hand).to_json() == hand_to_record(hand)
