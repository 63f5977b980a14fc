"""The bot test kit's parts and its command: the scenario deals, the report's three forms, and
``hearts bot test`` / ``hearts bot run`` as a user types them."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from hearts_tournaments.kit.catalogue import CHECKS, QUICK_LEVELS, Level, checks_of
from hearts_tournaments.kit.report import CheckResult, Evidence, Report, Status
from hearts_tournaments.kit.scenarios import Chooser, rehearse, scenarios
from tests.conftest import ROOT

STDIO = ROOT / "clients" / "stdio"
#: Random bots each scenario is rehearsed against.
CHOOSERS = 60


def hearts(*args: str, cwd: Path = ROOT, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """The ``hearts`` CLI as a user types it, in ``cwd``."""
    return subprocess.run(
        [sys.executable, "-m", "hearts_tournaments", *args],
        capture_output=True, text=True, cwd=cwd, timeout=timeout, check=False,
    )  # fmt: skip


@pytest.mark.timeout(300)
@pytest.mark.parametrize("scenario", scenarios(), ids=[s.check for s in scenarios()])
def test_every_scenario_takes_its_rare_path_whatever_the_bot_chooses(scenario: object) -> None:
    from hearts_tournaments.kit.scenarios import Scenario

    assert isinstance(scenario, Scenario)
    for k in range(CHOOSERS):
        hands = rehearse(scenario, Chooser(f"{scenario.check}/{k}"), seed=f"kit/{k}")
        assert scenario.reached(hands) is not None, (scenario.check, k)


def test_every_rules_check_has_its_scenario_and_the_levels_their_checks() -> None:
    assert {s.check for s in scenarios()} == {c.name for c in checks_of(Level.RULES)}
    assert len({c.name for c in CHECKS}) == len(CHECKS)
    assert set(QUICK_LEVELS) == {Level.PROCESS, Level.SESSION}
    for check in CHECKS:
        assert check.what and check.fix, check.name


def _report() -> Report:
    return Report(
        bot="mine",
        command=("python3", "bot.py"),
        protocol="stdio",
        levels=("process", "rules"),
        checks=(
            CheckResult(
                "process.starts", "process", Status.PASSED, "joined 0.3 s after its table was created"
            ),
            CheckResult("process.flags", "process", Status.SKIPPED, "a stdio bot gets no flags"),
            CheckResult(
                "rules.moon",
                "rules",
                Status.FAILED,
                "it did not answer its moon choice in hand 1 in time",
                "answer choose_moon",
                Evidence(
                    "rules.moon (game abc)", {"hand": 0, "kind": "moon"}, ("Traceback", "KeyError"), {"n": 1}
                ),
            ),
        ),
        seconds={"process": 1.0, "rules": 2.0},
        wall_s=3.1,
    )


def test_a_report_reads_back_from_json_and_shows_as_text_and_junit() -> None:
    report = _report()
    assert Report.from_json(json.loads(json.dumps(report.to_json()))) == report
    assert not report.passed and report.counts() == {"passed": 1, "failed": 1, "skipped": 1}
    text = "\n".join(report.text())
    assert "FAIL  rules.moon" in text and "fix: answer choose_moon" in text and "KeyError" in text
    assert "joined 0.3 s" in text and "3 checks: 1 passed, 1 failed, 1 skipped (3.1 s)" in text
    suites = ET.fromstring(report.junit().split("\n", 1)[1])
    assert suites.get("tests") == "3" and suites.get("failures") == "1"
    (failure,) = suites.iter("failure")
    assert failure.get("type") == "rules.moon" and "KeyError" in (failure.text or "")
    assert [s.get("message") for s in suites.iter("skipped")] == ["a stdio bot gets no flags"]


@pytest.mark.timeout(300)
def test_usage_errors_are_one_line_and_exit_2(tmp_path: Path) -> None:
    cases = {
        ("bot", "test"): "Missing argument",
        ("bot", "test", "--runtime", "python-sdk", "--", "python3", "bot.py"): "--runtime 'python-sdk'",
        ("bot", "test", "--files", "nothere", "--", "python3", "bot.py"): "no such file or folder",
        ("bot", "test", "--level", "speed", "--", "python3", "bot.py"): "--level",
        ("bot", "test", "--protocol", "ws", "--", "python3", "bot.py"): "--protocol",
        ("bot", "test", "--name", "a b", "--", "python3", "bot.py"): "--name",
    }
    for args, said in cases.items():
        result = hearts(*args, cwd=tmp_path)
        assert result.returncode == 2, (args, result.stderr)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("hearts: error: ") and said in lines[0], (args, lines)


@pytest.mark.timeout(120)
def test_hearts_bot_name_still_runs_a_built_in_bot(tmp_path: Path) -> None:
    for args in (("bot", "heuristic"), ("bot", "run", "heuristic")):
        result = hearts(*args, "--token-file", str(tmp_path / "none"), cwd=tmp_path)
        assert result.returncode == 2 and "token" in result.stderr and "heuristic" not in result.stderr, (
            result.stderr
        )
    unknown = hearts("bot", "nosuchbot", cwd=tmp_path)
    assert unknown.returncode == 2 and "ismcts" in unknown.stderr  # the list comes from the registry
    assert "ismcts" in hearts("bot", "run", "--help", cwd=tmp_path).stdout


@pytest.mark.timeout(600)
def test_a_stdio_bot_passes_from_its_folder_and_its_reports_are_written() -> None:
    """As docs/BOT_TEST.md shows it: from the bot's folder, its command after --, the reports
    written where asked (relative paths)."""
    report, junit = STDIO / "kit-report.json", STDIO / "kit-report.xml"
    try:
        result = hearts(
            "bot", "test", "--protocol", "stdio", "--json", report.name, "--junit", junit.name, "--",
            sys.executable, "lowest.py", cwd=STDIO,
        )  # fmt: skip
        assert result.returncode == 0, result.stdout + result.stderr
        assert "32 checks: 30 passed, 0 failed, 2 skipped" in result.stdout
        written = json.loads(report.read_text())
        assert written["passed"] and written["bot"] == "lowest"
        assert ET.parse(junit).getroot().get("failures") == "0"
    finally:
        report.unlink(missing_ok=True)
        junit.unlink(missing_ok=True)


@pytest.mark.timeout(600)
def test_a_failing_check_exits_1_with_its_verdict_fix_and_evidence(tmp_path: Path) -> None:
    kept = tmp_path / "kept"
    result = hearts(
        "bot", "test", "--protocol", "stdio", "--level", "session", "--keep", str(kept), "--json",
        str(tmp_path / "r.json"), "--", "sh", "tests/kit_mutants/no_retry.sh",
    )  # fmt: skip
    assert result.returncode == 1, result.stdout + result.stderr
    assert "FAIL  session.rejection" in result.stdout and "fix: after a rejection" in result.stdout
    (rejection,) = [
        c for c in json.loads((tmp_path / "r.json").read_text())["checks"] if c["name"] == "session.rejection"
    ]
    assert rejection["status"] == "failed"
    assert rejection["evidence"]["request"]["kind"] == "play" and rejection["evidence"]["game"].startswith(
        "session-1"
    )
    assert list(kept.rglob("*.json")) and (kept / "kit.log").is_file()  # the records and the log, kept
