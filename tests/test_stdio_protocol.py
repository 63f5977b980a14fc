"""The stdin/stdout protocol's lines, the ``protocol`` key of a tournament's bots, and the bridge's
command line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cancellation_hearts.v1 import game_pb2 as pb
from cancellation_hearts.v1 import referee_service_pb2 as rpb
from hearts_client.stdio_protocol import (
    MAX_LINE_BYTES,
    AnswerError,
    DecisionKind,
    MoonOption,
    decide_message,
    encode,
    parse_answer,
)
from hearts_tournaments.arena.bots import BotProtocol
from hearts_tournaments.tournament.config import ConfigError, parse_config
from tests.conftest import ROOT

PLAY = DecisionKind.PLAY

# (line, expected kind, code of the AnswerError)
BAD_LINES = [
    (b"hello", PLAY, "MALFORMED"),
    (b"", PLAY, "MALFORMED"),
    (b"\xff\xfe", PLAY, "MALFORMED"),
    (b'"QS"', PLAY, "MALFORMED"),
    (b"[" * 100_000, PLAY, "MALFORMED"),
    (b"[" * 30_000 + b"]" * 30_000, PLAY, "MALFORMED"),
    (b'{"play": "' + b"Q" * MAX_LINE_BYTES + b'"}', PLAY, "MALFORMED"),
    (b"{}", PLAY, "MALFORMED"),
    (b'{"play": ["QS"]}', PLAY, "MALFORMED"),
    (b'{"play": null}', PLAY, "MALFORMED"),
    (b'{"play": "QS", "moon": "self_minus_26"}', PLAY, "MALFORMED"),
    (b'{"id": "7", "play": "QS"}', PLAY, "MALFORMED"),
    (b'{"id": true, "play": "QS"}', PLAY, "MALFORMED"),
    (b'{"id": -1, "play": "QS"}', PLAY, "MALFORMED"),
    (b'{"id": 1.5, "play": "QS"}', PLAY, "MALFORMED"),
    (b'{"id": 18446744073709551616, "play": "QS"}', PLAY, "MALFORMED"),
    (b'{"id": ' + b"9" * 5000 + b', "play": "QS"}', PLAY, "MALFORMED"),
    (b'{"pass": ["AS", "KS", "QS"]}', PLAY, "WRONG_ANSWER"),
    (b'{"pass": "AS KS QS"}', DecisionKind.PASS, "MALFORMED"),
    (b'{"pass": ["AS", 2, "QS"]}', DecisionKind.PASS, "MALFORMED"),
    (b'{"pass": ' + json.dumps(["2C"] * 33).encode() + b"}", DecisionKind.PASS, "MALFORMED"),
    (b'{"moon": "MOON_CHOICE_SELF_MINUS_26"}', DecisionKind.MOON, "BAD_MOON_CHOICE"),
    (b'{"moon": 1}', DecisionKind.MOON, "BAD_MOON_CHOICE"),
    (b'{"play": "\\ud800"}', PLAY, "UNKNOWN_CARD"),  # a lone surrogate: no UTF-8 for it
    (b'{"play": "Q\xe2\x99\xa0"}', PLAY, "UNKNOWN_CARD"),
    (b'{"pass": ["AS", "KS", "' + b"Q" * 100 + b'"]}', DecisionKind.PASS, "UNKNOWN_CARD"),
    (b'{"id": 6, "play": "QS"}', PLAY, "STALE_REQUEST"),
    (b'{"id": 6, "pass": ["AS", "KS", "QS"]}', PLAY, "STALE_REQUEST"),  # late: stale before wrong
]


@pytest.mark.parametrize(("line", "kind", "code"), BAD_LINES)
def test_a_bad_answer_line_gets_one_code(line: bytes, kind: DecisionKind, code: str) -> None:
    with pytest.raises(AnswerError) as caught:
        parse_answer(line, kind, request_id=7)
    assert caught.value.code == code
    assert caught.value.reason


def test_good_answers_become_the_decisions_the_referee_reads() -> None:
    play = parse_answer(b'{"id": 7, "play": "QS", "comment": "later versions may add keys"}', PLAY)
    assert play.request_id == 7 and play.to_pb(7) == rpb.Decision(
        request_id=7, play_card=rpb.PlayCard(card="QS")
    )
    passed = parse_answer(b' {"pass": ["AS","AS","KS"]} ', DecisionKind.PASS)
    assert passed.request_id is None
    assert list(passed.to_pb(3).pass_cards.cards) == ["AS", "AS", "KS"]
    moon = parse_answer(b'{"moon": "others_plus_26"}', DecisionKind.MOON)
    assert moon.moon is MoonOption.OTHERS_PLUS_26
    assert moon.to_pb(9).choose_moon.choice == pb.MOON_CHOICE_OTHERS_PLUS_26
    # Card codes are the referee's to judge: the bridge passes them on as written.
    assert parse_answer(b'{"play": "ZZ"}', PLAY).cards == ("ZZ",)


def test_a_decide_line_is_one_compact_line_with_its_keys_in_the_documented_order() -> None:
    view = pb.View(seat=2, players=6, hand=["2C", "QS", "QS"], phase=pb.PHASE_PLAYING)
    view.current_trick.leader = 1
    view.current_trick.cards.append("3C")
    request = rpb.DecisionRequest(
        request_id=12, kind=rpb.DECISION_KIND_PLAY, view=view, legal_cards=["2C"], time_left_ms=900
    )
    line = encode(decide_message(request))
    assert line.endswith(b"\n") and line.count(b"\n") == 1 and b" " not in line
    assert line.startswith(b'{"type":"decide","v":1,"id":12,"kind":"play","legal":["2C"],"time_left_ms":900,')
    message = json.loads(line)
    assert message["view"]["hand"] == ["2C", "QS", "QS"]
    assert message["view"]["phase"] == "playing"
    assert message["view"]["current_trick"]["winner"] is None
    assert message["view"]["to_play"] is None and message["view"]["kitty_taker"] is None


def test_the_protocol_key_of_a_bot() -> None:
    base = '[tournament]\ntable_size = 6\n[[bots]]\nname = "a"\nbuiltin = "random"\n[[bots]]\nname = "b"\n'
    config = parse_config(base + 'command = ["./bot"]\nprotocol = "stdio"\n', Path("."))
    assert config.bot("b").protocol is BotProtocol.STDIO
    assert config.bot("b").to_json()["protocol"] == "stdio"
    assert parse_config(base + 'command = ["./bot"]\n', Path(".")).bot("b").protocol is BotProtocol.GRPC
    assert "protocol" not in parse_config(base + 'command = ["./bot"]\n', Path(".")).bot("b").to_json()
    for text, message in (
        (base + 'command = ["./bot"]\nprotocol = "json"\n', 'bots[1].protocol: must be "grpc"'),
        (base + 'command = ["./bot"]\nprotocol = 1\n', 'bots[1].protocol: must be "grpc"'),
        (base + 'builtin = "random"\nprotocol = "stdio"\n', "bots[1].protocol: only command bots"),
    ):
        with pytest.raises(ConfigError) as caught:
            parse_config(text, Path("."))
        assert message in str(caught.value)


def _bridge(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hearts_client.stdio_bridge", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={"PATH": "/usr/bin:/bin"},
    )


def test_the_bridge_command_line_says_one_line_on_bad_use(tmp_path: Path) -> None:
    no_command = _bridge("--token", "t")
    assert no_command.returncode == 2 and "give the bot's command after --" in no_command.stderr
    no_token = _bridge("--", "sh", str(ROOT / "clients" / "stdio" / "first_legal.sh"))
    assert no_token.returncode == 2 and "a seat token is needed" in no_token.stderr
    missing = _bridge("--token", "t", "--", str(tmp_path / "no_such_bot"))
    assert missing.returncode == 1
    assert (
        missing.stderr.strip()
        .splitlines()[-1]
        .startswith("python -m hearts_client.stdio_bridge: error: cannot start")
    )
    for result in (no_command, no_token, missing):
        assert "Traceback" not in result.stderr
