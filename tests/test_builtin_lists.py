"""Every list of the built-in bots a user reads is the registry's (``hearts_client.bots``).

The help names them from the registry when it is shown (``hearts bot --help``). The docs are
prose, so their lists are typed by hand: this finds every list of built-in bots in README.md
docs/ and the clients' READMEs and checks it against the registry, so that adding a bot without updating them
fails here. A list is a run of two or more distinct backquoted names joined by commas, "and" or
"or", where at least two are built-ins and either it names three or more or its sentence says
"built-in"; a run that repeats a name is a table's seating, not a list. A list in a sentence
about the demo is the demo's roster and is checked against the demo's configuration instead.
"""

from __future__ import annotations

import re
import tomllib

import pytest

from hearts_client.bots import BUILTIN_BOTS, describe, make_bot
from hearts_core.local import play_game
from hearts_core.rules import Rules
from hearts_tournaments.tournament.config import demo_config_text
from tests.conftest import ROOT
from tests.helpers.cli import hearts

DOCS = [
    ROOT / "README.md",
    *sorted((ROOT / "docs").glob("**/*.md")),
    *sorted((ROOT / "clients").glob("*/README.md")),
]
#: A run of backquoted lower-case names: `a`, `b` and `c` (or: `a`, `b`, `c`; `a` or `b`).
RUN = re.compile(r"`[a-z][a-z0-9_-]*`(?:(?:,? and|,? or|,) `[a-z][a-z0-9_-]*`)+")


def _sentences(text: str) -> list[str]:
    """The prose of a Markdown file, code blocks left out, as sentences on one line each (a list
    item, a heading and a table row each start a new one)."""
    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    blocks = re.split(r"\n\s*\n|\n(?=\s*(?:[-*] |\d+\. |#|\|))", prose)
    out = []
    for block in blocks:
        flat = " ".join(block.split())
        out += re.split(r"(?<=[.!?])\s+(?=[A-Z(`*])", flat)
    return out


def builtin_lists(text: str) -> list[tuple[list[str], str]]:
    """Every list of built-in bots in ``text`` with its sentence."""
    found = []
    for sentence in _sentences(text):
        for run in RUN.finditer(sentence):
            names = re.findall(r"`([^`]+)`", run.group())
            builtins = [n for n in names if n in BUILTIN_BOTS]
            if len(set(names)) < len(names) or len(builtins) < 2:
                continue  # a seating (a name repeated), or not about the bots
            if len(names) >= 3 or "built-in" in sentence:
                found.append((names, sentence))
    return found


def test_the_finder_finds_lists_and_leaves_the_rest() -> None:
    text = (
        "The built-in bots (`random`, `heuristic`,\n`montecarlo`) play.\n\n"
        "A table of `heuristic`, `random`, `heuristic` is a seating. "
        "`ismcts` and `montecarlo` differ here. Pick `random` or `heuristic`, built-in both.\n"
        "```\n`random`, `heuristic`, `montecarlo`\n```\n"
    )
    assert [names for names, _ in builtin_lists(text)] == [
        ["random", "heuristic", "montecarlo"],
        ["random", "heuristic"],
    ]


def test_every_list_of_built_in_bots_in_the_docs_is_the_registry() -> None:
    demo = tomllib.loads(demo_config_text())
    roster = {bot["builtin"] for bot in demo["bots"] if "builtin" in bot}
    checked = []
    for doc in DOCS:
        for names, sentence in builtin_lists(doc.read_text()):
            where = f"{doc.relative_to(ROOT)}: {sentence}"
            expected = roster if "demo" in sentence.lower() else set(BUILTIN_BOTS)
            assert set(names) == expected, (
                f"{where}\nnames {sorted(names)}, the built-ins are {sorted(expected)}"
            )
            checked.append(where)
    # The README's and TOURNAMENTS.md's lists of the built-ins, and the demo's roster.
    assert sum("README.md" in w for w in checked) >= 1, checked
    assert sum("TOURNAMENTS.md" in w for w in checked) >= 2, checked
    assert sum("ARCHITECTURE.md" in w for w in checked) >= 1, checked


def test_the_help_names_every_built_in_bot() -> None:
    result = hearts("bot", "run", "--help")
    assert result.returncode == 0, result.stderr
    help_text = " ".join(result.stdout.replace("│", " ").split())
    names = ", ".join(list(BUILTIN_BOTS)[:-1]) + f" or {list(BUILTIN_BOTS)[-1]}"
    assert f"The built-in bot: {names}." in help_text, help_text


def test_the_help_describes_every_built_in_bot() -> None:
    result = hearts("bot", "run", "--help")
    assert result.returncode == 0, result.stderr
    help_text = " ".join(result.stdout.replace("│", " ").split())
    for name in BUILTIN_BOTS:
        line = describe(name)
        assert line.endswith("."), f"{name}: give its class a docstring that starts with a sentence"
        assert f"{name}: {line}" in help_text, help_text


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", list(BUILTIN_BOTS))
def test_every_built_in_bot_plays_a_hand_at_every_seat(name: str) -> None:
    players = 6
    for seat in range(players):
        bots = [make_bot(name, 7) if s == seat else make_bot("random", s) for s in range(players)]
        state = play_game(Rules(players=players, target_score=1), f"builtin-{seat}", bots)
        assert len(state.results) == 1, (name, seat)  # one whole hand, every play legal
