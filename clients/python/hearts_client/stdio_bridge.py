"""The stdio bridge: plays a seat over gRPC for a bot process that speaks JSON lines.

The bridge is a gRPC client of the referee like any bot (it runs on :func:`hearts_client.sdk.
play_seat`, with its join and reconnections) and holds the seat's token, which never reaches the
bot. Each decision request becomes a ``decide`` line on the bot's stdin; the bot's answer line
on stdout becomes the decision; a rejection goes back as a ``rejected`` line, and the bot may
try again while its time lasts. Events become informational lines. The lines are those of
:mod:`hearts_client.stdio_protocol`.

Whatever the bot does, the bridge neither blocks nor fails:

- stdout is read in chunks with a bounded buffer: a line over :data:`MAX_LINE_BYTES` is
  dropped (and told back as ``MALFORMED``), and reading is throttled to
  :data:`READ_BYTES_PER_S`, so a bot flooding stdout is slowed down instead of burning the CPU;
- a line that is not a well-formed answer of the open decision is told back as ``rejected``
  and never sent to the referee; a line written while no decision is open (out of turn) is
  dropped and told back as ``NOT_YOUR_TURN`` (at most :data:`STALE_FEEDBACK` such lines per
  decision); after :data:`MAX_ANSWERS` answers to one decision the bridge stops listening to it;
- a bot that does not answer in time is not answered for: the referee applies its default and
  records a fault, exactly as for a slow gRPC bot;
- writes to stdin never wait: past :data:`MAX_UNREAD_BYTES` not yet read by the bot, lines are
  dropped (a bot that does not read its input cannot answer anyway);
- when the bot closes its stdout (or exits), the bridge leaves the table: the referee treats
  the seat as disconnected, as for a gRPC bot that dies (after its 5 s reconnection grace it
  plays the seat at once, each decision a fault).

The bridge writes a ``hello`` line first and joins the table only once the bot has read it (or
after :data:`START_WAIT_S`): a bot's start-up (an interpreter loading, a JIT warming) is not
charged to its first decision, as a gRPC bot's is not (it joins once it runs).

When the table is done the bridge closes the bot's stdin and stdout: the bot should then exit.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import enum
import errno
import fcntl
import os
import shutil
import struct
import sys
import termios
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cancellation_hearts.v1 import referee_service_pb2 as rpb
from hearts_client._log import configure_stderr_logging, get_logger
from hearts_client.sdk import BotRunError, TokenError, play_seat, read_token
from hearts_client.stdio_protocol import (
    MAX_LINE_BYTES,
    AnswerError,
    DecisionKind,
    decide_message,
    decision_kind,
    encode,
    event_message,
    events_of,
    hello_message,
    parse_answer,
    rejected_message,
)
from hearts_core.lifetime import tied_argv

log = get_logger(__name__)

#: Bytes of stdout read per second at most, on average (a burst of as much is allowed).
READ_BYTES_PER_S = 1024 * 1024
#: Bytes asked of the pipe at once.
_CHUNK = 16 * 1024
#: Lines read but not yet looked at, beyond which more are dropped.
MAX_PENDING_LINES = 64
#: Bytes written to the bot's stdin that it has not read yet, beyond which lines are dropped.
MAX_UNREAD_BYTES = 1024 * 1024
#: Answer lines one decision may take (rejected ones included) before the bridge stops listening.
MAX_ANSWERS = 10
#: ``NOT_YOUR_TURN`` lines told back per decision; more out-of-turn lines are dropped silently.
STALE_FEEDBACK = 5
#: Seconds the bridge waits for its bot to read the hello line before it joins the table anyway.
START_WAIT_S = 10.0
#: Seconds between two looks at whether the bot has read it.
_START_POLL_S = 0.005


class _BotGone(Exception):
    """The bot's stdout ended: the bridge leaves the table."""


class _Mark(enum.Enum):
    """What the line reader queues besides lines."""

    TOO_LONG = "too_long"
    EOF = "eof"


