"""The kit's report: every check's verdict, its fix and its evidence, as text, JSON or JUnit XML.

A :class:`CheckResult` is one check of one level: its stable name (``process.starts``), whether
it passed, one line saying what was seen, the fix when it failed, and the :class:`Evidence` (the
game, the request the bot failed on, the lines of its log, the figures). A :class:`Report`
holds them all; :meth:`Report.text` is what ``hearts bot test`` prints, :meth:`Report.to_json`
what ``--json`` writes and :meth:`Report.junit` what ``--junit`` writes for a CI system.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import Any

from hearts_tournaments.kit.catalogue import CANNOT_PLAY


class Status(enum.StrEnum):
    """A check's verdict."""

    PASSED = "passed"
    FAILED = "failed"
    #: Not judged: the check does not apply to this bot (a stdio bot's flags), or an earlier
    #: check of its level failed and took the game it needed with it.
    SKIPPED = "skipped"


@dataclass(frozen=True, slots=True)
class Evidence:
    """What a verdict rests on.

    Attributes:
        game: The game (the kit's name of it and the referee's id).
        request: The decision the bot failed on, as it saw it (hand, kind, its cards, the trick,
            the legal cards), or None.
        log: Lines of the bot's log (its first error line first, then its last lines).
        figures: The numbers measured (times in ms, memory in MB, counts).
        log_file: The bot's whole log, while the kit's folder is kept ("" once it is removed).
    """

    game: str = ""
    request: dict[str, Any] | None = None
    log: tuple[str, ...] = ()
    figures: dict[str, Any] = field(default_factory=dict)
    log_file: str = ""

    def to_json(self) -> dict[str, Any]:
        """The evidence as JSON."""
        return {
            "game": self.game,
            "request": self.request,
            "log": list(self.log),
            "figures": self.figures,
            "log_file": self.log_file,
        }


@dataclass(frozen=True, slots=True)
class CheckResult:
    """One check's verdict.

    Attributes:
        name: The check's stable name.
        level: Its level (``process``, ``session``, ``rules``, ``timing``).
        status: Passed, failed or skipped.
        verdict: One line: what was seen.
        fix: What to do (failed checks only).
        evidence: What the verdict rests on.
    """

    name: str
    level: str
    status: Status
    verdict: str
    fix: str = ""
    evidence: Evidence = field(default_factory=Evidence)

    @property
    def stops_play(self) -> bool:
        """Whether this check failed so that the bot cannot play a game at all (it does not start
        or join, its limits kill it, it never decides for itself or exits mid-game): the pre-flight
        check refuses such a bot; any other failure is a warning (:data:`.catalogue.CANNOT_PLAY`)."""
        if self.status is not Status.FAILED:
            return False
        if self.name == "process.decides":
            figures = self.evidence.figures
            return not figures.get("decisions") or bool(figures.get("exited_early"))
        return self.name in CANNOT_PLAY

    def to_json(self) -> dict[str, Any]:
        """The verdict as JSON."""
        return {
            "name": self.name,
            "level": self.level,
            "status": self.status.value,
            "verdict": self.verdict,
            "fix": self.fix,
            "evidence": self.evidence.to_json(),
        }

    @staticmethod
    def from_json(data: dict[str, Any]) -> CheckResult:
        """A verdict written by :meth:`to_json`."""
        evidence = data.get("evidence") or {}
        return CheckResult(
            name=data["name"],
            level=data["level"],
            status=Status(data["status"]),
            verdict=data["verdict"],
            fix=data.get("fix", ""),
            evidence=Evidence(
                game=evidence.get("game", ""),
                request=evidence.get("request"),
                log=tuple(evidence.get("log") or ()),
                figures=dict(evidence.get("figures") or {}),
                log_file=evidence.get("log_file") or "",
            ),
        )


