"""Saying what went wrong with an entrant: one line naming who, what, why, the fix and the log.

The pre-flight check (:mod:`hearts_tournaments.tournament.preflight`) and the arena during a
game (:mod:`hearts_tournaments.arena.local`) both
phrase an entrant's failure here, and read the first error line of the bot's log the same way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from hearts_tournaments.arena.bots import BotProtocol

#: Bytes of a bot's log read to find its first error line.
HEAD_BYTES = 64 * 1024
#: The longest error line quoted (a bot may write anything).
QUOTE_CHARS = 240
#: What a gRPC entrant that exits with status 0 and an empty log before its game ends usually
#: is: a stdin/stdout bot entered without ``protocol = "stdio"``. Started as a gRPC bot, its
#: stdin is empty, so it reads no request and stops at once, saying nothing.
STDIO_GUESS = 'which usually means a stdin/stdout bot entered without protocol = "stdio"'
#: The fix that goes with :data:`STDIO_GUESS`.
STDIO_FIX = (
    'if it reads its requests on stdin, add protocol = "stdio" to its entry (hearts league add: '
    "--protocol stdio; docs/PROTOCOL.md, stdin/stdout bots)"
)
#: Words that make a log line an error line.
_ERROR = re.compile(
    r"error|exception|traceback|not found|no such|cannot|can't|could not|denied|fatal|panic|"
    r"failed|refused|killed|unable|missing|invalid|wrote nothing",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class EntrantProblem:
    """Why an entrant cannot play, and what to do about it.

    Attributes:
        bot: The entrant's name.
        cause: What is wrong (a clause, no final full stop).
        fix: What to do.
        log: The bot's log of the attempt, if it was started.
    """

    bot: str
    cause: str
    fix: str
    log: Path | None = None

    def line(self) -> str:
        """The problem as one line (without the ``hearts: error:`` prefix)."""
        where = f" (log: {self.log})" if self.log is not None else ""
        return f"entrant {self.bot!r} cannot play: {self.cause}{where}; fix: {self.fix}"

    def to_json(self) -> dict[str, str | None]:
        """The problem as a JSON object."""
        return {
            "bot": self.bot,
            "cause": self.cause,
            "fix": self.fix,
            "log": str(self.log) if self.log is not None else None,
        }


def log_head(log: Path) -> str | None:
    """The first :data:`HEAD_BYTES` of a bot's log, or None when it cannot be read."""
    try:
        with log.open("rb") as handle:
            return handle.read(HEAD_BYTES).decode("utf-8", "replace")
    except OSError:
        return None


def first_error_line(log: Path) -> str | None:
    """The first line of a bot's log that tells an error, quoted short, or None.

    A Python traceback is named by its last line (the exception), not by ``Traceback (most
    recent call last):``; a log with no line that looks like an error gives its last line.
    """
    head = log_head(log)
    if head is None:
        return None
    lines = [line.rstrip() for line in head.splitlines() if line.strip()]
    # The runner's own notes (a bridge's summary) are not the bot's errors.
    lines = [line for line in lines if not line.startswith("hearts tournament: stdio bridge summary")]
    for index, line in enumerate(lines):
        if line.startswith("Traceback"):
            rest = [x for x in lines[index + 1 :] if not x.startswith((" ", "\t"))]
            return _quote(rest[0] if rest else line)
        if _ERROR.search(line):
            return _quote(line)
    return _quote(lines[-1]) if lines else None


def _quote(line: str) -> str:
    line = " ".join(line.split())
    return line if len(line) <= QUOTE_CHARS else line[: QUOTE_CHARS - 3] + "..."


#: What :func:`exit_line` says of a process that ended before its game.
EARLY = "before the game ended"


def looks_like_stdio(protocol: BotProtocol, code: int | None, log: Path | None) -> bool:
    """Whether a bot that stopped before its game ended is probably a stdin/stdout bot entered as
    a gRPC one (:data:`STDIO_GUESS`): it was started as gRPC, exited with status 0 and its log
    is empty."""
    empty = log is None or first_error_line(log) is None
    return protocol is BotProtocol.GRPC and code == 0 and empty


def exit_line(
    bot: str,
    game: str,
    seat: int,
    code: int | None,
    killed: str | None,
    log: Path,
    protocol: BotProtocol = BotProtocol.GRPC,
) -> str:
    """The line for a bot process that ended before its game did (with what it probably means,
    where its signs say more than its status)."""
    how = f"was killed ({killed})" if killed else f"exited with status {code}"
    said = _said(log)
    if not killed and looks_like_stdio(protocol, code, log):
        said += f", {STDIO_GUESS}"
    return f"entrant {bot!r} in game {game} (seat {seat}) {how} {EARLY}: {said}; log: {log}"


def silent_line(bot: str, game: str, seat: int, why: str, log: Path | None) -> str:
    """The line for a bot that stopped answering (retired, or never made a decision of its own)."""
    said = f": {_said(log)}; log: {log}" if log is not None else ""
    return f"entrant {bot!r} in game {game} (seat {seat}) {why}{said}"


def _said(log: Path) -> str:
    line = first_error_line(log)
    return f"its log says {line!r}" if line else "its log is empty"