@dataclass
class BridgeStats:
    """What went on between the bridge and its bot, for the logs and the tests.

    Attributes:
        decisions: Decision requests passed to the bot.
        answers: Answers sent to the referee.
        rejected_by_referee: Answers the referee rejected.
        rejected_by_bridge: Lines refused by the bridge (malformed, wrong kind, stale id, ...).
        timeouts: Decisions the bot did not answer in time.
        out_of_turn: Lines written while no decision was open.
        overlong: Lines longer than :data:`MAX_LINE_BYTES`.
        dropped: Lines dropped because too many were waiting.
        unwritten: Lines not written because the bot was not reading its stdin.
        bytes_read: Bytes read from the bot's stdout.
        closed_stdout: Whether the bot closed its stdout before the table was done.
        refused: The lines the bridge refused, by code (``MALFORMED``, ``STALE_REQUEST``, ...).
    """

    decisions: int = 0
    answers: int = 0
    rejected_by_referee: int = 0
    rejected_by_bridge: int = 0
    timeouts: int = 0
    out_of_turn: int = 0
    overlong: int = 0
    dropped: int = 0
    unwritten: int = 0
    bytes_read: int = 0
    closed_stdout: bool = False
    refused: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The counters as a JSON object."""
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


#: What a bot that has written nothing on its stdout is told (in the logs).
BUFFERING_HINT = (
    "the bot wrote nothing on its stdout: it may be buffering its output (a pipe is not a "
    "terminal); write one line per answer and flush after every line (Python: print(..., "
    "flush=True) or python -u; C: fflush(stdout); Java: System.out.flush())"
)


class _StdinProtocol(asyncio.BaseProtocol):
    """The write end of a bot's stdin needs no callbacks: the bridge never waits on it."""


@dataclass
class BotPipes:
    """The bridge's ends of a bot's stdin and stdout (the bridge closes both when it is done).

    Attributes:
        stdin: Written to; never waited on.
        stdout: Read from.
    """

    stdin: asyncio.WriteTransport
    stdout: asyncio.StreamReader
    stdout_transport: asyncio.ReadTransport

    @classmethod
    async def connect(cls, stdin_fd: int, stdout_fd: int) -> BotPipes:
        """Takes over the parent's ends of a bot's two pipes (and closes them when done).

        A launcher that starts the bot its own way (in a sandbox, say) makes two ``os.pipe()``,
        gives the bot the read end of one as stdin and the write end of the other as stdout,
        closes those two in the parent, and passes the other two here.

        Args:
            stdin_fd: The write end of the bot's stdin pipe.
            stdout_fd: The read end of the bot's stdout pipe.
        """
        loop = asyncio.get_running_loop()
        stdin, _ = await loop.connect_write_pipe(_StdinProtocol, os.fdopen(stdin_fd, "wb", buffering=0))
        reader = asyncio.StreamReader(limit=_CHUNK, loop=loop)
        stdout, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader, loop=loop), os.fdopen(stdout_fd, "rb", buffering=0)
        )
        return cls(stdin=stdin, stdout=reader, stdout_transport=stdout)

    def close(self) -> None:
        """Closes both ends: the bot reads the end of its input, and its writes fail from now."""
        self.stdin.close()
        self.stdout_transport.close()


