"""Bots that speak JSON lines on stdin/stdout, through the bridge, against the real referee.

Each test runs the real server on 127.0.0.1:0, fills a table of six with SDK bots over gRPC and
puts one real process in seat STDIO_SEAT behind :func:`hearts_client.stdio_bridge.run_bridge`:
the example bots of clients/stdio/ play whole games legally; a bot that writes garbage, hangs,
floods its stdout or quits is faulted by the referee, the game completes and nothing raises.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import shutil
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import structlog

from cancellation_hearts.v1 import admin_service_pb2 as apb
from hearts_client.stdio_bridge import (
    MAX_ANSWERS,
    READ_BYTES_PER_S,
    BridgeStats,
    bot_environment,
    run_bridge,
    start_process,
)
from hearts_client.stdio_protocol import MAX_LINE_BYTES
from hearts_core.replay import replay
from hearts_server.server import RefereeServer
from hearts_server.table.clock import ManualClock
from hearts_server.table.script import TableScript
from tests.conftest import ROOT
from tests.helpers.harness import (
    await_table,
    create_table,
    load_records,
    running_server,
    sdk_bot,
    time_out_each_decision,
    until,
)

PLAYERS = 6
STDIO_SEAT = 3
EXAMPLES = ROOT / "clients" / "stdio"
#: A short game; generous time per decision (two loaded cores), few faults before retirement.
GAME = {"target_score": 40, "decision_time_ms": 2000, "max_faults": 3, "join_timeout_ms": 30_000}


@dataclass
class Played:
    """What a table with one stdio bot left behind."""

    record: dict[str, Any]
    stats: BridgeStats
    token: str
    stderr: str
    logs: list[dict[str, Any]]

    @property
    def faults(self) -> list[dict[str, Any]]:
        """The stdio seat's faults."""
        return [f for f in self.record["faults"] if f["seat"] == STDIO_SEAT]

    @property
    def decisions(self) -> list[dict[str, Any]]:
        """The stdio seat's decisions."""
        return [d for d in self.record["decisions"] if d["seat"] == STDIO_SEAT]


