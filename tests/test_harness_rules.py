"""The suite's own rules: under CI=true nothing skips, and every test has a time limit."""

from __future__ import annotations

import pytest

SKIPPING = """
import pytest

def test_needs_a_toolchain():
    pytest.skip("frob needs the frobnicator on PATH")

@pytest.mark.skipif(True, reason="openssl is needed")
def test_marked():
    pass

@pytest.mark.xfail(reason="known")
def test_expected_failure():
    assert False
"""


@pytest.mark.parametrize("ci", ["true", "", "1"])
def test_a_skip_fails_the_run_only_under_ci_true(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, ci: str
) -> None:
    pytester.makeconftest("from tests.conftest import pytest_runtest_makereport  # noqa: F401\n")
    pytester.makepyfile(SKIPPING)
    monkeypatch.setenv("CI", ci)
    result = pytester.runpytest("-p", "no:xdist", "-p", "no:timeout", "-ra")
    if ci == "true":
        # A skip in the test fails it; a skip mark (decided at setup) makes it an error.
        result.assert_outcomes(failed=1, errors=1, xfailed=1)
        result.stdout.fnmatch_lines(
            [
                "ERROR *test_marked - skipped under CI=true, where nothing may skip: openssl is needed",
                "FAILED *test_needs_a_toolchain - skipped under CI=true, * frob needs *",
            ],
            consecutive=False,
        )
    else:
        result.assert_outcomes(skipped=2, xfailed=1)


def test_every_test_has_a_time_limit(pytestconfig: pytest.Config) -> None:
    assert pytestconfig.pluginmanager.hasplugin("timeout"), "pytest-timeout is not installed"
    assert float(pytestconfig.getini("timeout")) > 0
    assert pytestconfig.getini("timeout_method") == "thread"
