"""Every test module is in the tier of what it starts (tests/conftest.py assigns them).

The unit tier (``make check``) must stay fast: a module in it may not build an example bot or a
runtime, start a sandbox, a browser or a Ray cluster, or play through the ``hearts`` command line.
Each of those is recognised in a module's source by the helper that does it
(``tests/helpers``) or by the command it runs, and the module must carry that tier (or, for what
only the ``slow`` tier needs, any tier beyond the unit tier).
"""

from __future__ import annotations

import ast
import fnmatch
from pathlib import Path

import pytest

from tests.conftest import FIXTURE_TIERS, ROOT, TIER_MARKS, TIERS, UNIT, tiers_of

TESTS = ROOT / "tests"
#: Helpers, by the name a test calls them by, and the tier a test that calls one belongs to.
HELPERS = {
    "built_bot": "toolchain",  # tests.helpers.toolchains: builds clients/<language>
    "require_toolchain": "toolchain",
    "require_runtime": "toolchain",  # tests.helpers.runtimes: hearts runtime install
    "launch_browser": "browser",  # tests.helpers.browser
    "sync_playwright": "browser",
    "ray_module": "ray",  # tests.helpers.ray_cluster
    "require_bwrap": "slow",  # tests.helpers.toolchains: a test that starts the real sandbox
    "start_hearts": "slow",  # tests.helpers.cli: a tournament or league in the background
    "web_server": "slow",  # tests.helpers.web_server: hearts web in a subprocess
    "web_process": "slow",
}
#: Commands of the ``hearts`` CLI that play games with real bot processes.
PLAYING = [tuple(command.split()) for command in ("tournament run", "tournament resume", "league run")]
BEYOND_UNIT = "any tier beyond the unit tier"


def modules() -> list[Path]:
    return sorted(TESTS.glob("test_*.py"))


def needs(source: str) -> dict[str, str]:
    """What a test module's source starts, as {tier: why}."""
    tree = ast.parse(source)
    found: dict[str, str] = {}
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Name):
            names = [node.id]
        elif isinstance(node, ast.Attribute):
            names = [node.attr]
        elif isinstance(node, ast.ImportFrom):
            names = [alias.asname or alias.name for alias in node.names]
            if node.module == "ray" or (node.module or "").startswith("ray."):
                found.setdefault("ray", f"imports {node.module}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "ray":
                    found.setdefault("ray", "imports ray")
        elif isinstance(node, ast.arg) and node.arg in FIXTURE_TIERS:
            found.setdefault(FIXTURE_TIERS[node.arg], f"uses the {node.arg} fixture")
        for name in names:
            if name in HELPERS:
                found.setdefault(HELPERS[name], f"calls {name}")
        if isinstance(node, ast.Call | ast.List | ast.Tuple):
            items = [*node.args] if isinstance(node, ast.Call) else [*node.elts]
            words = [item.value if isinstance(item, ast.Constant) else None for item in items]
            for command in PLAYING:
                if any(plays(words, i, command) for i in range(len(words))):
                    found.setdefault("slow", f"runs hearts {' '.join(command)}")
    return found


def plays(words: list[object], at: int, command: tuple[str, ...]) -> bool:
    """Whether ``words[at:]`` is ``command`` followed by what it plays (a config or a folder, not
    a flag: ``hearts tournament run --no-such-flag`` is refused before anything starts)."""
    end = at + len(command)
    if tuple(words[at:end]) != command or end == len(words):
        return False
    following = words[end]
    return not (isinstance(following, str) and following.startswith("-"))


def fixtures_used(source: str) -> set[str]:
    """The tier fixtures a module's tests or fixtures take as parameters."""
    return {
        node.arg
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.arg) and node.arg in FIXTURE_TIERS
    }


def missing_tiers(path: Path) -> list[str]:
    """What ``path`` starts that its tiers do not cover, one line each."""
    source = path.read_text()
    tiers = tiers_of(path.stem, fixtures_used(source))
    lines = []
    for tier, why in sorted(needs(source).items()):
        covered = bool(tiers) if tier == "slow" else tier in tiers
        if not covered:
            wanted = BEYOND_UNIT if tier == "slow" else f"the {tier} tier"
            lines.append(f"{path.name} {why}: put it in {wanted} (TIERS in tests/conftest.py)")
    return lines


@pytest.mark.parametrize("path", modules(), ids=lambda path: path.stem)
def test_each_module_is_in_the_tier_of_what_it_starts(path: Path) -> None:
    assert missing_tiers(path) == []


def test_the_tier_lists_name_modules_that_exist_with_registered_tiers() -> None:
    names = [path.stem for path in modules()]
    assert [pattern for pattern in TIERS if not fnmatch.filter(names, pattern)] == []
    assert {tier for tiers in TIERS.values() for tier in tiers} <= set(TIER_MARKS)
    assert set(FIXTURE_TIERS.values()) <= set(TIER_MARKS)


@pytest.mark.parametrize(
    ("source", "tier"),
    [
        ("from tests.helpers.toolchains import built_bot\nbuilt_bot('go')\n", "toolchain"),
        ("from tests.helpers.ray_cluster import cluster, ray_module\n", "ray"),
        ("hearts('tournament', 'run', str(config), '--progress', 'never')\n", "slow"),
        ("hearts(folder, 'tournament', 'run', 't.toml')\n", "slow"),
        ("command = [sys.executable, '-m', 'hearts_tournaments', 'league', 'run', folder]\n", "slow"),
        ("from tests.helpers.toolchains import require_bwrap\n", "slow"),
    ],
)
def test_the_rule_recognises_what_starts_a_tier(source: str, tier: str, tmp_path: Path) -> None:
    """A unit-tier module (one :data:`TIERS` does not name) that does any of these is refused."""
    assert tier in needs(source)
    path = tmp_path / "test_not_in_any_tier.py"
    path.write_text(source)
    assert len(missing_tiers(path)) == 1


@pytest.mark.parametrize(
    "source",
    [
        "from hearts_core.cards import Card\n\n\ndef test_parse():\n    assert Card.parse('QS')\n",
        "hearts('tournament', 'run', '--no-such-flag')\n",
        "hearts('tournament', 'run')\n",
    ],
)
def test_a_module_that_plays_nothing_is_left_in_the_unit_tier(source: str, tmp_path: Path) -> None:
    path = tmp_path / "test_plain.py"
    path.write_text(source)
    assert needs(source) == {}
    assert missing_tiers(path) == []


def test_a_test_that_takes_a_tier_fixture_is_in_its_tier(tmp_path: Path) -> None:
    """The ``browser`` fixture puts a test in the browser tier, wherever its module is."""
    source = "def test_page(browser):\n    pass\n"
    assert needs(source) == {"browser": "uses the browser fixture"}
    assert tiers_of("test_not_in_any_tier", fixtures_used(source)) == {"browser"}
    path = tmp_path / "test_not_in_any_tier.py"
    path.write_text(source)
    assert missing_tiers(path) == []


def test_make_check_runs_the_unit_tier() -> None:
    makefile = (ROOT / "Makefile").read_text()
    recipe = makefile.partition("\ncheck:")[2].partition("\n\n")[0]
    assert f'-m "{UNIT}"' in recipe
