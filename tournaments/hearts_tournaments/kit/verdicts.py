"""Making verdicts: a check's result from the catalogue, and what a game says about the bot."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hearts_core.record import DecisionEntry
from hearts_server.table.script import SCRIPTED, NoteKind
from hearts_tournaments.kit.catalogue import BY_NAME
from hearts_tournaments.kit.evidence import log_lines, request_at
from hearts_tournaments.kit.report import CheckResult, Evidence, Status
from hearts_tournaments.kit.table import Played


def verdict(
    name: str, status: Status, line: str, evidence: Evidence | None = None, fix: str = ""
) -> CheckResult:
    """The result of check ``name``; a failed one gets ``fix``, else the catalogue's."""
    check = BY_NAME[name]
    shown_fix = (fix or check.fix) if status is Status.FAILED else ""
    return CheckResult(name, check.level.value, status, line, shown_fix, evidence or Evidence())


def passed(name: str, line: str, evidence: Evidence | None = None) -> CheckResult:
    """A passed check."""
    return verdict(name, Status.PASSED, line, evidence)


def failed(name: str, line: str, evidence: Evidence | None = None, fix: str = "") -> CheckResult:
    """A failed check (with the catalogue's fix unless given one)."""
    return verdict(name, Status.FAILED, line, evidence, fix)


def skipped(name: str, why: str) -> CheckResult:
    """A check not judged, and why."""
    return verdict(name, Status.SKIPPED, why)


def blocked(name: str, by: str) -> CheckResult:
    """A check not judged because the check ``by`` failed first."""
    return skipped(name, f"not judged: see {by}")


def first_failure(played: Played, allowed: frozenset[int] = frozenset()) -> DecisionEntry | None:
    """The bot's first decision it did not make itself (the referee did, or its SDK answered for
    it), skipping those the game's script made and those numbered in ``allowed`` (from 1)."""
    for number, entry in enumerate(played.decisions(), 1):
        if entry.by_referee == SCRIPTED or number in allowed:
            continue
        if entry.by_referee is not None or entry.bot_error:
            return entry
    return None


def own(played: Played) -> list[DecisionEntry]:
    """The decisions the bot made itself."""
    return [d for d in played.decisions() if d.by_referee is None]


def which(entry: DecisionEntry, players: int) -> str:
    """A decision as a person names it: ``its card in trick 3 of hand 1``."""
    hand = entry.hand + 1
    if entry.kind == "play" and entry.play is not None:
        return f"its card in trick {entry.play // players + 1} of hand {hand}"
    if entry.kind == "pass":
        return f"its pass in hand {hand}"
    return f"its moon choice in hand {hand}"


#: How a decision the referee made is told, by ``by_referee``.
_WHY = {
    "timeout": "it did not answer {what} in time: the referee played for it (a timeout fault)",
    "disconnected": "it was not connected for {what}: the referee played for it (a fault)",
    "time_bank_exhausted": "its time bank was used up by {what}: the referee played for it (a fault)",
    "flood": "it was cut off for flooding the referee with rejected messages before {what}",
    "retired": "its seat had been retired after too many faults by {what}",
}


def told(entry: DecisionEntry, players: int) -> str:
    """Why the bot did not make ``entry`` itself, in one clause."""
    what = which(entry, players)
    if entry.by_referee is None:
        return f"its SDK answered {what} for it: the bot raised or answered nonsense (bot_error)"
    return _WHY.get(entry.by_referee, "the referee decided {what} for it (" + entry.by_referee + ")").format(
        what=what
    )


def rejections(played: Played, skip_refused: bool = True) -> list[str]:
    """The rejections the bot's answers met, as ``CODE: reason`` (the kit's own refusals left out)."""
    refused = {n.request_id for n in played.noted(NoteKind.REFUSED)} if skip_refused else set()
    lines = []
    for note in played.noted(NoteKind.REJECTED):
        if note.request_id in refused and note.code in ("NOT_IN_HAND", "PASS_NOT_IN_HAND", "BAD_MOON_CHOICE"):
            refused.discard(note.request_id)  # the refusal's own rejection
            continue
        lines.append(f"{note.code}: {note.reason} (request {note.request_id})")
    return lines


def evidence(
    played: Played | None,
    log: Path | None = None,
    entry: DecisionEntry | None = None,
    /,
    **figures: Any,
) -> Evidence:
    """A verdict's evidence: the game, the request of ``entry`` as the bot saw it, its log."""
    request = None
    if played is not None and entry is not None and played.record is not None:
        request = request_at(played.record, entry)
    return Evidence(
        game=played.label if played is not None else "",
        request=request,
        log=log_lines(log),
        figures={k: v for k, v in figures.items() if v is not None},
        log_file=str(log) if log is not None else "",
    )
