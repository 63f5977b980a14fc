"""Bad input at the command line and in config files: one clear line, the documented exit code.

Includes hypothesis property tests: random hostile JSON fed to ``hearts replay``, random values
for every config key.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from hearts_tournaments.cli.main import app
from hearts_tournaments.tournament.config import TOURNAMENT_KEYS, ConfigError, parse_config
from hearts_tournaments.tournament.folder import remove_owned
from tests.helpers.cli import hearts

GOOD_CONFIG = """
[tournament]
table_size = 6
{extra}

[[bots]]
name = "a"
builtin = "random"
"""


@pytest.mark.parametrize(
    "args",
    [
        ("serve", "--port", "70000"),
        ("serve", "--port", "-1"),
        ("host", "--target-score", "0"),
        ("host", "--decision-ms", "0"),
        ("host", "--port", "99999"),
        ("serve", "--max-faults", "0"),
    ],
)
def test_out_of_range_options_give_one_clear_error(args: tuple[str, ...]) -> None:
    result = hearts(*args, timeout=60)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert "Invalid value" in result.stderr


def _hostile_files(folder: Path) -> list[Path]:
    texts = {
        "deep.json": "[" * 100_000 + "]" * 100_000,
        "deep_object.json": '{"a":' * 50_000 + "1" + "}" * 50_000,
        "digits.json": '{"players": ' + "9" * 5000 + ', "hands": []}',
        "inf.json": '{"players": 1e999, "hands": []}',
        "nan.json": '{"players": NaN, "hands": []}',
        "types.json": json.dumps({"players": "six", "hands": {"a": 1}}),
        "types2.json": json.dumps({"players": 7, "target_score": [1], "hands": [{"deal": 5}]}),
        "types3.json": json.dumps({"players": 6, "hands": [None, 1, "x"]}),
        "types4.json": json.dumps({"players": 6, "hands": [{"hands": "AS", "passes": 3, "tricks": {}}]}),
        "list.json": "[1, 2]",
        "string.json": '"record"',
        "binary.json": "\udcff",
        "empty.json": "",
        "huge_seat.json": json.dumps({"players": 6, "first_dealer": 10**30, "hands": []}),
        "negative.json": json.dumps({"players": -6, "max_hands": -1, "hands": []}),
        "vector.json": json.dumps({"record": {"players": 6, "hands": [[[]]]}}),
    }
    paths = []
    for name, text in texts.items():
        path = folder / name
        path.write_bytes(text.encode("utf-8", "surrogateescape"))
        paths.append(path)
    return paths


def test_replay_of_hostile_json_gives_one_line_each_and_replays_the_good_file_after(tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    played = hearts("play", "--players", "6", "--seed", "g", "--record", str(good), "--quiet", timeout=120)
    assert played.returncode == 0, played.stderr
    files = _hostile_files(tmp_path)
    result = hearts("replay", *map(str, files), str(good), timeout=120)
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    assert result.returncode == 2
    # The good file (last) was still replayed: its outcome is the last stdout line.
    last = json.loads(result.stdout.strip().splitlines()[-1])
    assert last["error"] is None and last["totals"]
    for line in result.stderr.strip().splitlines():
        assert line.startswith("hearts: error: "), line


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=12), inner, max_size=6),
    max_leaves=30,
)
RECORD_KEYS = ["players", "hands", "target_score", "max_hands", "first_dealer", "deal", "passes",
               "tricks", "seed", "seed_commitment", "record", "plays", "moon", "result"]  # fmt: skip
RECORDISH = st.dictionaries(st.sampled_from(RECORD_KEYS), JSON, max_size=8) | JSON


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=RECORDISH, seat=st.sampled_from([None, 0, 3, 99]))
def test_replay_property_hostile_json_never_raises(tmp_path: Path, data: Any, seat: int | None) -> None:
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(data))
    args = ["replay", str(path)] + ([] if seat is None else ["--seat", str(seat)])
    result = CliRunner().invoke(app, args)
    assert result.exit_code in (0, 1, 2), result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)


VALUES = (
    st.integers(min_value=-(2**70), max_value=2**70)
    | st.sampled_from([0, 1, 2**31 - 1, 2**32 - 1, 2**32, 2**63, -(2**63)])
    | st.text(max_size=20)
    | st.booleans()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.lists(st.integers(), max_size=3)
)


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, float):
        return repr(value)
    return json.dumps(value)


@settings(max_examples=300, deadline=None)
@given(key=st.sampled_from(sorted(TOURNAMENT_KEYS - {"table_size"})), value=VALUES)
def test_config_property_any_value_is_valid_or_one_config_error(key: str, value: Any) -> None:
    text = GOOD_CONFIG.format(extra=f"{key} = {_toml(value)}")
    try:
        config = parse_config(text, Path("."))
    except ConfigError as exc:
        assert "\n" not in str(exc)
        return
    # Accepted: every number the referee will see is within its bounds (no uint32 overflow).
    from hearts_server.table.settings import LIMITS

    assert config.target_score <= LIMITS["target_score"]
    assert config.max_hands <= LIMITS["max_hands"]
    assert config.policy.decision_ms <= LIMITS["decision_ms"]
    assert config.policy.time_bank_ms <= LIMITS["time_bank_ms"]
    assert config.policy.max_faults <= LIMITS["max_faults"]
    assert config.policy.join_timeout_ms <= LIMITS["join_timeout_ms"]


@pytest.mark.parametrize(
    "extra",
    [
        "target_score = 4294967296",
        "max_hands = 4294967295",
        "decision_ms = 18446744073709551615",
        "name = " + "[" * 3000 + "]" * 3000,
        "seed = " + "9" * 5000,
        'seed = "' + "s" * 1000 + '"',
    ],
)
def test_config_values_past_the_bounds_are_one_config_error(extra: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(GOOD_CONFIG.format(extra=extra), Path("."))
    assert len(str(caught.value)) < 400


def test_fresh_removes_only_what_the_runner_made(tmp_path: Path) -> None:
    (tmp_path / "records").mkdir()
    (tmp_path / "logs" / "dice").mkdir(parents=True)
    copy = tmp_path / "snapshots" / ("a2" * 26)  # a bot's files, as snapshot.take names them
    copy.mkdir(parents=True)
    made = [
        tmp_path / "tournament.db",
        tmp_path / "runner.log",
        tmp_path / "published.json",
        copy / "0",
        tmp_path / "records" / "0123456789ab.json",
        tmp_path / "records" / "0123456789ab-2.json",
        tmp_path / "records" / ".0123456789ab.json.x1y2.tmp",
        tmp_path / "logs" / "dice" / "r0-d1-s3.log",
    ]
    theirs = [
        tmp_path / "records" / "notes.txt",
        tmp_path / "records" / "best-game.json",
        tmp_path / "logs" / "README.md",
        tmp_path / "logs" / "dice" / "my-analysis.txt",
        tmp_path / "keep.toml",
        tmp_path / "snapshots" / "mine.txt",
    ]
    for path in made + theirs:
        path.write_text("x")
    from hearts_tournaments.tournament.store import DB_NAME

    if DB_NAME != "tournament.db":
        (tmp_path / DB_NAME).write_text("x")
        made.append(tmp_path / DB_NAME)
    remove_owned(tmp_path)
    assert [p for p in made if p.exists() and p.name != "tournament.db"] == []
    assert all(p.exists() for p in theirs)
