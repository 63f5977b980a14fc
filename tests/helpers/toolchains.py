"""What outside the Python environment a test needs: the example bots' toolchains, their builds,
and bubblewrap. A missing one skips the test with a line naming it, except under ``CI=true``,
where it fails (CI has every toolchain, so a skip there would hide a gap).

A test that calls :func:`built_bot` or :func:`require_toolchain` belongs to the ``toolchain``
tier (``tests/conftest.py``; ``tests/test_tiers.py`` checks it).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import NoReturn

import pytest

from hearts_tournaments.arena.sandbox import find_bwrap

ROOT = Path(__file__).resolve().parents[2]

#: The tools each example bot (``clients/<language>``) builds with.
TOOLCHAINS = {
    "go": ["go"],
    "rust": ["cargo"],
    "java": ["java", "mvn"],
    "typescript": ["node", "npm"],
    "cpp": ["g++", "cmake"],
}
LANGUAGES = sorted(TOOLCHAINS)


def absent(message: str) -> NoReturn:
    """Skips for a missing toolchain, except under CI=true, where it fails."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"{message} (CI=true: a missing toolchain fails)")
    pytest.skip(message)


def require(tools: list[str], what: str) -> None:
    """Skips (fails under CI=true) unless every tool is on PATH."""
    missing = [tool for tool in tools if shutil.which(tool) is None]
    if missing:
        absent(f"{what} needs {', '.join(missing)} on PATH")


def require_toolchain(language: str) -> None:
    require(TOOLCHAINS[language], f"{language} bot")


_built: set[str] = set()


def built_bot(language: str) -> Path:
    """The bot's roster command, after one build per test session (a no-op when up to date).

    The bot then runs with a minimal environment, where it could not build itself.
    """
    require_toolchain(language)
    folder = ROOT / "clients" / language
    if language not in _built:
        build = subprocess.run([str(folder / "build")], capture_output=True, text=True, timeout=900)
        assert build.returncode == 0, build.stderr[-3000:]
        _built.add(language)
    return folder / "bot"


def require_bwrap() -> None:
    """Skips (fails under CI=true) without bubblewrap, or where it cannot make namespaces."""
    bwrap = find_bwrap()
    if bwrap is None:
        absent("bwrap is missing: apt-get install bubblewrap")
    probe = subprocess.run([bwrap, "--unshare-all", "--ro-bind", "/", "/", "true"], capture_output=True)
    if probe.returncode != 0:
        absent(f"bwrap cannot create namespaces here: {probe.stderr.decode(errors='replace').strip()}")
