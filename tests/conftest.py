"""Shared fixtures: the conformance vectors (the repository's copy) and the browser.

Under ``CI=true`` a skipped test fails the run (:func:`pytest_runtest_makereport`): a test skips
only when a toolchain is absent, and CI must have every toolchain, so a skip there hides a gap.
"""

from __future__ import annotations

import os
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent.parent
#: The project's own copy of the public conformance vectors (and their README).
CONFORMANCE = ROOT / "tests" / "conformance"
VECTORS = sorted((CONFORMANCE / "vectors").glob("*.json"))
#: The upstream copy, when a checkout has it beside it: the repository's copy must match it.
UPSTREAM_CONFORMANCE = Path(os.environ.get("HEARTS_SHARED", ROOT.parent / "shared")) / "conformance"


def ci() -> bool:
    """Whether this run is CI, where every toolchain must be present and nothing may skip."""
    return os.environ.get("CI") == "true"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Under ``CI=true`` a skip (not an expected failure) is reported as a failure, with its reason."""
    report: pytest.TestReport = yield
    if report.skipped and not hasattr(report, "wasxfail") and ci():
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        reason = reason.removeprefix("Skipped: ")
        report.outcome = "failed"
        report.longrepr = f"skipped under CI=true, where nothing may skip: {reason}"
    return report


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Chromium driven by Playwright, one per test module (tests/helpers/browser.py)."""
    from tests.helpers.browser import launch_browser

    yield from launch_browser()


@pytest.fixture(scope="session")
def vectors() -> list[Path]:
    if not VECTORS:
        pytest.fail(f"no conformance vectors under {CONFORMANCE}")
    return VECTORS
