"""The bot test kit's parts and its command: the scenario deals, the report's three forms, and
``hearts bot test`` / ``hearts bot run`` as a user types them."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from hearts_tournaments.kit.catalogue import CHECKS, QUICK_LEVELS, Level, checks_of
from hearts_tournaments.kit.report import CheckResult, Evidence, Report, Status
from hearts_tournaments.kit.scenarios import Chooser, rehearse, scenarios
from tests.conftest import ROOT
from tests.helpers import cli

STDIO = ROOT / "clients" / "stdio"
#: Random bots each scenario is rehearsed against.
CHOOSERS = 60


def hearts(*args: str, cwd: Path = ROOT, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """The ``hearts`` CLI as a user types it, in ``cwd``."""
    return cli.hearts(*args, cwd=cwd, timeout=timeout)


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
        ("bot", "test", "--runtime", "cobol", "--", "python3", "bot.py"): "no runtime 'cobol'",
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


GUIDE = ROOT / "docs" / "BOT_TEST.md"
#: A PATH with no version manager's shims: the interpreter a newcomer's python3 is.
PLAIN_PATH = "/usr/local/bin:/usr/bin:/bin"


def test_the_guide_names_every_check_and_is_linked() -> None:
    guide = GUIDE.read_text()
    for check in CHECKS:
        ranged = check.name.rsplit(".", 1)[0] + ".6` ... `" + check.name.rsplit(".", 1)[0] + ".11"
        assert f"`{check.name}`" in guide or ("table_size" in check.name and ranged in guide), check.name
    for page in ("WRITING_A_BOT.md", "COMPETITION.md", "TOURNAMENTS.md"):
        assert "BOT_TEST.md" in (ROOT / "docs" / page).read_text(), page
    assert "docs/BOT_TEST.md" in hearts("bot", "test", "--help").stdout


@pytest.mark.timeout(600)
def test_the_guide_s_first_run_passes_as_written(tmp_path: Path) -> None:
    """docs/BOT_TEST.md's first console block, typed as it is, from the folder it goes to (on a
    PATH without a version manager's shims, as on a newcomer's machine)."""
    block = GUIDE.read_text().split("```console\n", 1)[1].split("```", 1)[0]
    typed = [line[2:] for line in block.splitlines() if line.startswith("$ ")]
    assert typed[0] == "cd clients/stdio" and typed[1].startswith("hearts bot test ")
    report = tmp_path / "report.json"
    command = shlex.split(typed[1])[1:]  # after `hearts`
    split = command.index("--")
    command[split:split] = ["--json", str(report)]
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{PLAIN_PATH}"}
    result = subprocess.run(
        [sys.executable, "-m", "hearts_tournaments", *command],
        capture_output=True, text=True, cwd=ROOT / typed[0].split()[1], env=env, timeout=600, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    shown = result.stdout.splitlines()
    assert shown[0] == "hearts bot test: lowest (stdio): python3 lowest.py"
    assert shown[-1].startswith("32 checks: 30 passed, 0 failed, 2 skipped")
    written = json.loads(report.read_text())
    assert written["passed"] and written["bot"] == "lowest"


@pytest.mark.timeout(600)
def test_junit_shows_a_test_per_check(tmp_path: Path) -> None:
    junit = tmp_path / "bot-test.xml"
    result = hearts(
        "bot", "test", "--level", "process", "--protocol", "stdio", "--junit", str(junit), "--",
        "sh", "first_legal.sh", cwd=ROOT / "clients" / "stdio",
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    root = ET.parse(junit).getroot()
    assert root.get("failures") == "0" and root.get("tests") == "7"
    assert [c.get("name") for c in root.iter("testcase")] == [c.name for c in checks_of(Level.PROCESS)]


@pytest.mark.timeout(600)
def test_a_failing_check_exits_1_with_its_verdict_fix_and_evidence(tmp_path: Path) -> None:
    kept = tmp_path / "kept"
    result = hearts(
        "bot", "test", "--protocol", "stdio", "--level", "session", "--keep", str(kept), "--json",
        str(tmp_path / "r.json"), "--files", "tests/kit_mutants", "--files", "clients/stdio/first_legal.sh",
        "--", "sh", "tests/kit_mutants/no_retry.sh", "clients/stdio/first_legal.sh",
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


@pytest.mark.timeout(900)
def test_submit_check_tests_the_very_archive_and_sends_nothing(tmp_path: Path) -> None:
    """``hearts submit --check DIR``: the archive ``hearts submit`` would send, checked as the portal
    checks it, the kit's every level on it (the portal's bot.toml and its own program lookup)."""
    mine = tmp_path / "mybot"
    mine.mkdir()
    (mine / "lowest.py").write_text((STDIO / "lowest.py").read_text())
    (mine / "bot.toml").write_text('command = ["python3", "lowest.py"]\nprotocol = "stdio"\n')
    passed = hearts("submit", "--check", "mybot", cwd=tmp_path)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    first = passed.stdout.splitlines()[0]  # the program found as the league finds it, the script unpacked
    assert first.startswith("hearts bot test: mybot (stdio): /") and first.endswith("/bot/lowest.py"), first
    assert "32 checks: 30 passed, 0 failed, 2 skipped" in passed.stdout
    # What the portal refuses is refused here, as it would be there (exit 2, one line).
    (mine / "bot.toml").write_text('command = ["python3", "lowest.py"]\nprotocol = "stdio"\ncolour = "red"\n')
    refused = hearts("submit", "--check", "mybot", cwd=tmp_path)
    assert (
        refused.returncode == 2 and "the portal would refuse it: bot.toml has unknown keys" in refused.stderr
    )
    # A bot that fails a check: exit 1 and the check named.
    (mine / "bot.toml").write_text('command = ["sh", "no_retry.sh", "first_legal.sh"]\nprotocol = "stdio"\n')
    (mine / "no_retry.sh").write_text((ROOT / "tests" / "kit_mutants" / "no_retry.sh").read_text())
    (mine / "first_legal.sh").write_text((STDIO / "first_legal.sh").read_text())
    failed = hearts("submit", "--check", "mybot", cwd=tmp_path)
    assert failed.returncode == 1 and "FAIL  session.rejection" in failed.stdout, failed.stdout
