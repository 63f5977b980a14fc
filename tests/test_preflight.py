"""Entrants that cannot start are named before the first game, with the cause and the fix.

The three cases found by trying the product as a newcomer: a missing script, a script outside the
config file's folder with no ``files``, and a ``python`` on PATH that is a shim (as pyenv's are)
running an interpreter the sandbox does not show. All run in the real bwrap sandbox against the
real referee. With ``--allow-broken`` the run goes on, says each failure on stderr as it happens,
marks the entrants that never played in the standings and exits 3.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.helpers.cli import hearts
from tests.helpers.shared import shim_folder
from tests.helpers.web_server import get, web_server

GOOD_BOT = """
from hearts_client import Bot, main


class First(Bot):
    name = "first"

    def choose_pass(self, view):
        return sorted(view.hand)[-3:]

    def choose_play(self, view):
        return view.legal[0]


if __name__ == "__main__":
    main(First())
"""

BROKEN = ("nothere", "far", "shim")


def broken_field(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A config of two built-in bots, a good command bot and the three broken ones, and the env
    whose PATH starts with a fake shim folder (its ``python`` execs a file the sandbox hides)."""
    cfg = tmp_path / "cfg"
    cfg.mkdir()
    (cfg / "good_bot.py").write_text(GOOD_BOT)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "far_bot.py").write_text(GOOD_BOT)
    shims = shim_folder(tmp_path)
    shim = shims / "python"
    python = json.dumps(sys.executable)
    config = cfg / "field.toml"
    config.write_text(
        f"""
[tournament]
name = "field"
table_size = 6
deals = 1
max_hands = 1
join_timeout_ms = 20000

[[bots]]
name = "rnd"
builtin = "random"

[[bots]]
name = "heur"
builtin = "heuristic"

[[bots]]
name = "good"
command = [{python}, "good_bot.py"]

[[bots]]
name = "nothere"
command = [{python}, "nothere.py"]

[[bots]]
name = "far"
command = [{python}, {json.dumps(str(elsewhere / "far_bot.py"))}]

[[bots]]
name = "shim"
command = ["python", "good_bot.py"]
"""
    )
    env = dict(os.environ, PATH=f"{shims}{os.pathsep}{os.environ['PATH']}")
    # The shim works outside the sandbox: only the sandbox hides what it runs.
    ran = subprocess.run([str(shim), "-c", "print('ok')"], capture_output=True, text=True, check=True)
    assert ran.stdout.strip() == "ok"
    return config, env


def run_hearts(
    env: dict[str, str], *args: str, cwd: Path | None = None, timeout: float = 240
) -> subprocess.CompletedProcess[str]:
    return hearts(*args, env=env, cwd=cwd, timeout=timeout)


def entrant_lines(stderr: str, bot: str) -> list[str]:
    return [line for line in stderr.splitlines() if f"entrant {bot!r}" in line]


def assert_broken_named(stderr: str, tmp_path: Path) -> None:
    for bot in BROKEN:
        lines = entrant_lines(stderr, bot)
        assert len(lines) == 1, (bot, stderr)
        assert lines[0].startswith("hearts: error: "), lines[0]
        assert "; fix: " in lines[0], lines[0]
    assert entrant_lines(stderr, "good") == [], stderr
    nothere = entrant_lines(stderr, "nothere")[0]
    assert "nothere.py does not exist" in nothere and str(tmp_path / "cfg") in nothere
    far = entrant_lines(stderr, "far")[0]
    assert "outside what its sandbox shows" in far
    assert f'files = ["{tmp_path / "elsewhere"}"]' in far
    shim = entrant_lines(stderr, "shim")[0]
    # The cause: what `python` resolves to, and the first error line of its log.
    assert str(tmp_path / "shims" / "python") in shim and "realpython: not found" in shim
    assert sys.executable in shim  # the fix names an interpreter that runs in the sandbox
    log = shim.split("log: ")[1].split(")")[0]
    assert Path(log).is_file() and "realpython" in Path(log).read_text()


