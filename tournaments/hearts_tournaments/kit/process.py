"""The process level: the bot's process, started exactly as a tournament starts it, in one game.

One game of one hand at the competition's table size, on a fresh process (``reuse = "never"``:
the seat's token, the flags, exit at the table's end). Its checks, in the order a failure is
explained (a check whose game the one before took away is not judged):

- ``process.flags``: a gRPC bot takes ``--server unix:/run/hearts/referee.sock --token-file
  /run/hearts/token`` after its command (a stdio bot gets none);
- ``process.starts``: it starts in the sandbox and joins within the join timeout;
- ``process.limits``: the sandbox's watchdog did not kill it (memory, CPU, processes);
- ``process.decides``: it made every decision of the hand itself, in time;
- ``process.stdout``: a stdio bot wrote nothing on its stdout but its answers;
- ``process.exits``: it exited by itself, with status 0, once the table ended;
- ``process.leftovers``: no process it started is still running.
"""

from __future__ import annotations

import re
import shutil
import signal
import sys
from pathlib import Path

from hearts_server.table.script import NoteKind
from hearts_tournaments.arena import runtimes
from hearts_tournaments.arena.bots import BotProtocol, BotSpec, Reuse
from hearts_tournaments.arena.failures import (
    EARLY,
    STDIO_FIX,
    STDIO_GUESS,
    first_error_line,
    log_head,
    looks_like_stdio,
)
from hearts_tournaments.arena.sandbox import SYSTEM_DIRS, SandboxKind, bot_environment
from hearts_tournaments.kit.report import CheckResult
from hearts_tournaments.kit.table import (
    EXIT_GRACE_S,
    Competition,
    Judged,
    KitTable,
    Played,
    ProcessEnd,
    kill,
    leftovers,
)
from hearts_tournaments.kit.verdicts import (
    blocked,
    evidence,
    failed,
    first_failure,
    own,
    passed,
    skipped,
    told,
)

#: The bot's seat in the level's game.
SEAT = 2
#: Log lines that say a program refused its command line.
_USAGE = re.compile(
    r"unrecognized arguments|unknown (flag|option|argument)|flag provided but not defined|"
    r"invalid option|unexpected argument|no such option|^usage:",
    re.IGNORECASE | re.MULTILINE,
)
#: Where the flags come from, for the verdicts.
FLAGS = "--server unix:/run/hearts/referee.sock --token-file /run/hearts/token"
#: The stdio bridge's hint when a bot wrote nothing at all (hearts_client.stdio_bridge).
BUFFERING = "it wrote nothing on its stdout: it may be buffering its output (a pipe is not a terminal)"
FLUSH_FIX = (
    "write one JSON line per request on stdout and flush after every line (Python: print(..., "
    "flush=True) or python -u; C: fflush(stdout); Java: System.out.flush()); docs/PROTOCOL.md, "
    "stdin/stdout bots"
)


async def process_level(spec: BotSpec, competition: Competition, folder: Path) -> Judged:
    """Plays the level's game and judges the process."""
    async with KitTable("process", spec, competition, folder, Reuse.NEVER) as table:
        played = await table.play(
            "process",
            players=competition.table_size,
            seat=SEAT,
            max_hands=1,
            target_score=competition.target_score,
        )
    left = leftovers(table.seeds)
    kill(left)
    end = table.ends[0] if table.ends else None
    return Judged(judge(spec, competition, played, end, left), table.bot_cpu_s)