class _LineReader:
    """Reads the bot's stdout into a bounded queue of lines, throttled."""

    def __init__(self, stdout: asyncio.StreamReader, stats: BridgeStats, clock: Callable[[], float]) -> None:
        self.stdout = stdout
        self.stats = stats
        self.clock = clock
        self.queue: asyncio.Queue[bytes | _Mark] = asyncio.Queue()
        self.eof = False

    def _put(self, item: bytes | _Mark) -> None:
        if self.queue.qsize() >= MAX_PENDING_LINES:
            self.stats.dropped += 1
            return
        self.queue.put_nowait(item)

    async def run(self) -> None:
        """Reads until stdout ends (or cannot be read)."""
        buffer = bytearray()
        skipping = False  # inside a line that is already too long
        allowance = float(READ_BYTES_PER_S)
        last = self.clock()
        try:
            while chunk := await self.stdout.read(_CHUNK):
                self.stats.bytes_read += len(chunk)
                start = 0
                while (end := chunk.find(b"\n", start)) >= 0:
                    if skipping:
                        skipping = False
                        self.stats.overlong += 1
                        self._put(_Mark.TOO_LONG)
                    else:
                        buffer += chunk[start:end]
                        line = bytes(buffer).strip()
                        if len(line) > MAX_LINE_BYTES:
                            self.stats.overlong += 1
                            self._put(_Mark.TOO_LONG)
                        elif line:
                            self._put(line)
                    buffer.clear()
                    start = end + 1
                if not skipping:
                    buffer += chunk[start:]
                    if len(buffer) > MAX_LINE_BYTES:
                        buffer.clear()
                        skipping = True
                # Throttle: a token bucket of READ_BYTES_PER_S, so a flood waits in the pipe.
                now = self.clock()
                allowance = min(float(READ_BYTES_PER_S), allowance + (now - last) * READ_BYTES_PER_S)
                last = now
                allowance -= len(chunk)
                if allowance < 0:
                    await asyncio.sleep(-allowance / READ_BYTES_PER_S)
        except (OSError, ValueError):
            pass  # a broken pipe is an end of output like any other
        finally:
            self.eof = True
            self.queue.put_nowait(_Mark.EOF)  # past the cap: it must wake a waiting decision


@dataclass
class _Open:
    """The decision being asked of the bot."""

    request: rpb.DecisionRequest
    kind: DecisionKind
    deadline: float
    answers: int = 0
    feedback: int = STALE_FEEDBACK
    #: The bridge has stopped listening to this decision (too many answers).
    given_up: bool = False