@pytest.mark.timeout(300)
def test_check_names_every_entrant_that_cannot_start(tmp_path: Path) -> None:
    config, env = broken_field(tmp_path)
    # The config's output folder (runs/field, where the check's logs go) is relative to cwd.
    result = run_hearts(env, "tournament", "check", str(config), cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert_broken_named(result.stderr, tmp_path)
    assert "good: ok" in result.stdout, result.stdout
    assert "3 of 4 command entrants cannot play" in result.stderr


@pytest.mark.timeout(300)
def test_run_refuses_broken_entrants_unless_allowed(tmp_path: Path) -> None:
    config, env = broken_field(tmp_path)
    out = tmp_path / "out"
    refused = run_hearts(env, "tournament", "run", str(config), "--output", str(out))
    assert refused.returncode == 2, refused.stderr
    assert_broken_named(refused.stderr, tmp_path)
    assert "--allow-broken" in refused.stderr
    assert not (out / "tournament.sqlite").exists()  # nothing was scheduled or played

    played = run_hearts(env, "tournament", "run", str(config), "--output", str(out), "--allow-broken")
    # Finished, but entrants failed: the exit status says so.
    assert played.returncode == 3, played.stderr
    for bot in BROKEN:
        during = [line for line in entrant_lines(played.stderr, bot) if " in game " in line]
        assert during, (bot, played.stderr)
        # One line per process: the game, the exit status, the first error line and the log.
        line = during[0]
        assert "exited with status" in line and "log: " in line, line
        log = Path(line.rsplit("log: ", 1)[1])
        assert log.is_file(), line
    nothere = next(x for x in entrant_lines(played.stderr, "nothere") if " in game " in x)
    assert "can't open file" in nothere
    assert "never played a decision of its own" in played.stdout

    report = json.loads(hearts("tournament", "report", str(out), "--format", "json").stdout)
    order = [s["bot"] for s in report["standings"]]
    lines = {s["bot"]: s for s in report["standings"]}
    for bot in BROKEN:
        assert lines[bot]["never_played"] is True
        # Never among those that played, however the referee's default play placed it.
        assert order.index(bot) > max(order.index(b) for b in ("rnd", "heur", "good"))
    for bot in ("rnd", "heur", "good"):
        assert lines[bot]["never_played"] is False
    table = hearts("tournament", "report", str(out)).stdout
    assert table.count("NEVER PLAYED") >= 3, table
    with web_server(out) as url:
        board = get(url + "/")
        for bot in BROKEN:
            row = re.search(rf'<tr data-bot="{bot}".*?</tr>', board.body, re.S)
            assert row is not None and "NEVER PLAYED" in row.group(0), bot
        good = re.search(r'<tr data-bot="good".*?</tr>', board.body, re.S)
        assert good is not None and "NEVER PLAYED" not in good.group(0)
        assert "NEVER PLAYED" in get(url + "/bot/shim").body
        # The note says how the table is ranked, in the report's own words.
        assert "Ranked by strength: a batch Plackett-Luce fit" in board.body
        assert "Ranked by mean place" not in board.body
        # Warm bots (the default): the bot page shows the lines of its warm process's log.
        page = get(url + "/bot/nothere").body
        assert "logs/nothere/warm-" in page and "can&#39;t open file" in page, page[-3000:]
    with web_server(out, "--logs", "never") as url:
        page = get(url + "/bot/nothere").body
        assert "logs/nothere/warm-" not in page and "can&#39;t open file" not in page


@pytest.mark.timeout(300)
def test_a_stdio_bot_that_does_not_flush_is_told_to(tmp_path: Path) -> None:
    """A real bot that forgets to flush: its answers wait in its stdout buffer, every decision
    times out, and the check says it wrote nothing and may be buffering."""
    lowest = (ROOT / "clients" / "stdio" / "lowest.py").read_text()
    assert "flush=True" in lowest
    (tmp_path / "buffered.py").write_text(lowest.replace(", flush=True", ""))
    config = tmp_path / "buffered.toml"
    config.write_text(
        f"""
[tournament]
name = "buffered"
table_size = 6
deals = 1
decision_ms = 300
time_bank_ms = 2000
output = "{tmp_path / "out"}"

[[bots]]
name = "buffered"
command = [{json.dumps(sys.executable)}, "buffered.py"]
protocol = "stdio"

[[bots]]
name = "rnd"
builtin = "random"
"""
    )
    result = hearts("tournament", "check", str(config))
    assert result.returncode == 1, result.stderr
    (line,) = entrant_lines(result.stderr, "buffered")
    assert "never made a decision of its own" in line
    assert "wrote nothing on its stdout: it may be buffering" in line
    assert "flush after every line" in line
    log = Path(line.split("(log: ")[1].split(")")[0])
    kept = log.read_text()
    assert "flush after every line" in kept
    assert '"bytes_read": 0' in kept  # the bridge's summary: the whole log is kept


@pytest.mark.timeout(300)
def test_a_stdio_bot_entered_without_its_protocol_is_told_to_add_it(tmp_path: Path) -> None:
    """A real stdin/stdout bot (clients/stdio/lowest.py) entered without protocol = "stdio":
    started as a gRPC bot, it finds nothing on its stdin and exits with status 0 and an empty
    log. The check says what that usually means and the fix, and with the key it plays."""
    (tmp_path / "lowest.py").write_text((ROOT / "clients" / "stdio" / "lowest.py").read_text())
    entry = f"""
[tournament]
name = "nokey"
table_size = 6
deals = 1

[[bots]]
name = "lowest"
command = [{json.dumps(sys.executable)}, "lowest.py"]
{{protocol}}
[[bots]]
name = "rnd"
builtin = "random"
"""
    config = tmp_path / "nokey.toml"
    config.write_text(entry.format(protocol=""))
    result = run_hearts(dict(os.environ), "tournament", "check", config.name, cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    (line,) = entrant_lines(result.stderr, "lowest")
    cause, fix = line.split("; fix: ")
    assert "exited with status 0" in cause and "its log is empty" in cause, line
    assert 'usually means a stdin/stdout bot entered without protocol = "stdio"' in cause, line
    assert 'add protocol = "stdio" to its entry' in fix, line
    config.write_text(entry.format(protocol='protocol = "stdio"'))
    fixed = run_hearts(dict(os.environ), "tournament", "check", config.name, cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stderr
    assert "lowest: ok" in fixed.stdout, fixed.stdout


@pytest.mark.timeout(300)
def test_league_add_checks_the_entrant_first(tmp_path: Path) -> None:
    (tmp_path / "good_bot.py").write_text(GOOD_BOT)
    league = tmp_path / "lg"
    assert hearts("league", "init", str(league), "--max-hands", "1").returncode == 0
    python = sys.executable
    refused = subprocess.run(
        [python, "-m", "hearts_tournaments", "league", "add", str(league), "mine", "--command",
         f"{python} nothere.py"],
        capture_output=True, text=True, cwd=tmp_path, timeout=240, check=False,
    )  # fmt: skip
    assert refused.returncode == 2, refused.stderr
    (line,) = entrant_lines(refused.stderr, "mine")
    assert "nothere.py does not exist" in line and "; fix: " in line
    assert "mine was not added" in refused.stderr
    added = subprocess.run(
        [python, "-m", "hearts_tournaments", "league", "add", str(league), "mine", "--command",
         f"{python} good_bot.py"],
        capture_output=True, text=True, cwd=tmp_path, timeout=240, check=False,
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    assert "mine@v1" in added.stdout
