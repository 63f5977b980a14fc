"""`resume` tells when the config file was edited since the tournament began, and what changed."""

from __future__ import annotations

from pathlib import Path

from hearts_tournaments.tournament.config_diff import config_changes
from tests.helpers.cli import hearts

CONFIG = """
[tournament]
name = "edited"
table_size = 6
deals = 1
duplicate = false
seed = 4
target_score = 30
sandbox = "none"
""" + "".join(f'[[bots]]\nname = "r{i}"\nbuiltin = "random"\n' for i in range(6))


def test_config_changes_name_each_key_and_bot() -> None:
    assert config_changes(CONFIG, CONFIG) == []
    assert config_changes(CONFIG, CONFIG.replace("seed = 4", "seed = 4  # a comment")) == []
    edited = (
        CONFIG.replace("deals = 1", "deals = 3")
        .replace('name = "r5"\nbuiltin = "random"', 'name = "r5"\nbuiltin = "heuristic"')
        .replace('sandbox = "none"\n', "")
        + '[[bots]]\nname = "new"\nbuiltin = "random"\n'
    )
    assert config_changes(CONFIG, edited) == [
        "bots[new]: added",
        "bots[r5].builtin: 'random' -> 'heuristic'",
        "tournament.deals: 1 -> 3",
        "tournament.sandbox: removed (was 'none')",
    ]
    # Not TOML: the changed lines.
    assert config_changes("a = 1\nb = 2\n", "a = 1\nb = [\n") == ["-b = 2", "+b = ["]
    assert config_changes(CONFIG, "not [toml")[-1].startswith("... and ")


def test_resume_names_what_changed_in_the_edited_config(tmp_path: Path) -> None:
    config = tmp_path / "t.toml"
    config.write_text(CONFIG)
    folder = tmp_path / "out"
    result = hearts("tournament", "run", str(config), "--output", str(folder), timeout=300)
    assert result.returncode == 0, result.stderr

    unchanged = hearts("tournament", "resume", str(folder))
    assert unchanged.returncode == 0, unchanged.stderr
    assert "edited" not in unchanged.stderr.replace('"edited"', "")

    config.write_text(
        CONFIG.replace("deals = 1", "deals = 5").replace("target_score = 30", "target_score = 50")
    )
    resumed = hearts("tournament", "resume", str(folder))
    assert resumed.returncode == 0, resumed.stderr
    assert f"warning: {config} was edited since this tournament was created" in resumed.stderr
    assert "  tournament.deals: 1 -> 5\n" in resumed.stderr
    assert "  tournament.target_score: 30 -> 50\n" in resumed.stderr
    assert "--fresh" in resumed.stderr

    # Another file, named with --config; and a file that cannot be read is one clear line.
    other = tmp_path / "other.toml"
    other.write_text(CONFIG.replace('name = "r0"', 'name = "q0"'))
    named = hearts("tournament", "resume", str(folder), "--config", str(other))
    assert "  bots[q0]: added\n" in named.stderr and "  bots[r0]: removed\n" in named.stderr
    missing = hearts("tournament", "resume", str(folder), "--config", str(tmp_path / "nope.toml"))
    assert missing.returncode == 2
    assert (
        missing.stderr.startswith("hearts: error: cannot read --config") and "Traceback" not in missing.stderr
    )