@dataclass
class StdioPlayer:
    """A :class:`hearts_client.sdk.SeatPlayer` that asks a bot process over its stdin/stdout.

    Args:
        stdin: The bot's stdin.
        lines: The reader of its stdout.
        stats: Where the counters go.
        clock: Seconds, monotonic (the event loop's clock by default).
        notice: Told, once, when a decision timed out and the bot has written nothing at all.
    """

    stdin: asyncio.WriteTransport
    lines: _LineReader
    stats: BridgeStats
    clock: Callable[[], float]
    notice: Callable[[str], None] | None = None
    games: int = 0
    #: Whether the last game of the table has ended (the bot may then exit before the stream).
    table_over: bool = False
    open: _Open | None = None
    _last_game: bool = field(default=False, repr=False)
    _warned_unread: bool = field(default=False, repr=False)
    _warned_silent: bool = field(default=False, repr=False)

    @property
    def games_completed(self) -> int:
        """Games seen to end."""
        return self.games

    async def respond(self, response: rpb.PlayResponse) -> rpb.Decision | None:
        """Passes one referee message on to the bot; returns its answer to a request, if any.

        Raises:
            _BotGone: once the bot's stdout has ended (before the table's end): the stream
                must end, so that the referee plays the seat without waiting for it.
        """
        if self.lines.eof and not self.table_over:
            raise _BotGone
        which = response.WhichOneof("message")
        if which == "rejection":
            return await self._rejected(response.rejection)
        for event in events_of(response):  # a decision request's own events come first
            name = event.WhichOneof("event")
            if name == "game_started":
                started = event.game_started
                self._last_game = started.game_number + 1 >= started.games_total
            elif name == "game_completed":
                self.games += 1
                self.table_over = self._last_game
            message = event_message(event)
            if message is not None:
                self._write(message)
        if which == "decision_request":
            return await self._decide(response.decision_request)
        return None  # a snapshot, or a kind of message this version does not know

    async def _decide(self, request: rpb.DecisionRequest) -> rpb.Decision | None:
        try:
            kind = decision_kind(request)
        except ValueError:
            log.warning("stdio_unknown_decision", kind=request.kind)
            return None
        self.stats.decisions += 1
        self.open = _Open(request, kind, self.clock() + request.time_left_ms / 1000)
        self._drain_out_of_turn()
        self._write(decide_message(request))
        return await self._answer()

    async def _rejected(self, rejection: rpb.Rejection) -> rpb.Decision | None:
        self.stats.rejected_by_referee += 1
        current = self.open
        if current is None or current.given_up or rejection.request_id != current.request.request_id:
            # About an earlier request, or one the bridge no longer listens to: told, not reopened.
            self._write(rejected_message(rejection.request_id or None, rejection.code, rejection.reason, 0))
            return None
        self._drain_out_of_turn()
        self._write(rejected_message(rejection.request_id, rejection.code, rejection.reason, self._left_ms()))
        return await self._answer()

    def _left_ms(self) -> int:
        return 0 if self.open is None else max(0, int((self.open.deadline - self.clock()) * 1000))

    async def _answer(self) -> rpb.Decision | None:
        """Waits for the bot's answer to the open decision, until its deadline."""
        current = self.open
        assert current is not None
        request_id = current.request.request_id
        while not current.given_up:
            if self.lines.eof and self.lines.queue.empty():
                raise _BotGone
            remaining = current.deadline - self.clock()
            if remaining <= 0:
                break
            # Not asyncio.wait_for: on Python 3.11 it can swallow a cancellation that comes as
            # the line does, and the bridge would keep a seat whose bot is gone.
            getter = asyncio.ensure_future(self.lines.queue.get())
            try:
                done, _ = await asyncio.wait({getter}, timeout=remaining)
            finally:
                getter.cancel()
            if not done:
                break
            line = getter.result()
            if line is _Mark.EOF:
                raise _BotGone
            current.answers += 1
            try:
                if line is _Mark.TOO_LONG:
                    raise AnswerError("MALFORMED", f"the line is longer than {MAX_LINE_BYTES} bytes")
                assert isinstance(line, bytes)
                answer = parse_answer(line, current.kind, request_id)
            except AnswerError as exc:
                self.stats.rejected_by_bridge += 1
                self.stats.refused[exc.code] = self.stats.refused.get(exc.code, 0) + 1
                if current.answers >= MAX_ANSWERS:
                    current.given_up = True
                    self._write(
                        rejected_message(
                            request_id, "TOO_MANY_ANSWERS", f"{MAX_ANSWERS} answers to one decision", 0
                        )
                    )
                    log.warning("stdio_too_many_answers", request_id=request_id)
                    break
                self._write(rejected_message(request_id, exc.code, exc.reason, self._left_ms()))
                continue
            if current.answers >= MAX_ANSWERS:
                current.given_up = True  # this one goes to the referee, but no more after it
            self.stats.answers += 1
            return answer.to_pb(request_id)
        if not current.given_up:
            self.stats.timeouts += 1
            log.info("stdio_no_answer_in_time", request_id=request_id)
            if self.stats.bytes_read == 0 and not self._warned_silent:
                # The classic pitfall: stdout to a pipe is block-buffered, so the answers wait
                # in the bot's buffer until it exits.
                self._warned_silent = True
                log.warning("stdio_bot_wrote_nothing", hint=BUFFERING_HINT)
                if self.notice is not None:
                    self.notice(BUFFERING_HINT)
        return None

    def _drain_out_of_turn(self) -> None:
        """Drops the lines written before the bot was asked: none can answer this decision."""
        current = self.open
        while not self.lines.queue.empty():
            line = self.lines.queue.get_nowait()
            if line is _Mark.EOF:
                continue  # the reader's eof flag says it
            self.stats.out_of_turn += 1
            if current is not None and current.feedback > 0:
                current.feedback -= 1
                self._write(
                    rejected_message(
                        None, "NOT_YOUR_TURN", "this line was written before the decision was asked", 0
                    )
                )

    def _write(self, message: dict[str, Any]) -> None:
        """Writes one line to the bot, never waiting for it to read."""
        if self.stdin.is_closing():
            self.stats.unwritten += 1
            return
        if self.stdin.get_write_buffer_size() > MAX_UNREAD_BYTES:
            self.stats.unwritten += 1
            if not self._warned_unread:
                self._warned_unread = True
                log.warning("stdio_bot_not_reading", unread_bytes=self.stdin.get_write_buffer_size())
            return
        self.stdin.write(encode(message))