class _Records(logging.Handler):
    """Keeps every record logged through the standard library (the SDK's loggers)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


#: Drives a table on a manual clock while it plays: given the server, the table's id, the
#: clock, the bridge's task and the bot's stderr file.
Driver = Callable[[RefereeServer, str, ManualClock, "asyncio.Task[BridgeStats]", Path], Awaitable[object]]


async def _play(
    tmp_path: Path,
    command: list[str],
    clock: ManualClock | None = None,
    drive: Driver | None = None,
    script: TableScript | None = None,
    **config: Any,
) -> Played:
    """One table, the stdio bot in seat STDIO_SEAT; with a manual ``clock`` (the referee's), the
    ``drive`` coroutine moves it on while the table plays; ``script`` scripts its game (the
    bot test kit's seam: a legal answer refused on purpose)."""
    records = tmp_path / "records"
    stderr_path = tmp_path / "bot.stderr"
    bridge_log = _Records()
    sdk_logger = logging.getLogger("hearts_client")
    sdk_logger.addHandler(bridge_log)
    with contextlib.ExitStack() as stack:
        stack.callback(sdk_logger.removeHandler, bridge_log)
        logs = stack.enter_context(structlog.testing.capture_logs())
        async with running_server(records) as server:
            server.registry.clock = clock
            server.registry.scripts = {"stdio": script} if script is not None else None
            names = ["heuristic"] * PLAYERS
            names[STDIO_SEAT] = "stdio"
            table = await create_table(server.address, names, seed="stdio", **{**GAME, **config})
            tokens = {s.seat: s.token for s in table.seats}
            others = [
                sdk_bot(server.address, token, "heuristic", str(seat))
                for seat, token in tokens.items()
                if seat != STDIO_SEAT
            ]
            with stderr_path.open("wb") as stderr:
                process, pipes = await start_process(
                    command, cwd=tmp_path, env=bot_environment(), stderr=stderr
                )
            try:
                bridge = asyncio.create_task(
                    run_bridge(pipes, server.address, tokens[STDIO_SEAT], name="stdio")
                )
                if clock is not None and drive is not None:
                    driving = drive(server, table.table_id, clock, bridge, stderr_path)
                    stack.callback(asyncio.ensure_future(driving).cancel)
                done = await await_table(server.address, table.table_id)
                assert done.status == apb.TABLE_STATUS_DONE
                stats = await asyncio.wait_for(bridge, 60)
                assert await asyncio.wait_for(asyncio.gather(*others), 60) == [1] * (PLAYERS - 1)
            finally:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                await process.wait()
    (record,) = load_records(records)
    outcome = replay(record)
    assert outcome["error"] is None  # every decision of the record, the stdio seat's too, is legal
    # The SDK bots never faulted: whatever the stdio bot did stayed in its seat.
    assert all(f["seat"] == STDIO_SEAT for f in record["faults"])
    # No traceback anywhere in the logs (the referee's, and the bridge's, which logs through the
    # standard library like all of the SDK): nothing was logged with an exception.
    assert not [
        entry for entry in logs if entry.get("exc_info") or entry["log_level"] in ("error", "critical")
    ]
    assert not [r.getMessage() for r in bridge_log.records if r.exc_info or r.levelno >= logging.ERROR]
    return Played(record, stats, tokens[STDIO_SEAT], stderr_path.read_text(errors="replace"), logs)


def _python_bot(tmp_path: Path, source: str) -> list[str]:
    path = tmp_path / "bot.py"
    path.write_text(source)
    return [sys.executable, str(path)]


def _assert_played_cleanly(played: Played, rejected: int = 0) -> None:
    assert played.faults == []
    assert played.decisions and not [d for d in played.decisions if d.get("by_referee")]
    assert played.stats.answers == len(played.decisions) + rejected
    assert played.stats.timeouts == played.stats.rejected_by_bridge == 0
    assert played.stats.rejected_by_referee == rejected
    assert not played.stats.closed_stdout


def test_the_shell_example_bot_plays_a_full_game_legally(tmp_path: Path) -> None:
    if shutil.which("sh") is None:
        pytest.fail("no sh on this machine")  # a POSIX system always has one: do not skip
    played = asyncio.run(_play(tmp_path, ["sh", str(EXAMPLES / "first_legal.sh")]))
    _assert_played_cleanly(played)
    # It played the first legal card every time: check one against the record's replay.
    plays = [d for d in played.decisions if d["kind"] == "play"]
    assert len(plays) > 17


def test_the_plain_python_example_bot_plays_a_full_game_legally(tmp_path: Path) -> None:
    played = asyncio.run(_play(tmp_path, [sys.executable, str(EXAMPLES / "lowest.py")]))
    _assert_played_cleanly(played)
    assert len(played.record["hands"]) >= 2  # a whole game to target_score


#: The bot's first decision is its pass (request 1 of its seat), its second its first card.
FIRST_CARD = 2


@pytest.mark.parametrize("example", ["lowest.py", "first_legal.sh"])
def test_the_examples_answer_again_after_a_rejection(tmp_path: Path, example: str) -> None:
    """A referee rejects an answer; the protocol asks one answer line per rejected line: the
    example answers the same request again, in time (the kit's referee refuses a legal card)."""
    program = [sys.executable] if example.endswith(".py") else ["sh"]
    script = TableScript(refuse=frozenset({(STDIO_SEAT, FIRST_CARD)}))
    played = asyncio.run(_play(tmp_path, [*program, str(EXAMPLES / example)], script=script))
    assert played.stats.rejected_by_referee == 1
    _assert_played_cleanly(played, rejected=1)


SLOW_START_BOT = """
import time
time.sleep(1.5)   # an interpreter or a JIT taking its time, before reading anything
""" + (EXAMPLES / "lowest.py").read_text()


def test_a_slow_starting_bot_is_not_charged_its_start_up(tmp_path: Path) -> None:
    """The bridge joins once its bot has read its first line: a bot that takes longer to start
    than a decision may last still makes its first decision (a gRPC bot joins once it runs)."""
    played = asyncio.run(_play(tmp_path, _python_bot(tmp_path, SLOW_START_BOT), decision_time_ms=1000))
    _assert_played_cleanly(played)


RETRYING_BOT = """
import json, sys

for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "rejected":
        print("REJECTED", message["code"], message["time_left_ms"] > 0, file=sys.stderr, flush=True)
        answer = pending  # now the legal answer
    elif message["type"] == "decide":
        kind = message["kind"]
        legal = {"pass": message["view"]["hand"][:3], "play": (message["legal"] or [""])[0],
                 "moon": "self_minus_26"}[kind]
        pending = {"id": message["id"], kind: legal}
        # First a wrong answer: an unknown card for the referee, a bad option for the bridge.
        wrong = {"pass": ["ZZ", "ZZ", "ZZ"], "play": "ZZ", "moon": "never"}[kind]
        answer = {"id": message["id"], kind: wrong}
    else:
        continue
    print(json.dumps(answer), flush=True)
"""


def test_a_rejected_answer_is_told_back_and_the_bot_answers_again_in_time(tmp_path: Path) -> None:
    played = asyncio.run(_play(tmp_path, _python_bot(tmp_path, RETRYING_BOT), max_hands=1))
    assert played.faults == []
    assert not [d for d in played.decisions if d.get("by_referee")]
    # Every decision was first rejected by the referee (ZZ is no card), then answered legally.
    assert played.stats.rejected_by_referee == played.stats.decisions > 0
    assert played.stderr.count("REJECTED UNKNOWN_CARD True") == played.stats.decisions


GARBAGE_BOT = r"""
import json, sys

GARBAGE = [  # the first three go to the pass, then three to each play
    b'{"pass": ["\\ud800", "AS", "KS"]}',
    b'{"play": "' + b"x" * 70000 + b'"}',
    b"[" * 60000 + b"]" * 60000,
    b'{"play": "\\ud800"}',
    b"not json at all",
    b"[1, 2, 3]",
    b'{"play": 7}',
    b'{"pass": "AS KS QS"}',
    b'{"play": "2C", "pass": ["2C", "3C", "4C"]}',
    b'{"moon": "self_minus_26"}',
    b'{"id": -1, "play": "2C"}',
    b'{"id": 123456789, "play": "2C"}',
    b"\xff\xfe\x00garbage",
    b'{"id": 1e999, "play": "2C"}',
    b'{"id": ' + b"9" * 5000 + b', "play": "2C"}',
]
count = 0
for line in sys.stdin.buffer:
    if json.loads(line)["type"] != "decide":
        continue
    for _ in range(3):
        sys.stdout.buffer.write(GARBAGE[count % len(GARBAGE)] + b"\n")
        count += 1
    sys.stdout.buffer.flush()
"""


def test_a_garbage_bot_is_faulted_and_nothing_reaches_the_referee(tmp_path: Path) -> None:
    played = asyncio.run(_play(tmp_path, _python_bot(tmp_path, GARBAGE_BOT)))
    assert [f["kind"] for f in played.faults] == ["timeout"] * 3
    assert played.faults[-1].get("retired") is True
    assert played.stats.answers == 0 and played.stats.rejected_by_referee == 0
    # Three lines a decision until retired (fewer if the bot was too slow to write them all).
    assert 0 < played.stats.rejected_by_bridge <= 3 * 3
    assert played.stats.overlong == 2


HANGING_BOT = """
import time
time.sleep(3600)   # never reads, never answers
"""


def test_a_hanging_bot_is_faulted_on_time_and_retired(tmp_path: Path) -> None:
    played = asyncio.run(
        _play(tmp_path, _python_bot(tmp_path, HANGING_BOT), decision_time_ms=300, max_faults=2)
    )
    assert [f["kind"] for f in played.faults] == ["timeout", "timeout"]
    assert played.stats.timeouts == 2 and played.stats.answers == 0
    # Retired: the referee played the rest of its game without asking.
    assert {d.get("by_referee") for d in played.decisions} == {"timeout", "retired"}


#: Answers each play only once the next one has been asked: late by construction (the referee
#: timed the first out before it could ask the second). Passes and moon choices are answered at
#: once, so that while it holds a play it is the one seat the referee waits for.
LATE_BOT = """
import json, sys

held = None
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "rejected":
        print("REJECTED", message["code"], message["id"], file=sys.stderr, flush=True)
    if message["type"] != "decide":
        continue
    answer = {"pass": message["view"]["hand"][:3], "play": (message["legal"] or [""])[0],
              "moon": "self_minus_26"}[message["kind"]]
    if message["kind"] != "play":
        print(json.dumps({"id": message["id"], message["kind"]: answer}), flush=True)
        continue
    if held is not None:
        print(json.dumps(held), flush=True)  # the previous play's answer, now too late
    held = {"id": message["id"], "play": answer}
    print("ASKED", message["id"], file=sys.stderr, flush=True)
"""
LATE_FAULTS = 3
#: The bridge keeps its own time (real, from the request's time_left_ms): it gives up on a held
#: play after this long and then passes the next request on; its window for the next play is
#: as long, ample for the bot to write one line. The referee's deadlines pass only when the test
#: moves its manual clock on.
LATE_DECISION_MS = 1000


async def _time_out_held_plays(
    server: RefereeServer, table_id: str, clock: ManualClock, bridge: object, stderr: Path
) -> None:
    """Times out each play LATE_BOT holds, once the bridge has told it its previous late answer
    was stale: each late answer reaches the bridge while the next play is open, by events."""
    table = server.registry.tables[table_id]
    seat = table.seats[STDIO_SEAT]

    def lines(word: str) -> int:
        text = stderr.read_text(errors="replace") if stderr.exists() else ""
        return sum(1 for line in text.splitlines() if line.startswith(word))

    for n in range(1, LATE_FAULTS + 1):
        await until(lambda n=n: lines("ASKED") >= n and lines("REJECTED") >= n - 1, f"play {n} asked")
        await until(lambda: seat.pending is not None, f"play {n} open")
        asked = seat.pending
        await clock.advance(table.settings.policy.decision_ms / 1000)
        await until(lambda asked=asked: seat.pending is not asked, f"play {n} timed out")


def test_a_late_answer_is_not_taken_for_the_next_decision(tmp_path: Path) -> None:
    played = asyncio.run(
        _play(
            tmp_path,
            _python_bot(tmp_path, LATE_BOT),
            ManualClock(),
            _time_out_held_plays,
            decision_time_ms=LATE_DECISION_MS,
            max_faults=LATE_FAULTS,
        )
    )
    assert [f["kind"] for f in played.faults] == ["timeout"] * LATE_FAULTS
    # Each late answer reached the bridge while the next play was open: each was told back as
    # stale, and none went to the referee. The last play held is never sent: the seat retired.
    assert played.stats.answers == played.stats.decisions - LATE_FAULTS
    assert played.stats.rejected_by_bridge == LATE_FAULTS - 1
    told = [line.split()[1] for line in played.stderr.splitlines() if line.startswith("REJECTED")]
    assert told == ["STALE_REQUEST"] * (LATE_FAULTS - 1), told


FLOODS = {
    "lines": 'import sys\nwhile True: sys.stdout.write(\'{"play": "2C"}\\n\' * 1000)\n',
    "one_endless_line": "import sys\nwhile True: sys.stdout.write('x' * 65536)\n",
}


@pytest.mark.parametrize("flood", sorted(FLOODS))
def test_a_bot_flooding_stdout_is_read_within_bounds_and_faulted(tmp_path: Path, flood: str) -> None:
    started = time.monotonic()
    played = asyncio.run(_play(tmp_path, _python_bot(tmp_path, FLOODS[flood]), max_faults=2))
    elapsed = time.monotonic() - started
    assert [f["kind"] for f in played.faults] == ["timeout", "timeout"]
    stats = played.stats
    if flood == "lines":
        # Lines written before a decision are out of turn; once asked, the bridge listened to
        # MAX_ANSWERS lines and no more: the referee never saw more than that.
        assert stats.out_of_turn > 0 and stats.dropped > 0
        assert stats.rejected_by_bridge > 0
        assert stats.answers + stats.rejected_by_bridge <= MAX_ANSWERS * stats.decisions
    else:
        assert stats.overlong == 0 and stats.answers == 0  # the line never ended
    # Read at READ_BYTES_PER_S at most (plus one burst): the flood waited in its pipe.
    assert stats.bytes_read <= (elapsed + 1) * READ_BYTES_PER_S + 2 * MAX_LINE_BYTES


QUITTERS = {
    # Each reads until its game has started (the bridge has joined the table), then quits.
    "exits": "import sys\nfor line in sys.stdin:\n    if 'game_started' in line: sys.exit(3)\n",
    "closes_stdout": "import os, sys, time\nfor line in sys.stdin:\n    if 'game_started' in line: break\n"
    "os.close(1)\ntime.sleep(3600)\n",
}


async def _time_out_once_the_bridge_left(
    server: RefereeServer, table_id: str, clock: ManualClock, bridge: asyncio.Task[BridgeStats], stderr: Path
) -> None:
    """Once the bridge has left the table and the referee has seen it go, times the seat out
    each time the referee waits for it."""
    await asyncio.wait({bridge})
    seat = server.registry.tables[table_id].seats[STDIO_SEAT]
    await until(lambda: seat.connection is None, "the referee saw the bridge go")
    await time_out_each_decision(server, table_id, STDIO_SEAT, clock)


@pytest.mark.parametrize("quitter", sorted(QUITTERS))
def test_a_bot_that_quits_leaves_its_seat_to_the_referee(tmp_path: Path, quitter: str) -> None:
    bot = _python_bot(tmp_path, QUITTERS[quitter])
    played = asyncio.run(_play(tmp_path, bot, ManualClock(), _time_out_once_the_bridge_left, max_faults=2))
    assert played.stats.closed_stdout
    assert played.stats.decisions <= 1 and played.stats.answers == 0
    # The bridge left the table: the referee saw a seat gone, not a seat too slow.
    assert [f["kind"] for f in played.faults] == ["disconnected", "disconnected"]
    assert played.faults[-1].get("retired") is True


SPY_BOT = """
import json, os, sys
with open("spy.txt", "w") as out:
    out.write(json.dumps({"argv": sys.argv, "env": dict(os.environ)}) + "\\n")
    for line in sys.stdin:
        out.write(line)
        out.flush()
        message = json.loads(line)
        if message["type"] == "decide":
            legal = message["legal"]
            answer = {"pass": message["view"]["hand"][:3], "play": legal and legal[0],
                      "moon": "self_minus_26"}[message["kind"]]
            print(json.dumps({message["kind"]: answer}), flush=True)
"""


def test_the_token_never_reaches_the_bot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HEARTS_TOKEN", "inherited-secret")
    monkeypatch.setenv("HEARTS_ADMIN_TOKEN", "admin-secret")
    played = asyncio.run(_play(tmp_path, _python_bot(tmp_path, SPY_BOT), max_hands=1))
    _assert_played_cleanly(played)  # answers without "id" are taken for the open decision
    seen = (tmp_path / "spy.txt").read_text()
    assert played.token not in seen
    assert "inherited-secret" not in seen and "admin-secret" not in seen
    first = json.loads(seen.splitlines()[0])
    assert not [k for k in first["env"] if k in ("HEARTS_TOKEN", "HEARTS_SERVER", "HEARTS_ADMIN_TOKEN")]
    # Every line the bot got is versioned and typed.
    lines = [json.loads(line) for line in seen.splitlines()[1:]]
    assert lines and all(m["v"] == 1 and isinstance(m["type"], str) for m in lines)
    assert {"game_started", "hand_started", "decide", "card_played", "trick_completed"} <= {
        m["type"] for m in lines
    }


def test_the_bridge_command_refused_by_the_referee_says_one_line(tmp_path: Path) -> None:
    async def scenario() -> tuple[int, str]:
        async with running_server(tmp_path / "records") as server:
            await create_table(server.address, ["heuristic"] * PLAYERS)
            process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "hearts_client.stdio_bridge",
                "--server",
                server.address,
                "--token",
                "not-a-seat-token",
                "--",
                "sh",
                str(EXAMPLES / "first_legal.sh"),
                stderr=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.DEVNULL,
            )
            _, stderr = await asyncio.wait_for(process.communicate(), 120)
            assert process.returncode is not None
            return process.returncode, stderr.decode()

    code, stderr = asyncio.run(scenario())
    assert code == 1
    assert (
        stderr.strip()
        .splitlines()[-1]
        .startswith(
            "python -m hearts_client.stdio_bridge: error: the referee refused the bot: UNAUTHENTICATED"
        )
    )
    assert "Traceback" not in stderr


class CuttableProxy:
    """A real TCP proxy to the referee that can drop every connection at once, as a network
    failure would."""

    def __init__(self, target: str) -> None:
        host, port = target.rsplit(":", 1)
        self.target = (host, int(port))
        self.writers: list[asyncio.StreamWriter] = []
        self.to_client = 0
        self.server: asyncio.Server | None = None

    async def start(self) -> str:
        self.server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        port = self.server.sockets[0].getsockname()[1]
        return f"127.0.0.1:{port}"

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection(*self.target)
        self.writers += [writer, up_writer]

        async def pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter, down: bool) -> None:
            with contextlib.suppress(OSError):
                while data := await source.read(65536):
                    if down:
                        self.to_client += len(data)
                    sink.write(data)
                    await sink.drain()
            sink.close()

        await asyncio.gather(pipe(reader, up_writer, False), pipe(up_reader, writer, True))

    def cut(self) -> None:
        for writer in self.writers:
            writer.close()
        self.writers.clear()

    async def stop(self) -> None:
        self.cut()
        if self.server is not None:
            self.server.close()


