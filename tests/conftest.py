"""The suite's tiers, shared fixtures (the conformance vectors, the browser) and the CI rule.

Tiers (docs/TESTING.md): every test is in the unit tier (``make check``) unless it is marked
``slow``, ``toolchain``, ``browser`` or ``ray``; :func:`pytest_collection_modifyitems` marks it
by its module (:data:`TIERS`) or by the fixtures it uses (:data:`FIXTURE_TIERS`), and
``tests/test_tiers.py`` fails when a module in the unit tier uses what starts toolchains,
sandboxed tournaments, browsers or Ray.

Under ``CI=true`` a skipped test fails the run (:func:`pytest_runtest_makereport`): a test skips
only when a toolchain is absent, and CI must have every toolchain, so a skip there hides a gap.
"""

from __future__ import annotations

import os
from collections.abc import Generator, Iterable, Iterator
from fnmatch import fnmatch
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


#: The tiers of whole test modules (by name without ``.py``; a name may be a glob pattern, as
#: ``test_fair_play_*``), beyond what their fixtures say. ``toolchain``: builds an example bot, a
#: runtime, a wheel or generated code; ``slow``: plays through the real runner or sandbox, starts
#: servers and leagues, or computes for long; ``browser`` and ``ray`` also come from fixtures.
TIERS: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(
        (
            "test_codegen_recipes",
            "test_kit_examples",
            "test_language_bots",
            "test_language_tournament",
            "test_language_units",
            "test_portal_docs",
            "test_relative_paths",
            "test_runtime_portal",
            "test_runtime_tournament",
            "test_sdk_install",
            "test_sim_wheel",
            "test_warm_tournament",
        ),
        ("toolchain",),
    ),
    **dict.fromkeys(("test_ray", "test_league_ray"), ("ray",)),
    **dict.fromkeys(
        (
            "test_entrant_browser",
            "test_portal_browser",
            "test_season_browser",
            "test_web_browser",
            "test_web_narrow",
        ),
        ("browser",),
    ),
    **dict.fromkeys(
        (
            "test_cli_startup",
            "test_declared_names",
            "test_doc_*",
            "test_doctor",
            "test_entrant_pages",
            "test_fair_play_*",
            "test_fault_integrity",
            "test_gauntlet",
            "test_hostile_sandbox",
            "test_hostile_secrets",
            "test_hosting",
            "test_kit",
            "test_kit_mutants",
            "test_kit_seam",
            "test_league_season",
            "test_league_stop",
            "test_luck",
            "test_league",
            "test_leak_live",
            "test_figures_rerun",
            "test_newcomer",
            "test_policy_options",
            "test_portal_accounts",
            "test_portal_hostile",
            "test_portal_notify",
            "test_portal_resources",
            "test_portal_sessions",
            "test_portal_submit",
            "test_portal_token",
            "test_preflight",
            "test_record_cli",
            "test_referee_closed",
            "test_referee_unjoined",
            "test_resume_config",
            "test_runner_disk",
            "test_runner_kill",
            "test_runtimes",
            "test_schedule",
            "test_seating_neighbours",
            "test_separation",
            "test_server_e2e",
            "test_sessions",
            "test_sim_api",
            "test_sim_worlds",
            "test_snapshot",
            "test_stdio_tournament",
            "test_tournament_config",
            "test_tournament_faults",
            "test_tournament_run",
            "test_verdicts",
            "test_verify_modes",
            "test_web",
            "test_web_cache",
            "test_web_logs",
            "test_web_registry",
        ),
        ("slow",),
    ),
}
#: A test that uses one of these fixtures (directly or through another fixture) is in its tier.
FIXTURE_TIERS = {"browser": "browser", "ray_module": "ray"}
#: The marks of the tiers beyond the unit tier, as ``pyproject.toml`` registers them.
TIER_MARKS = ("slow", "toolchain", "browser", "ray")
#: The order the tiers start in, the longest first: a whole run (``make test``) hands its tests
#: to its workers in collection order, and would otherwise end waiting on a long test that
#: started last, the other worker idle.
FIRST = ("toolchain", "ray", "browser", "slow")
#: ``pytest -m`` for the unit tier: what ``make check`` runs.
UNIT = " and ".join(f"not {mark}" for mark in TIER_MARKS)


def tiers_of(module: str, fixtures: Iterable[str]) -> set[str]:
    """The tiers of a test in ``module`` that uses ``fixtures`` (empty: the unit tier)."""
    by_name = (tier for pattern, tiers in TIERS.items() if fnmatch(module, pattern) for tier in tiers)
    return {*by_name, *(FIXTURE_TIERS[name] for name in fixtures if name in FIXTURE_TIERS)}


@pytest.hookimpl(tryfirst=True)  # before ``-m`` deselects by these marks
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Marks each test with its tiers, and puts the modules of the longer tiers first."""
    rank: dict[str, int] = {}
    for item in items:
        path = item.nodeid.partition("::")[0]
        tiers = tiers_of(path.rpartition("/")[2].removesuffix(".py"), getattr(item, "fixturenames", ()))
        for tier in sorted(tiers):
            item.add_marker(tier)
        rank[path] = min([rank.get(path, len(FIRST)), *(FIRST.index(tier) for tier in tiers)])
    # Stable: each module's tests stay together and in order (its module fixtures are made once).
    items.sort(key=lambda item: rank[item.nodeid.partition("::")[0]])


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