@dataclass(frozen=True, slots=True)
class Report:
    """Every check of one run of the kit.

    Attributes:
        bot: The bot's name.
        command: Its command.
        protocol: How it talks (``grpc`` or ``stdio``).
        levels: The levels run, in order.
        checks: Every verdict, level by level.
        seconds: Each level's wall time.
        wall_s: The whole run's wall time (levels run side by side).
        bot_cpu_s: The CPU seconds the bot's processes used, per level (the sandbox's samples).
    """

    bot: str
    command: tuple[str, ...]
    protocol: str
    levels: tuple[str, ...]
    checks: tuple[CheckResult, ...]
    seconds: dict[str, float] = field(default_factory=dict)
    wall_s: float = 0.0
    bot_cpu_s: dict[str, float] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        """Whether no check failed."""
        return not self.failed

    @property
    def failed(self) -> list[CheckResult]:
        """The failed checks."""
        return [c for c in self.checks if c.status is Status.FAILED]

    def check(self, name: str) -> CheckResult:
        """The verdict of the check ``name``.

        Raises:
            KeyError: no such check was run.
        """
        for result in self.checks:
            if result.name == name:
                return result
        raise KeyError(name)

    def counts(self) -> dict[str, int]:
        """How many checks passed, failed and were skipped."""
        return {s.value: sum(1 for c in self.checks if c.status is s) for s in Status}

    def summary(self) -> str:
        """One line: how many checks and how they went."""
        counts = self.counts()
        return (
            f"{len(self.checks)} checks: {counts['passed']} passed, {counts['failed']} failed, "
            f"{counts['skipped']} skipped ({self.wall_s:.1f} s)"
        )

    def to_json(self) -> dict[str, Any]:
        """The report as one JSON object (``--json``)."""
        return {
            "bot": self.bot,
            "command": list(self.command),
            "protocol": self.protocol,
            "passed": self.passed,
            "levels": list(self.levels),
            "counts": self.counts(),
            "seconds": self.seconds,
            "wall_s": self.wall_s,
            "bot_cpu_s": self.bot_cpu_s,
            "checks": [c.to_json() for c in self.checks],
        }

    @staticmethod
    def from_json(data: dict[str, Any]) -> Report:
        """A report written by :meth:`to_json`."""
        return Report(
            bot=data["bot"],
            command=tuple(data["command"]),
            protocol=data["protocol"],
            levels=tuple(data["levels"]),
            checks=tuple(CheckResult.from_json(c) for c in data["checks"]),
            seconds={k: float(v) for k, v in (data.get("seconds") or {}).items()},
            wall_s=float(data.get("wall_s") or 0.0),
            bot_cpu_s={k: float(v) for k, v in (data.get("bot_cpu_s") or {}).items()},
        )

    def text(self, verbose: bool = False) -> list[str]:
        """The report as lines for a terminal: every check's verdict, and for a failed one its fix
        and evidence (with ``verbose``, every check's evidence)."""
        lines = [f"hearts bot test: {self.bot} ({self.protocol}): {' '.join(self.command)}"]
        marks = {Status.PASSED: "pass", Status.FAILED: "FAIL", Status.SKIPPED: "skip"}
        width = max((len(c.name) for c in self.checks), default=10)
        for level in self.levels:
            timing = f" ({self.seconds[level]:.1f} s)" if level in self.seconds else ""
            lines.append(f"{level}{timing}")
            for check in (c for c in self.checks if c.level == level):
                lines.append(f"  {marks[check.status]}  {check.name:<{width}}  {check.verdict}")
                if check.status is Status.FAILED or verbose:
                    lines.extend(f"        {line}" for line in _details(check))
        lines.append(self.summary())
        return lines

    def without_files(self) -> Report:
        """The report once the kit's folder is removed: no evidence names a log file."""
        checks = tuple(
            dataclasses.replace(c, evidence=dataclasses.replace(c.evidence, log_file="")) for c in self.checks
        )
        return dataclasses.replace(self, checks=checks)

    def junit(self) -> str:
        """The report as JUnit XML: a test suite per level, a test case per check."""
        suites = ET.Element("testsuites", name="hearts bot test", tests=str(len(self.checks)))
        suites.set("failures", str(len(self.failed)))
        for level in self.levels:
            checks = [c for c in self.checks if c.level == level]
            suite = ET.SubElement(
                suites,
                "testsuite",
                name=f"{self.bot}.{level}",
                tests=str(len(checks)),
                failures=str(sum(c.status is Status.FAILED for c in checks)),
                skipped=str(sum(c.status is Status.SKIPPED for c in checks)),
                time=f"{self.seconds.get(level, 0.0):.3f}",
            )
            for check in checks:
                case = ET.SubElement(suite, "testcase", classname=f"{self.bot}.{level}", name=check.name)
                if check.status is Status.FAILED:
                    failure = ET.SubElement(case, "failure", message=check.verdict, type=check.name)
                    failure.text = "\n".join(_details(check))
                elif check.status is Status.SKIPPED:
                    ET.SubElement(case, "skipped", message=check.verdict)
                else:
                    out = ET.SubElement(case, "system-out")
                    out.text = check.verdict
        ET.indent(suites)
        return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


def _details(check: CheckResult) -> list[str]:
    """A check's fix and evidence, as lines."""
    evidence = check.evidence
    lines = []
    if check.fix:
        lines.append(f"fix: {check.fix}")
    if evidence.game:
        lines.append(f"game: {evidence.game}")
    if evidence.request is not None:
        lines.append(f"request: {json.dumps(evidence.request, separators=(', ', ': '))}")
    if evidence.figures:
        shown = ", ".join(f"{k} {v}" for k, v in evidence.figures.items())
        lines.append(f"figures: {shown}")
    if evidence.log_file:
        lines.append(f"log file: {evidence.log_file}")
    if evidence.log:
        lines.append("log:")
        lines.extend(f"  {line}" for line in evidence.log)
    return lines
