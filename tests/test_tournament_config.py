"""Tournament config files: every mistake gets one line naming the key, and exit 2."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from hearts_core.defaults import TablePolicy
from hearts_tournaments.arena.bots import BotSpec, Reuse
from hearts_tournaments.arena.sandbox import LIMIT_KEYS, Limits, SandboxKind
from hearts_tournaments.arena.settings import PlaySettings
from hearts_tournaments.cli.main import app
from hearts_tournaments.tournament.config import (
    TOURNAMENT_KEYS,
    ConfigError,
    TournamentConfig,
    demo_config_text,
    load_config,
    parse_config,
)
from tests.conftest import ROOT
from tests.helpers.cli import hearts

GOOD = """
[tournament]
name = "spring"
table_size = 6
deals = 2

[[bots]]
name = "careful"
builtin = "heuristic"

[[bots]]
name = "mine"
command = ["python", "my_bot.py"]
"""

BOTS = """
[[bots]]
name = "a"
builtin = "heuristic"

[[bots]]
name = "b"
builtin = "random"
"""

# (config text, text that must be in the one error line)
BAD = [
    ("[tournament\ntable_size = 6", "not valid TOML"),
    ("[tournament]\ntable_size = 6\ncolour = 1\n" + BOTS, "tournament.colour: unknown key"),
    ("[tournament]\ntable_size = 6\n[league]\n" + BOTS, "league: unknown section"),
    (BOTS, "tournament: missing"),
    ("[tournament]\ndeals = 2\n" + BOTS, "tournament.table_size: missing"),
    ('[tournament]\ntable_size = "six"\n' + BOTS, "tournament.table_size: must be a whole number"),
    ("[tournament]\ntable_size = 12\n" + BOTS, "tournament.table_size: must be between 6 and 11, not 12"),
    ("[tournament]\ntable_size = 5\n" + BOTS, "tournament.table_size: must be between 6 and 11"),
    ("[tournament]\ntable_size = 6\ndeals = 0\n" + BOTS, "tournament.deals: must be between 1"),
    ("[tournament]\ntable_size = 6\nduplicate = 1\n" + BOTS, "tournament.duplicate: must be true or false"),
    ("[tournament]\ntable_size = 6\nconcurrency = true\n" + BOTS, "tournament.concurrency: must be a whole"),
    (
        "[tournament]\ntable_size = 6\ntarget_score = -5\n" + BOTS,
        "tournament.target_score: must be between 1 and 10000",
    ),
    ('[tournament]\ntable_size = 6\nserver = "nowhere"\n' + BOTS, "tournament.server: must be"),
    ('[tournament]\ntable_size = 6\nname = "a b"\n' + BOTS, "tournament.name: must be"),
    ("[tournament]\ntable_size = 6\nseed = 1.5\n" + BOTS, "tournament.seed: must be"),
    ("[tournament]\ntable_size = 6\n", "bots: missing"),
    ('[tournament]\ntable_size = 6\n[[bots]]\nname = "a"\nbuiltin = "random"\n', "at least 2 bots"),
    (
        "[tournament]\ntable_size = 6\n"
        + "".join(f'[[bots]]\nname = "b{i}"\nbuiltin = "random"\n' for i in range(1001)),
        "bots: a tournament takes at most 1000 bots, not 1001",
    ),
    (
        '[tournament]\ntable_size = 6\n[[bots]]\nname = "a"\nbuiltin = "random"\n'
        '[[bots]]\nname = "a"\nbuiltin = "heuristic"\n',
        "bots[1].name: 'a' is used twice",
    ),
    (
        '[tournament]\ntable_size = 6\n[[bots]]\nname = "a"\nbuiltin = "random"\ncommand = ["x"]\n' + BOTS,
        "bots[0]: bot 'a' needs exactly one of builtin",
    ),
    (
        '[tournament]\ntable_size = 6\n[[bots]]\nname = "a"\n' + BOTS,
        "bots[0]: bot 'a' needs exactly one of builtin",
    ),
    (
        '[tournament]\ntable_size = 6\n[[bots]]\nname = "a"\nbuiltin = "genius"\n' + BOTS,
        'bots[0].builtin: unknown built-in bot "genius": use one of',
    ),
    (
        '[tournament]\ntable_size = 6\n[[bots]]\nname = "a"\ncommand = "python bot.py"\n' + BOTS,
        "bots[0].command: must be a non-empty list of strings",
    ),
    (
        '[tournament]\ntable_size = 6\n[[bots]]\nname = "a"\nbuiltin = "random"\nsize = 3\n' + BOTS,
        "bots[0].size: unknown key",
    ),
    (
        '[tournament]\ntable_size = 6\n[[bots]]\nname = "a"\nbuiltin = "random"\noptions = { depth = 3 }\n'
        + BOTS,
        "bots[0].options: not accepted by 'random'",
    ),
    ('[tournament]\ntable_size = 6\n[[bots]]\nbuiltin = "random"\n' + BOTS, "bots[0].name: missing"),
    ('[tournament]\ntable_size = 6\nsandbox = "docker"\n' + BOTS, 'tournament.sandbox: must be "bwrap"'),
    ("[tournament]\ntable_size = 6\n" + BOTS + "[limits]\nmemory_mb = 0\n", "limits.memory_mb: must be at"),
    ("[tournament]\ntable_size = 6\n" + BOTS + "[limits]\ncolour = 1\n", "limits.colour: unknown key"),
    ("[tournament]\ntable_size = 6\n" + BOTS + '[limits]\ncpu_s = "lots"\n', "limits.cpu_s: must be a whole"),
    (
        '[tournament]\ntable_size = 6\n[[bots]]\nname = "a"\nbuiltin = "random"\nfiles = "x"\n' + BOTS,
        "bots[0].files: only command bots",
    ),
    (
        '[tournament]\ntable_size = 6\n[[bots]]\nname = "a"\ncommand = ["x"]\nfiles = 3\n' + BOTS,
        "bots[0].files: must be a path or a list of paths",
    ),
    (
        '[tournament]\ntable_size = 6\n[[bots]]\nname = "a"\nbuiltin = "random"\nsandbox = "off"\n' + BOTS,
        'bots[0].sandbox: must be "bwrap"',
    ),
]


def run_cli(*args: str) -> Result:
    """The real ``hearts`` command line, invoked in this process (a subprocess per case is slow)."""
    return CliRunner().invoke(app, list(args))


@pytest.mark.parametrize(("text", "needle"), BAD)
def test_a_bad_config_gets_one_line_naming_the_key_and_exit_2(tmp_path: Path, text: str, needle: str) -> None:
    config = tmp_path / "league.toml"
    config.write_text(text)
    result = run_cli("tournament", "run", str(config), "--output", str(tmp_path / "out"))
    assert result.exit_code == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"hearts: error: {config}: "), lines[0]
    assert needle in lines[0]
    assert result.stdout == ""
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("text", "needle"), [BAD[0], BAD[6], BAD[17]])
def test_the_command_exits_2_with_one_line_and_no_traceback(tmp_path: Path, text: str, needle: str) -> None:
    config = tmp_path / "league.toml"
    config.write_text(text)
    result = hearts("tournament", "run", str(config))
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and needle in result.stderr
    assert "Traceback" not in result.stderr


def test_a_missing_config_file_gets_one_line(tmp_path: Path) -> None:
    missing = tmp_path / "nope.toml"
    result = run_cli("tournament", "run", str(missing))
    assert result.exit_code == 2
    assert result.stderr == f"hearts: error: {missing}: no such config file\n"


def test_run_needs_a_config_or_the_demo() -> None:
    result = run_cli("tournament", "run")
    assert result.exit_code == 2
    assert result.stderr.strip() == "hearts: error: give a tournament config file, or --demo (not both)"


def test_resume_and_report_refuse_a_folder_without_a_tournament(tmp_path: Path) -> None:
    for command in ("resume", "report"):
        result = run_cli("tournament", command, str(tmp_path))
        assert result.exit_code == 2
        assert (
            result.stderr.strip() == f"hearts: error: {tmp_path} holds no tournament (no tournament.sqlite)"
        )


def test_a_good_config_reads_with_defaults_and_commands_run_in_its_folder(tmp_path: Path) -> None:
    path = tmp_path / "spring.toml"
    path.write_text(GOOD)
    config, text = load_config(path)
    assert text == GOOD
    assert config.name == "spring" and config.table_size == 6 and config.deals == 2
    assert config.duplicate and config.seed == "1" and config.target_score == 150
    assert config.output == Path("runs/spring")
    assert config.quarantine_after == 3 and config.server == ""
    mine = config.bot("mine")
    assert mine.command == ("python", "my_bot.py") and mine.workdir == tmp_path


def test_sandbox_keys_read_per_tournament_and_per_bot(tmp_path: Path) -> None:
    text = (
        '[tournament]\ntable_size = 6\nsandbox = "none"\n[limits]\nmemory_mb = 256\nlog_bytes = 5000\n'
        '[[bots]]\nname = "a"\ncommand = ["bin/a"]\nfiles = ["bin", "data"]\nsandbox = "bwrap"\n'
        '[[bots]]\nname = "b"\nbuiltin = "random"\n'
    )
    config = parse_config(text, tmp_path)
    assert config.sandbox is SandboxKind.NONE
    assert config.limits == Limits(memory_mb=256, log_bytes=5000)
    a, b = config.bots
    assert a.files == (tmp_path / "bin", tmp_path / "data") and config.sandbox_of(a) is SandboxKind.BWRAP
    assert b.files is None and config.sandbox_of(b) is SandboxKind.NONE
    assert a.to_json()["files"] == [str(tmp_path / "bin"), str(tmp_path / "data")]


@pytest.mark.parametrize(
    ("files", "needle"),
    [(".", "holds the config file"), ("out", "holds the output folder"), ("nowhere", "does not exist")],
)
def test_bot_files_that_would_show_the_config_or_the_output_are_refused(
    tmp_path: Path, files: str, needle: str
) -> None:
    (tmp_path / "out").mkdir()
    config = tmp_path / "league.toml"
    config.write_text(
        '[tournament]\ntable_size = 6\n[[bots]]\nname = "a"\nbuiltin = "random"\n'
        f'[[bots]]\nname = "b"\ncommand = ["b"]\nfiles = "{files}"\n'
    )
    result = run_cli("tournament", "run", str(config), "--output", str(tmp_path / "out" / "run"))
    assert result.exit_code == 2, result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("hearts: error: bot 'b': files") and needle in line, line
    assert not (tmp_path / "out" / "run").exists()


def test_the_demo_config_reads() -> None:
    config = parse_config(demo_config_text(), Path.cwd())
    assert config.name == "demo" and config.table_size == 6
    assert {"heuristic", "random"} <= {b.builtin for b in config.bots}


def test_config_errors_carry_the_key() -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config("[tournament]\ntable_size = 99\n" + BOTS, Path.cwd())
    assert caught.value.key == "tournament.table_size"


def test_the_documented_example_is_complete_and_reads(tmp_path: Path) -> None:
    doc = (ROOT / "docs" / "TOURNAMENTS.md").read_text()
    example = next(
        block for block in re.findall(r"```toml\n(.*?)```", doc, flags=re.S) if "[[bots]]" in block
    )
    config = parse_config(example, tmp_path)
    assert config.name == "spring" and len(config.bots) == 4
    assert config.bot("searcher").runtime == "python-sdk"
    for key in TOURNAMENT_KEYS:
        assert re.search(rf"^{key} = ", example, flags=re.M), f"docs/TOURNAMENTS.md lacks {key}"
    for key in LIMIT_KEYS:
        assert re.search(rf"^{key} = ", example, flags=re.M), f"docs/TOURNAMENTS.md lacks limits.{key}"
    assert config.limits == Limits() and config.sandbox is SandboxKind.BWRAP


def test_a_config_gives_the_arena_every_play_setting_it_holds(tmp_path: Path) -> None:
    """``TournamentConfig.play_settings`` carries each setting the arena reads, none left at its
    default (every value here differs from :class:`PlaySettings`'s default)."""
    bots = (BotSpec(name="a", builtin="random"), BotSpec(name="b", command=("true",), workdir=tmp_path))
    config = TournamentConfig(
        name="spring",
        table_size=7,
        bots=bots,
        target_score=50,
        max_hands=9,
        policy=TablePolicy(decision_ms=1234),
        limits=Limits(memory_mb=300),
        sandbox=SandboxKind.NONE,
        reuse=Reuse.NEVER,
        restart_after=7,
        server="127.0.0.1:5000",
        hide_names=True,
        base_dir=tmp_path,
    )
    settings = config.play_settings()
    default = PlaySettings(name="", table_size=0, bots=())
    for field in dataclasses.fields(PlaySettings):
        assert getattr(settings, field.name) == getattr(config, field.name), field.name
        assert getattr(settings, field.name) != getattr(default, field.name), field.name
    assert settings.bot("b") == config.bot("b") and settings.sandbox_of(bots[0]) is SandboxKind.NONE