async def run_bridge(
    pipes: BotPipes,
    address: str,
    token: str,
    *,
    name: str,
    root_certificates: bytes | None = None,
    give_up_after: float = 30.0,
    notice: Callable[[str], None] | None = None,
) -> BridgeStats:
    """Plays the seat of ``token`` for the bot at the other end of ``pipes``.

    Returns when the table is done, or as soon as the bot closes its stdout (the seat is then
    left to the referee's default rule). Either way the pipes are closed on return: the bot
    reads the end of its input and should exit.

    Args:
        pipes: The bot's stdin and stdout.
        address: The referee, ``HOST:PORT`` or ``unix:PATH``.
        token: The seat's token (the bot never sees it).
        name: The bot's name, for the join and the logs.
        root_certificates: PEM roots to trust over TLS, or None for a plain channel.
        give_up_after: Seconds without a working stream before giving up.
        notice: Told, once, when a decision timed out while the bot had written nothing at
            all (it may be buffering its output), e.g. to note it in the bot's log at once.

    Returns:
        What went on.

    Raises:
        BotRunError: if the referee refuses the seat for good or cannot be reached.
    """
    loop = asyncio.get_running_loop()
    stats = BridgeStats()
    lines = _LineReader(pipes.stdout, stats, loop.time)
    player = StdioPlayer(pipes.stdin, lines, stats, loop.time, notice)
    reading = asyncio.create_task(lines.run())
    playing: asyncio.Task[int] | None = None
    try:
        await _started(pipes, player, lines)
        playing = asyncio.create_task(
            play_seat(
                player,
                address,
                token,
                name=name,
                root_certificates=root_certificates,
                give_up_after=give_up_after,
                events_in_request=True,
            )
        )
        await asyncio.wait({reading, playing}, return_when=asyncio.FIRST_COMPLETED)
        if not playing.done() and player.table_over:
            # The bot exited after the last game: the referee's closing status is on its way.
            await asyncio.wait({playing}, timeout=5.0)
        if not playing.done():
            # The bot is gone. A decision in progress ends the stream by itself (_BotGone); an
            # idle stream is cancelled (or ends at its next message, should the cancellation
            # be lost in the gRPC stack).
            playing.cancel()
            await asyncio.wait({playing})
        if playing.cancelled() or isinstance(playing.exception(), _BotGone):
            stats.closed_stdout = True
            log.warning("stdio_bot_closed_stdout", bot=name)
        else:
            playing.result()  # raises BotRunError when the referee refused the seat
    finally:
        tasks = [t for t in (reading, playing) if t is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        pipes.close()
    log.info("stdio_bridge_done", bot=name, **stats.to_json())
    return stats


async def _started(pipes: BotPipes, player: StdioPlayer, lines: _LineReader) -> None:
    """Writes the hello line and waits until the bot has read it (nothing is left unread in its
    stdin pipe), its stdout has ended, or :data:`START_WAIT_S` have passed."""
    player._write(hello_message())
    pipe = pipes.stdin.get_extra_info("pipe")
    if pipe is None:
        return
    loop = asyncio.get_running_loop()
    deadline = loop.time() + START_WAIT_S
    while not lines.eof and loop.time() < deadline and _unread(pipe.fileno()) > 0:
        await asyncio.sleep(_START_POLL_S)


def _unread(fd: int) -> int:
    """Bytes written to a pipe and not yet read (0 when it cannot be told)."""
    try:
        return int(struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0])
    except OSError:
        return 0