def judge(
    spec: BotSpec, competition: Competition, played: Played, end: ProcessEnd | None, left: list[int]
) -> list[CheckResult]:
    """The level's verdicts from its game and how the process ended."""
    stdio = spec.protocol is BotProtocol.STDIO
    log = end.log if end is not None else None
    said = first_error_line(log) if log is not None else None
    joined = played.noted(NoteKind.JOINED)
    decided = own(played)
    # It ended before its table did (the arena told of it, or saw it crash).
    exited_early = played.outcome is not None and (
        any(EARLY in line for line in played.incidents) or played.outcome.crashed[played.seat]
    )
    # Started: it joined, and made a decision or was still running when the table ended.
    started = bool(joined) and (bool(decided) or not exited_early)
    results: list[CheckResult] = []
    code = end.code if end is not None else None

    # process.flags
    refused_flags = not started and said is not None and _USAGE.search(_log_text(log)) is not None
    if stdio:
        results.append(
            skipped("process.flags", "a stdio bot gets no flags: its stdin and stdout are its only way")
        )
    elif started:
        results.append(passed("process.flags", f"took {FLAGS} and joined with them"))
    elif refused_flags:
        results.append(
            failed(
                "process.flags",
                f"exited with status {code} before joining: its log says {said!r}",
                evidence(played, log),
            )
        )
    else:
        results.append(skipped("process.flags", "not judged: it never joined (see process.starts)"))

    # process.starts
    timeout_s = competition.policy.join_timeout_ms / 1000
    if refused_flags:
        results.append(blocked("process.starts", "process.flags"))
    elif not started:
        cause = _why_not_started(played, end, said, bool(joined))
        if looks_like_stdio(spec.protocol, code, log):
            cause += f", {STDIO_GUESS}"
        results.append(
            failed(
                "process.starts",
                cause,
                evidence(played, log, exit_status=code),
                _start_fix(spec, competition, said, code, log),
            )
        )
    elif joined[0].at > timeout_s:
        results.append(
            failed(
                "process.starts",
                f"joined {joined[0].at:.1f} s after its table was created, past the join timeout of "
                f"{timeout_s:.0f} s",
                evidence(played, log, joined_s=joined[0].at),
                "start faster: load what the bot needs after joining, or build it beforehand",
            )
        )
    else:
        results.append(
            passed(
                "process.starts",
                f"joined {joined[0].at:.1f} s after its table was created (join timeout {timeout_s:.0f} s)",
                evidence(played, None, joined_s=joined[0].at),
            )
        )
    if not started:
        return [
            *results,
            *(
                blocked(name, "process.starts" if not refused_flags else "process.flags")
                for name in (
                    "process.limits",
                    "process.decides",
                    "process.stdout",
                    "process.exits",
                    "process.leftovers",
                )
            ),
        ]
    assert end is not None

    # process.limits
    limits = competition.limits
    figures = {"peak_mb": end.peak_mb, "cpu_s": end.cpu_s}
    stopped = end.killed or _cpu_stopped(end.code, limits.cpu_s)
    if stopped is not None:
        results.append(
            failed("process.limits", f"the sandbox killed it: {stopped}", evidence(played, log, **figures))
        )
        return [
            *results,
            *(
                blocked(name, "process.limits")
                for name in ("process.decides", "process.stdout", "process.exits", "process.leftovers")
            ),
        ]
    results.append(
        passed(
            "process.limits",
            f"peak {end.peak_mb} MB of its {limits.memory_mb} MB, {end.cpu_s} s of CPU of its "
            f"{limits.cpu_s} s"
            if end.peak_mb is not None
            else f"not killed by its limits ({limits.memory_mb} MB, {limits.cpu_s} s of CPU)",
            evidence(played, None, **figures),
        )
    )

    # process.decides
    bad = first_failure(played)
    if bad is not None or not decided:
        cause = (
            told(bad, played.players)
            if bad is not None and decided
            else "it never made a decision of its own"
        )
        fix = ""
        if stdio and end.bridge is not None and end.bridge.bytes_read == 0:
            cause = f"{cause}; {BUFFERING}"
            fix = FLUSH_FIX
        elif stdio and not decided:
            fix = FLUSH_FIX
        elif bad is not None and bad.bot_error:
            fix = "fix the error its log shows: its SDK caught it and answered a legal card for it"
        if exited_early:
            cause = f"{cause}; {played.incidents[0] if played.incidents else f'it exited with status {code}'}"
        results.append(
            failed(
                "process.decides",
                cause,
                evidence(
                    played,
                    log,
                    bad,
                    decisions=sum(1 for d in decided if not d.bot_error),
                    exited_early=exited_early,
                ),
                fix,
            )
        )
    else:
        slowest = max(d.ms for d in decided)
        results.append(
            passed(
                "process.decides",
                f"made all {len(decided)} of its decisions in a hand itself (slowest {slowest:.0f} ms)",
                evidence(played, None, decisions=len(decided), slowest_ms=slowest),
            )
        )

    # process.stdout
    if not stdio:
        results.append(skipped("process.stdout", "a gRPC bot's stdout goes to its log"))
    elif end.bridge is None:
        results.append(skipped("process.stdout", "not judged: its bridge did not report"))
    else:
        bridge = end.bridge
        stray = bridge.out_of_turn + bridge.rejected_by_bridge + bridge.overlong + bridge.dropped
        if stray:
            parts = [
                f"{count} {what}"
                for count, what in (
                    (bridge.out_of_turn, "written while no request was open"),
                    (bridge.rejected_by_bridge, "that were not a well-formed answer"),
                    (bridge.overlong, "over 64 KiB"),
                    (bridge.dropped, "dropped (too many waiting)"),
                )
                if count
            ]
            results.append(
                failed(
                    "process.stdout",
                    f"wrote {stray} line(s) on its stdout besides its {bridge.answers} answers: "
                    + ", ".join(parts),
                    evidence(played, log, **bridge.to_json()),
                )
            )
        else:
            results.append(
                passed("process.stdout", f"wrote its {bridge.answers} answers on its stdout and nothing else")
            )

    # process.exits
    if exited_early:
        results.append(blocked("process.exits", "process.decides"))
    elif end.lingered:
        results.append(
            failed(
                "process.exits",
                f"was still running {EXIT_GRACE_S:.0f} s after its table ended: it was terminated",
                evidence(played, log, exit_status=code),
            )
        )
    elif end.code != 0:
        results.append(
            failed(
                "process.exits",
                f"exited with status {end.code} after its table ended"
                + (f": its log says {said!r}" if said else ""),
                evidence(played, log, exit_status=code),
            )
        )
    else:
        results.append(passed("process.exits", "exited by itself with status 0 once its table ended"))

    # process.leftovers
    if left:
        results.append(
            failed(
                "process.leftovers",
                f"left {len(left)} process(es) running after it exited (pid {', '.join(map(str, left))}); "
                "the kit killed them",
                evidence(played, log),
            )
        )
    elif competition.sandbox is SandboxKind.BWRAP:
        results.append(
            passed(
                "process.leftovers", "nothing of it was running after it exited (its sandbox ended with it)"
            )
        )
    else:
        results.append(passed("process.leftovers", "nothing of it was running after it exited"))
    return results


