"""Every example bot passes every check of the bot test kit: the Go, Rust, Java, TypeScript and
C++ examples (clients/), a Python bot on the SDK (docs/WRITING_A_BOT.md's), and both stdio
examples, these three times over side by side (no false failure on a loaded machine).

Each runs as an author runs it: from the repository's root with its roster command (a compiled
example is built first, by ``clients/<language>/build``).
"""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path

import pytest

from hearts_tournaments.arena.bots import BotProtocol, BotSpec
from hearts_tournaments.kit.report import Report
from hearts_tournaments.kit.run import run_kit, run_kit_async
from hearts_tournaments.kit.subject import bot_under_test
from tests.conftest import ROOT
from tests.helpers.toolchains import LANGUAGES, built_bot

STDIO = ROOT / "clients" / "stdio"
#: Files of an example the sandbox needs (by default: its whole folder); the Rust example's
#: build folder is large, so only its program and the binary it runs.
FILES = {"rust": ("clients/rust/bot", "clients/rust/target/release/bot")}
#: Each stdio example is tested this many times at once.
REPEATS = 3


def _passed(report: Report) -> None:
    assert report.passed, "\n".join(report.text(verbose=True))


@pytest.mark.timeout(1500)
@pytest.mark.parametrize("language", LANGUAGES)
def test_the_example_bot_passes_every_check(language: str) -> None:
    bot = built_bot(language)
    spec = bot_under_test(
        [str(bot.relative_to(ROOT))],
        files=[Path(f) for f in FILES.get(language, ())],
        workdir=ROOT,
    )
    _passed(run_kit(spec))


WRITING_A_BOT = ROOT / "docs" / "WRITING_A_BOT.md"


@pytest.mark.timeout(600)
def test_a_python_sdk_bot_passes_every_check(tmp_path: Path) -> None:
    """The complete bot of docs/WRITING_A_BOT.md, in a folder of its own, as it says."""
    (source,) = re.findall(r"`my_bot.py`:\n\n```python\n(.*?)```", WRITING_A_BOT.read_text(), re.S)
    (tmp_path / "my_bot.py").write_text(source)
    spec = bot_under_test([sys.executable, "my_bot.py"], workdir=tmp_path)
    _passed(run_kit(spec))


@pytest.mark.timeout(900)
def test_both_stdio_examples_pass_every_check_again_and_again() -> None:
    specs = [
        BotSpec(
            f"lowest-{i}", command=(sys.executable, "lowest.py"), workdir=STDIO, protocol=BotProtocol.STDIO
        )
        for i in range(REPEATS)
    ] + [
        BotSpec(
            f"first-legal-{i}", command=("sh", "first_legal.sh"), workdir=STDIO, protocol=BotProtocol.STDIO
        )
        for i in range(REPEATS)
    ]

    async def side_by_side() -> list[Report]:
        return list(await asyncio.gather(*(run_kit_async(spec) for spec in specs)))

    for report in asyncio.run(side_by_side()):
        _passed(report)
