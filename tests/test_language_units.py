"""The example bots' own unit tests (their strategy, which rejections they retry, what they do
with a decision kind newer than they are), run with each language's own test runner."""

from __future__ import annotations

import os
import subprocess

import pytest

from tests.conftest import ROOT
from tests.helpers.toolchains import built_bot

#: The command that runs a language's unit tests in its folder, after one build.
RUNNERS = {
    "go": ["go", "test", "./..."],
    "rust": ["cargo", "test", "--release", "--locked", "--quiet", "-j2"],
}


@pytest.mark.timeout(1800)
@pytest.mark.parametrize("language", sorted(RUNNERS))
def test_the_example_bots_own_unit_tests_pass(language: str) -> None:
    built_bot(language)  # generates the protocol code the tests compile against
    result = subprocess.run(
        RUNNERS[language],
        cwd=ROOT / "clients" / language,
        capture_output=True,
        text=True,
        timeout=1700,
        check=False,
        env={**os.environ, "CARGO_TERM_COLOR": "never"},
    )
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
