"""A tournament through the real runner with stdio bots among built-in bots.

The runner starts each ``protocol = "stdio"`` bot with pipes and no flags, plays its seat over
gRPC through the bridge, and writes the bot's stderr and the bridge's summary to its log.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.helpers.cli import hearts

EXAMPLES = ROOT / "clients" / "stdio"
#: The example Python bot, but it also writes its argv and environment to its stderr (its log).
SPY = """
import json, os, runpy, sys
run = "/run/hearts"  # where a sandboxed gRPC bot finds its socket and token
seen = {"argv": sys.argv, "env": sorted(os.environ), "run": os.listdir(run) if os.path.isdir(run) else None}
print("SPY " + json.dumps(seen), file=sys.stderr, flush=True)
runpy.run_path(sys.argv[1], run_name="__main__")
"""


def test_a_tournament_with_stdio_bots_among_built_in_bots(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "spy.py").write_text(SPY)
    python = json.dumps(sys.executable)
    config = tmp_path / "stdio.toml"
    config.write_text(
        f"""[tournament]
name = "stdio"
table_size = 6
deals = 1
seed = 9
concurrency = 1
target_score = 40
decision_ms = 5000
join_timeout_ms = 60000

[[bots]]
name = "careful"
builtin = "heuristic"

[[bots]]
name = "shell"
command = ["sh", "{EXAMPLES / "first_legal.sh"}"]
protocol = "stdio"
files = ["{EXAMPLES}"]

[[bots]]
name = "plain"
command = [{python}, "spy.py", "{EXAMPLES / "lowest.py"}"]   # relative: runs in this folder
protocol = "stdio"
files = ["spy.py", "{EXAMPLES}"]
"""
    )
    folder = tmp_path / "run"
    monkeypatch.setenv("HEARTS_ADMIN_TOKEN", "never-for-bots")  # the runner's, not the bots'
    run = hearts(
        "tournament", "run", str(config), "--output", str(folder), "--progress", "never", timeout=900
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert "Traceback" not in run.stderr
    report = hearts("tournament", "report", str(folder), "--format", "json")
    assert report.returncode == 0, report.stderr
    standings = {s["bot"]: s for s in json.loads(report.stdout)["standings"]}
    assert sorted(standings) == ["careful", "plain", "shell"]
    for entry in standings.values():
        assert entry["games"] == 6, entry
        assert entry["faults"] == 0, entry

    # Each stdio seat's log has the bridge's summary: every decision answered, none rejected.
    for bot in ("shell", "plain"):
        logs = sorted((folder / "logs" / bot).iterdir())
        assert logs
        for log in logs:
            text = log.read_text()
            assert "Traceback" not in text
            (summary,) = [line for line in text.splitlines() if "stdio bridge summary" in line]
            stats = json.loads(summary.split("summary ", 1)[1])
            assert stats["decisions"] == stats["answers"] > 0
            assert stats["rejected_by_referee"] == stats["rejected_by_bridge"] == stats["timeouts"] == 0
    # The stdio bot got its command as configured: no --server, no --token, no secrets.
    for log in (folder / "logs" / "plain").iterdir():
        (spy,) = [line for line in log.read_text().splitlines() if line.startswith("SPY ")]
        seen = json.loads(spy[4:])
        # (In the sandbox the bot runs in its scratch folder, so the script's path is made absolute.)
        assert seen["argv"] == [str(config.parent / "spy.py"), str(EXAMPLES / "lowest.py")]
        assert not {"HEARTS_TOKEN", "HEARTS_TOKEN_FILE", "HEARTS_SERVER", "HEARTS_ADMIN_TOKEN"} & set(
            seen["env"]
        )
        assert {"HEARTS_BOT_NAME", "HEARTS_SEED"} <= set(seen["env"])
        # Sandboxed (/run/hearts exists only there) with no way out but its pipes: neither the
        # referee's socket nor a token file.
        assert seen["run"] == []