RECONNECTED_BOT = """
import json, sys

for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "game_started":
        print("GAME_STARTED", file=sys.stderr, flush=True)
    elif message["type"] == "decide":
        kind = message["kind"]
        answer = {"pass": message["view"]["hand"][:3], "play": (message["legal"] or [""])[0],
                  "moon": "self_minus_26"}[kind]
        print(json.dumps({"id": message["id"], kind: answer}), flush=True)
"""


def test_the_bridge_reconnects_when_its_connection_breaks(tmp_path: Path) -> None:
    bot = _python_bot(tmp_path, RECONNECTED_BOT)
    stderr_path = tmp_path / "bot.stderr"

    async def scenario() -> tuple[dict[str, Any], BridgeStats]:
        async with running_server(tmp_path / "records") as server:
            names = ["heuristic"] * PLAYERS
            names[STDIO_SEAT] = "stdio"
            table = await create_table(
                server.address, names, seed="cut", **{**GAME, "decision_time_ms": 5000}
            )
            tokens = {s.seat: s.token for s in table.seats}
            others = [
                sdk_bot(server.address, t, "heuristic", str(s)) for s, t in tokens.items() if s != STDIO_SEAT
            ]
            proxy = CuttableProxy(server.address)
            address = await proxy.start()
            with stderr_path.open("wb") as stderr:
                process, pipes = await start_process(bot, env=bot_environment(), stderr=stderr)
            try:
                bridge = asyncio.create_task(run_bridge(pipes, address, tokens[STDIO_SEAT], name="stdio"))
                while proxy.to_client < 20_000 and not bridge.done():
                    await asyncio.sleep(0.01)
                proxy.cut()  # mid-game: the bridge must come back by itself
                done = await await_table(server.address, table.table_id)
                stats = await asyncio.wait_for(bridge, 60)
                await asyncio.wait_for(asyncio.gather(*others), 60)
            finally:
                await proxy.stop()
                await asyncio.wait_for(process.wait(), 60)
            return json.loads(done.games[0].record_json), stats

    record, stats = asyncio.run(scenario())
    assert stderr_path.read_text().count("GAME_STARTED") == 2  # announced again on reconnection
    assert record["faults"] == []  # back within the open decision's time
    assert not [d for d in record["decisions"] if d["seat"] == STDIO_SEAT and d.get("by_referee")]
    assert stats.answers >= stats.decisions - 1 > 0 and not stats.closed_stdout