async def start_process(
    command: Sequence[str], *, cwd: Path | None = None, env: dict[str, str] | None = None, stderr: Any = None
) -> tuple[asyncio.subprocess.Process, BotPipes]:
    """Starts a stdio bot with a pipe for its stdin and one for its stdout.

    Args:
        command: The program and its arguments.
        cwd: Its working folder (default: this one).
        env: Its whole environment (default: this process's; see :func:`bot_environment`).
        stderr: Where its stderr goes: a file, a descriptor, or None for this process's.

    Returns:
        The process and the bridge's ends of its pipes.

    Raises:
        OSError: if the command cannot be started.
    """
    program = command[0] if command else ""
    if os.sep not in program and shutil.which(program, path=(env or os.environ).get("PATH")) is None:
        raise FileNotFoundError(errno.ENOENT, "no such program", program)
    if os.sep in program and not os.access(Path(cwd or ".") / program, os.X_OK):
        raise FileNotFoundError(errno.ENOENT, "no such executable file", program)
    child_stdin, stdin = os.pipe()
    stdout, child_stdout = os.pipe()
    try:
        process = await asyncio.create_subprocess_exec(
            # The bot dies with the bridge, even if the bridge is killed by SIGKILL.
            *tied_argv(command),
            stdin=child_stdin,
            stdout=child_stdout,
            stderr=stderr,
            cwd=cwd,
            env=env,
        )
    except BaseException:
        os.close(stdin)
        os.close(stdout)
        raise
    finally:
        os.close(child_stdin)
        os.close(child_stdout)
    return process, await BotPipes.connect(stdin, stdout)


#: Environment variables a stdio bot never gets: the bridge holds the seat.
HIDDEN_ENV = ("HEARTS_TOKEN", "HEARTS_TOKEN_FILE", "HEARTS_SERVER", "HEARTS_ADMIN_TOKEN")


def bot_environment(base: dict[str, str] | None = None, **extra: str) -> dict[str, str]:
    """The environment of a stdio bot: ``base`` (default: this process's) without the seat's
    secrets and address (:data:`HIDDEN_ENV`), plus ``extra``."""
    env = {k: v for k, v in (os.environ if base is None else base).items() if k not in HIDDEN_ENV}
    env.update(extra)
    return env


async def _main_async(args: argparse.Namespace, token: str) -> int:
    try:
        process, pipes = await start_process(args.command, env=bot_environment(HEARTS_BOT_NAME=args.name))
    except OSError as exc:
        print(f"{PROG}: error: cannot start {args.command[0]}: {exc}", file=sys.stderr)
        return 1
    roots = args.tls_ca.read_bytes() if args.tls_ca is not None else None
    try:
        await run_bridge(pipes, args.server, token, name=args.name, root_certificates=roots)
    except BotRunError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 1
    finally:
        try:
            await asyncio.wait_for(process.wait(), 3.0)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()
    return 0


PROG = "python -m hearts_client.stdio_bridge"


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m hearts_client.stdio_bridge [--server A] [--token-file F] -- COMMAND ...``.

    Starts COMMAND with pipes and plays its seat until the table is done. Takes the flags and
    environment variables of every bot (``--server``/HEARTS_SERVER, ``--token-file``/
    HEARTS_TOKEN_FILE or ``--token``/HEARTS_TOKEN, ``--name``/HEARTS_BOT_NAME, ``--tls-ca``);
    none of them reaches COMMAND.

    Returns:
        0 when the table is done, 1 when the referee refused the seat or the command could not
        be started, 2 on bad arguments.
    """
    parser = argparse.ArgumentParser(prog=PROG, description="Play a seat for a bot that speaks JSON lines.")
    parser.add_argument("--server", default=os.environ.get("HEARTS_SERVER", "127.0.0.1:50051"))
    parser.add_argument("--token", default=os.environ.get("HEARTS_TOKEN"))
    parser.add_argument("--token-file", default=os.environ.get("HEARTS_TOKEN_FILE"))
    parser.add_argument("--name", default=os.environ.get("HEARTS_BOT_NAME", "stdio-bot"))
    parser.add_argument("--tls-ca", type=Path, default=None)
    parser.add_argument("command", nargs=argparse.REMAINDER, help="The bot's command (after --).")
    args = parser.parse_args(argv)
    if args.command and args.command[0] == "--":
        args.command = args.command[1:]
    if not args.command:
        parser.error("give the bot's command after --, e.g. -- python3 my_bot.py")
    try:
        token = read_token(args.token, args.token_file)
    except TokenError as exc:
        parser.error(str(exc))
    configure_stderr_logging()
    return asyncio.run(_main_async(args, token))


if __name__ == "__main__":
    sys.exit(main())