def _cpu_stopped(code: int, cpu_s: int) -> str | None:
    """Why the kernel stopped the bot, when its CPU rlimit did (SIGXCPU: the signal itself, or
    128 + it as bwrap reports a child's signal), else None."""
    if code in (-signal.SIGXCPU, 128 + signal.SIGXCPU):
        return f"CPU over its budget of {cpu_s} s (the kernel's SIGXCPU)"
    return None


def _log_text(log: Path | None) -> str:
    if log is None:
        return ""
    try:
        return log.read_text(encoding="utf-8", errors="replace")[:65536]
    except OSError:
        return ""


def _why_not_started(played: Played, end: ProcessEnd | None, said: str | None, joined: bool) -> str:
    if played.error:
        return played.error
    how = ""
    if end is not None:
        how = f"was killed by the sandbox ({end.killed})" if end.killed else f"exited with status {end.code}"
    what = "before joining its table" if not joined else "before making a decision"
    cause = f"it {how} {what}" if how else f"it never joined its table {what}"
    return cause + (f"; its log says {said!r}" if said else "; its log is empty")


def _start_fix(
    spec: BotSpec, competition: Competition, said: str | None, code: int | None, log: Path | None
) -> str:
    """The fix for a bot that did not start: a shim, a program the sandbox does not show, a
    runtime its log says it lacks, a stdio bot entered as a gRPC one, or (else) the generic fix."""
    assert spec.command is not None
    where = "the bot's command"
    program = spec.command[0]
    env_path = bot_environment({}, Path("/tmp")).get("PATH")
    found = shutil.which(program, path=env_path) if "/" not in program else None
    if found is not None and _is_script(Path(found)) and not _under_system(Path(found).resolve()):
        # A shim (pyenv's, asdf's) or a wrapper: a script that runs what the sandbox hides.
        example = sys.executable if Path(program).name.startswith("python") else f"the real path of {program}"
        return (
            f"{program!r} on PATH is {found}, a script (a shim or wrapper) that runs what the sandbox does "
            f'not show: name the interpreter itself in {where}, e.g. "{example}"'
        )
    if said is not None and "bwrap: execvp" in said:
        example = sys.executable if Path(program).name.startswith("python") else f"the full path of {program}"
        return (
            f"its sandbox does not show the program {program!r}: name it by a path the sandbox shows in "
            f'{where}, e.g. "{example}", or add its folder to the bot\'s files'
        )
    head = log_head(log) if log is not None else None
    wanted = runtimes.lacking(head) if head is not None else None
    if wanted is not None and spec.runtime != wanted[0].name:
        return (
            f'add runtime = "{wanted[0].name}" to its entry (its [[bots]] table, or bot.toml; --runtime '
            f"{wanted[0].name} here): that runtime provides what its log says it lacks ({wanted[1]}; "
            "`hearts runtime list`)"
        )
    if looks_like_stdio(spec.protocol, code, log):
        return STDIO_FIX
    if competition.sandbox is SandboxKind.BWRAP:
        return (
            "run the command by hand to see it start; inside the sandbox it runs in /tmp with no network and "
            "sees only its files (docs/PROTOCOL.md, what a bot process gets)"
        )
    return "run the command by hand in its folder to see it start"


def _is_script(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return handle.read(2) == b"#!"
    except OSError:
        return False


def _under_system(path: Path) -> bool:
    return any(path == Path(d) or Path(d) in path.parents for d in SYSTEM_DIRS)
