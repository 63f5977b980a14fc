"""Shared fixtures: the conformance vectors (the repository's copy), and how to run the ``hearts`` CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: The project's own copy of the public conformance vectors (and their README).
CONFORMANCE = ROOT / "tests" / "conformance"
VECTORS = sorted((CONFORMANCE / "vectors").glob("*.json"))
#: The upstream copy, when a checkout has it beside it: the repository's copy must match it.
UPSTREAM_CONFORMANCE = Path(os.environ.get("HEARTS_SHARED", ROOT.parent / "shared")) / "conformance"


def hearts(*args: str, input: str | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Runs the real ``hearts`` CLI in a subprocess, as a user would."""
    return subprocess.run(
        [sys.executable, "-m", "hearts_tournaments", *args],
        capture_output=True,
        text=True,
        input=input,
        timeout=timeout,
        check=False,
    )


@pytest.fixture(scope="session")
def vectors() -> list[Path]:
    if not VECTORS:
        pytest.fail(f"no conformance vectors under {CONFORMANCE}")
    return VECTORS
