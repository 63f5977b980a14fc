"""A tournament with one bot of every language, Python included, is played and ranked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.helpers.cli import hearts
from tests.helpers.toolchains import LANGUAGES, require_toolchain


@pytest.mark.timeout(1200)  # builds every example bot, then a tournament of up to 900 s
def test_one_bot_of_every_language_in_a_ranked_tournament(tmp_path: Path) -> None:
    for language in LANGUAGES:
        require_toolchain(language)
    # Each bot runs in its sandbox, seeing its own built folder (read-only) and the system only.
    bots = "\n".join(
        f'[[bots]]\nname = "{language}"\ncommand = ["{ROOT / "clients" / language / "bot"}"]\n'
        f'files = "{ROOT / "clients" / language}"\n'
        for language in LANGUAGES
    )
    config = tmp_path / "languages.toml"
    config.write_text(
        f"""[tournament]
name = "languages"
table_size = 6
deals = 1
seed = 6
concurrency = 1
target_score = 40
output = "{tmp_path / "run"}"
join_timeout_ms = 120000
# Generous: the test is about every language playing, not speed; on two cores shared with other
# test workers a JVM's first decisions can take over the default second.
decision_ms = 10000

[[bots]]
name = "python"
builtin = "heuristic"

{bots}"""
    )
    run = hearts("tournament", "run", str(config), "--progress", "never", timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    report = hearts("tournament", "report", str(tmp_path / "run"), "--format", "json")
    assert report.returncode == 0, report.stderr
    standings = json.loads(report.stdout)["standings"]
    assert sorted(s["bot"] for s in standings) == sorted(["python", *LANGUAGES])
    assert [s["rank"] for s in standings] == list(range(1, 7))
    for entry in standings:
        assert entry["games"] == 6, entry
        assert entry["faults"] == 0, entry
